package wire

import (
	"net"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request is one decoded request received by a Server, with its header and
// the connection it came on.
type Request struct {
	// Body is the decoded request; its version is the request's.
	Body kmsg.Request
	// CorrelationID is the header's correlation id.
	CorrelationID int32
	// ClientID is the header's client id ("" when null), e.g.
	// "kraftlab-node-1" for our own Client.
	ClientID string
	// Peer is the remote address of the connection.
	Peer net.Addr
	// ConnID identifies the connection within its server.
	ConnID uint64
	// Member reports that the connection authenticated as a member of
	// the playground, or that the server has no secret (everyone is).
	Member bool
	// Principal is who the connection authenticated as: MemberPrincipal,
	// or AnonymousPrincipal.
	Principal string

	conn *serverConn
	// pools are the pools the request is charged to.
	pools *pools
	// answered, resp, held and charge are guarded by conn.mu.
	answered bool
	resp     kmsg.Response
	// closeAfter closes the connection once resp is written, as Kafka
	// does after a failed authentication.
	closeAfter bool
	held       int64 // bytes charged to the frame pool until written
	charge     int64 // bytes charged to the decode pool until written
	// envelope, if set, is the Envelope this request came in: its answer
	// goes back inside it (respondInEnvelope).
	envelope         *Request
	envelopeAnswered atomic.Bool
}

// Key returns the request's API key.
func (r *Request) Key() int16 { return r.Body.Key() }

// Version returns the request's API version.
func (r *Request) Version() int16 { return r.Body.GetVersion() }

// Respond answers the request, once, from any goroutine. It sets resp's
// version to the request's. A nil resp sends nothing (Produce with acks=0
// expects no response) but lets the responses behind it go. Responding
// after the connection closed is a no-op; responding with a response of
// another API closes the connection.
func (r *Request) Respond(resp kmsg.Response) {
	c := r.conn
	if resp != nil {
		if resp.Key() != r.Key() {
			c.s.log.Error("closing connection: handler answered with the wrong API",
				"peer", r.Peer.String(), "request", apiName(r.Key()), "response", apiName(resp.Key()))
			c.close()
			r.abandon()
			return
		}
		resp.SetVersion(r.Version())
	}
	if r.envelope != nil {
		r.respondInEnvelope(resp)
		return
	}
	c.mu.Lock()
	if r.answered {
		c.mu.Unlock()
		c.s.log.Error("request answered twice; keeping the first answer",
			"peer", r.Peer.String(), "api", apiName(r.Key()), "correlation_id", r.CorrelationID)
		return
	}
	r.answered, r.resp = true, resp
	if c.dead {
		c.releaseLocked(r) // nobody will write it
	} else if len(c.queue) > 0 && c.queue[0] == r {
		c.startWriter()
	}
	c.mu.Unlock()
}

// abandon gives back what a request holds when it will never be
// answered: its connection closed on the server's own decision.
func (r *Request) abandon() {
	if r.envelope != nil {
		r.envelope.abandon()
		return
	}
	c := r.conn
	c.mu.Lock()
	r.answered = true
	c.releaseLocked(r)
	c.mu.Unlock()
}

// Closed returns a channel that is closed when the request's connection
// closes, so a parked request can be dropped early.
func (r *Request) Closed() <-chan struct{} { return r.conn.closed }

// signal wakes the goroutine waiting on ch, a channel of capacity one,
// without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
