package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// chaosRounds is how many kills plain `go test` makes; KRAFTLAB_CHAOS_ROUNDS
// raises it, and KRAFTLAB_CHAOS_SEED replays a run's choice of victims and
// pauses (the machine's timing is not replayed).
const chaosRounds = 8

// TestRealKillsLoseNoAcknowledgedRecord kills voters of a real quorum
// (loopback TCP, logs on disk, fsync before a voter's offset counts) while
// writers append: the leader or a follower, one at a time or a majority at
// once, each brought back after a random pause. At the end every record a
// writer was told committed is in the log at the offset it was told,
// once, and every voter holds the same committed log. It runs in both
// replication modes.
func TestRealKillsLoseNoAcknowledgedRecord(t *testing.T) {
	for _, mode := range []raft.Replication{raft.Pull, raft.Push} {
		t.Run(mode.String(), func(t *testing.T) { testRealKills(t, mode) })
	}
}

func testRealKills(t *testing.T, mode raft.Replication) {
	seed, rounds := uint64(time.Now().UnixNano()), chaosRounds
	if s := os.Getenv("KRAFTLAB_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	if s := os.Getenv("KRAFTLAB_CHAOS_ROUNDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("KRAFTLAB_CHAOS_ROUNDS=%q: want a positive count", s)
		}
		rounds = v
	}
	replay := fmt.Sprintf("KRAFTLAB_CHAOS_SEED=%d go test -run 'TestRealKillsLoseNoAcknowledgedRecord/%v$' ./replication/quorum/", seed, mode)
	t.Logf("seed %d, %d rounds; replay: %s", seed, rounds, replay)
	rng := rand.New(rand.NewPCG(seed, 0))

	c := newTestCluster(t, clusterOpts{voters: 3, flush: storage.FlushAlways, tweak: func(cfg *Config) { cfg.Raft.Replication = mode }})
	c.leader(10 * time.Second)

	acked := map[string]int64{}
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := c.writable()
				if n == nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				v := fmt.Sprintf("w%d-%d", w, i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				off, err := n.appendNow([]byte(v)).Wait(ctx)
				cancel()
				if err == nil {
					mu.Lock()
					acked[v] = off
					mu.Unlock()
				}
			}
		})
	}

	for round := range rounds {
		leader, _ := c.leader(20 * time.Second)
		victims := []int32{leader}
		switch r := rng.IntN(4); {
		case r == 0: // a majority at once: nothing can commit meanwhile
			victims = append(victims, c.voters[(int(leader)+rng.IntN(2))%len(c.voters)])
		case r == 1: // a follower
			victims = []int32{c.voters[(int(leader)+rng.IntN(2))%len(c.voters)]}
		}
		pause := time.Duration(rng.IntN(300)) * time.Millisecond
		t.Logf("round %d: kill %v (leader %d), back after %v", round, victims, leader, pause)
		for _, id := range victims {
			if err := c.nodes[id].Kill(); err != nil {
				t.Fatalf("kill node %d: %v\nreplay: %s", id, err, replay)
			}
		}
		time.Sleep(pause)
		for _, id := range victims {
			c.start(id)
		}
	}
	close(stop)
	wg.Wait()

	// One last record commits everything before it in the final epoch.
	leader, _ := c.leader(20 * time.Second)
	final := c.appendN(leader, 1, 10, 1, "final") + 1
	c.waitFor("every voter to hold the committed log", 20*time.Second, func() bool {
		for _, id := range c.voters {
			if c.nodes[id].Status().HighWatermark < final {
				return false
			}
		}
		return true
	})
	want := c.committedLog(leader, final)
	for _, id := range c.voters {
		if got := c.committedLog(id, final); string(got) != string(want) {
			t.Fatalf("node %d's committed log (%d bytes) differs from leader %d's (%d bytes)\nreplay: %s", id, len(got), leader, len(want), replay)
		}
	}
	at := map[string]int64{}
	err := storage.Batches(want, func(_ int, b *storage.Batch) error {
		if b.IsControl() {
			return nil
		}
		recs, err := b.Records()
		for _, r := range recs {
			v := string(r.Value)
			if _, dup := at[v]; dup {
				return fmt.Errorf("%q is in the log twice", v)
			}
			at[v] = r.Offset
		}
		return err
	})
	if err != nil {
		t.Fatalf("committed log: %v\nreplay: %s", err, replay)
	}
	if len(acked) == 0 {
		t.Fatalf("no append was acknowledged\nreplay: %s", replay)
	}
	for v, off := range acked {
		if got, ok := at[v]; !ok || got != off {
			t.Errorf("%q was acknowledged at offset %d; the committed log has it at %d (present %v)", v, off, got, ok)
		}
	}
	if t.Failed() {
		t.Logf("replay: %s", replay)
	}
	t.Logf("%d records acknowledged, %d in the committed log of %d offsets", len(acked), len(at), final)
}

// writable is a running voter that accepts appends, or nil.
func (c *testCluster) writable() *testNode {
	for _, id := range c.voters {
		if st := c.nodes[id].Status(); st.Running() && st.Writable {
			return c.nodes[id]
		}
	}
	return nil
}
