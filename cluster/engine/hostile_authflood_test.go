package engine_test

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/replication/wire"
)

// lineCounter counts the lines written to it.
type lineCounter struct{ n atomic.Int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

// TestHostileAuthFlood: SaslAuthenticate requests without a handshake,
// then logins with a wrong proof. The review saw 20,000 of the first in
// 143 ms write 20,000 log lines (26 MB/s), and 3,000 wrong passwords
// refused in 1.4 s without a pause. Kafka delays the answer to a failed
// authentication (connection.failed.authentication.delay.ms, 100 ms) and
// then closes; the log now counts refusals and writes a bounded number of
// lines.
func TestHostileAuthFlood(t *testing.T) {
	lines := &lineCounter{}
	ht := openHostileWith(t, nil, slog.New(slog.NewTextHandler(lines, &slog.HandlerOptions{Level: slog.LevelInfo})))
	addr := ht.controllers[0]
	before := lines.n.Load()

	// 20,000 SaslAuthenticate without a handshake, on one connection.
	h := dialHostile(t, addr)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	var flood []byte
	for range 20000 {
		flood = append(flood, h.frame(auth, "flood")...)
	}
	h.SetWriteDeadline(time.Now().Add(10 * time.Second))
	h.Write(flood) // the server may close before it has read them all
	h.closedWithin(10 * time.Second)
	afterFlood := lines.n.Load()

	// Logins with a wrong proof, twenty at a time.
	const logins = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fastest time.Duration = time.Hour
	sem := make(chan struct{}, 20)
	for range logins {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d, err := wrongProof(t, addr)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			fastest = min(fastest, d)
			mu.Unlock()
		})
	}
	wg.Wait()
	afterLogins := lines.n.Load()
	t.Logf("log lines: %d for 20,000 SaslAuthenticate without a handshake, %d for %d wrong proofs; fastest refusal %v",
		afterFlood-before, afterLogins-afterFlood, logins, fastest.Round(time.Millisecond))
	if n := afterLogins - before; n > 100 {
		t.Errorf("the floods wrote %d log lines", n)
	}
	if fastest < 100*time.Millisecond {
		t.Errorf("a wrong proof was refused after %v, before connection.failed.authentication.delay.ms (100 ms)", fastest)
	}
	ht.checkServing(t, "after the floods")
}

// wrongProof logs in as the member with a proof that cannot be right and
// returns how long the refusal took to come.
func wrongProof(t *testing.T, addr string) (time.Duration, error) {
	h := dialHostile(t, addr)
	defer h.Close()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, wire.MemberMechanismName
	h.send(hs, "guess")
	if _, err := h.recv(hs, 10*time.Second); err != nil {
		return 0, err
	}
	first := kmsg.NewPtrSASLAuthenticateRequest()
	first.Version = 1
	first.SASLAuthBytes = []byte("n,,n=" + wire.MemberUser + ",r=guessnonce")
	h.send(first, "guess")
	resp, err := h.recv(first, 10*time.Second)
	if err != nil {
		return 0, err
	}
	serverFirst := string(resp.(*kmsg.SASLAuthenticateResponse).SASLAuthBytes)
	nonce, _, _ := strings.Cut(strings.TrimPrefix(serverFirst, "r="), ",")
	final := kmsg.NewPtrSASLAuthenticateRequest()
	final.Version = 1
	final.SASLAuthBytes = []byte("c=biws,r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))
	start := time.Now()
	h.send(final, "guess")
	resp, err = h.recv(final, 10*time.Second)
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	if code := resp.(*kmsg.SASLAuthenticateResponse).ErrorCode; code == 0 {
		t.Errorf("a wrong proof was accepted")
	}
	return took, nil
}
