package engine_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/replication/wire"
)

// TestHostileScramNonce: connections start a SCRAM login with a huge
// client nonce and never finish it. The review saw each hold about 5 MB
// until the 10-minute idle timeout (1,000 of them took the process from
// 1.6 to 5.2 GB): the server answered with a server-first message that
// repeats the nonce and kept the exchange. Now a 1 MB SaslAuthenticate is
// over sasl.server.max.receive.size and closes the connection unread, and
// a 100 KB nonce is refused (after connection.failed.authentication.delay.ms)
// and the connection closed.
func TestHostileScramNonce(t *testing.T) {
	ht := openHostile(t)
	addr := ht.controllers[0]
	rssBefore := residentBytes(t)
	const logins = 150
	var answered, refused, closed atomic.Int32
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range logins {
		nonce := strings.Repeat("n", 1_000_000)
		if i%2 == 0 {
			nonce = nonce[:100_000]
		}
		h := dialHostile(t, addr)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			hs := kmsg.NewPtrSASLHandshakeRequest()
			hs.Version, hs.Mechanism = 1, wire.MemberMechanismName
			h.send(hs, "scram")
			if _, err := h.recv(hs, 10*time.Second); err != nil {
				t.Errorf("SaslHandshake: %v", err)
				return
			}
			auth := kmsg.NewPtrSASLAuthenticateRequest()
			auth.Version = 1
			auth.SASLAuthBytes = []byte("n,,n=" + wire.MemberUser + ",r=" + nonce)
			h.send(auth, "scram")
			switch resp, err := h.recv(auth, 10*time.Second); {
			case err != nil:
				closed.Add(1) // refused unread
			case resp.(*kmsg.SASLAuthenticateResponse).ErrorCode == 0:
				answered.Add(1)
				return
			default:
				refused.Add(1)
			}
			if !h.closedWithin(5 * time.Second) {
				t.Errorf("the server kept a connection open after refusing its nonce")
			}
		})
	}
	wg.Wait()
	t.Logf("%d logins with a 1 MB or 100 KB nonce: %d answered with a server-first message, %d refused, %d closed unanswered; resident memory %d → %d MiB",
		logins, answered.Load(), refused.Load(), closed.Load(), rssBefore>>20, residentBytes(t)>>20)
	if n := answered.Load(); n > 0 {
		t.Errorf("%d of %d client-first messages with a huge nonce were answered", n, logins)
	}
	ht.checkServing(t, "after logins with huge nonces")
}
