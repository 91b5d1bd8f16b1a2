package engine_test

import (
	"encoding/binary"
	"testing"
	"time"
)

// TestHostileSlowloris: forty connections to each controller announce a
// 1 MiB frame and send it a byte at a time. The review saw no quorum
// leader for 45 s and over 2,000 elections: the announced frames were
// charged to the request pool whole, before their bytes came, and the
// quorum's own Fetches waited behind them.
func TestHostileSlowloris(t *testing.T) {
	ht := openHostile(t)
	v := ht.p.View()
	leader, _ := v.Leader()
	epoch := leader.Epoch
	var conns []*hostileConn
	for _, addr := range ht.controllers {
		for range 40 {
			h := dialHostile(t, addr)
			var size [5]byte
			binary.BigEndian.PutUint32(size[:], 1<<20)
			size[4] = 0 // the first byte of the API key
			if _, err := h.Write(size[:]); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, h)
		}
	}
	// Trickle a byte a second on every connection while the checks run.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, h := range conns {
					h.Write([]byte{1})
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()

	// Watch the quorum for three seconds of the attack.
	watch := time.NewTicker(50 * time.Millisecond)
	defer watch.Stop()
	samples, leaderless, last := 0, 0, epoch
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); <-watch.C {
		v := ht.p.View()
		samples++
		if l, ok := v.Leader(); ok {
			last = max(last, l.Epoch)
		} else {
			leaderless++
		}
	}
	t.Logf("3 s of the attack: epoch %d to %d, no leader in %d of %d samples", epoch, last, leaderless, samples)
	if last > epoch+2 || leaderless > samples/4 {
		t.Errorf("the quorum lost its leader during the attack: epoch %d to %d, no leader in %d of %d samples\n%s",
			epoch, last, leaderless, samples, describeNodes(ht.p))
	}
	ht.checkServing(t, "during the attack")
}
