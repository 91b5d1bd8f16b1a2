package wire

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authState is where a server connection is in authenticating.
type authState uint8

const (
	// authNone: nothing but ApiVersions yet; SaslHandshake may come.
	authNone authState = iota
	// authHandshaking: SaslHandshake accepted; only SaslAuthenticate
	// may follow until the exchange completes.
	authHandshaking
	// authMember: the connection proved it holds the secret.
	authMember
	// authAnonymous: the connection started without SASL, as users'
	// own Kafka clients do.
	authAnonymous
)

// errCloseAfter makes the reader stop: a refusal is queued and the
// writer closes the connection once it is out.
var errCloseAfter = errors.New("closing after the response")

// closeAfterTimeout bounds how long a refused connection stays open for
// its last response to leave.
const closeAfterTimeout = 10 * time.Second

// authFailedMessage is what a client is told when its credentials are
// refused: Kafka's words, nothing that helps guess them.
const authFailedMessage = "Authentication failed during authentication due to invalid credentials with SASL mechanism " + MemberMechanismName

// serveSASL answers SaslHandshake and SaslAuthenticate, as Kafka's
// SaslServerAuthenticator does before a connection is authenticated and
// KafkaApis after (ILLEGAL_SASL_STATE). A refused authentication is
// answered after FailedAuthenticationDelay, then the connection closes.
func (c *serverConn) serveSASL(req *Request) error {
	switch body := req.Body.(type) {
	case *kmsg.SASLHandshakeRequest:
		resp := body.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{MemberMechanismName}
		switch {
		case c.auth != authNone:
			// Authenticated, anonymous, or a second handshake.
			c.s.counters.authFailed.Add(1)
			resp.ErrorCode = kerr.IllegalSaslState.Code
			c.s.plog.info("refused authentication: SaslHandshake on a connection past its start", "peer", c.peer)
			c.push(req, resp)
			return nil
		case body.Mechanism != MemberMechanismName:
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			return c.failAuth(req, resp, "refused authentication: unsupported SASL mechanism", "mechanism", body.Mechanism)
		}
		c.auth, c.scram = authHandshaking, &scramServer{cred: c.s.cred}
		if d := c.s.cfg.AuthenticationTimeout; d > 0 && c.authDeadline.IsZero() {
			c.authDeadline = time.Now().Add(d)
		}
		c.push(req, resp)
		return nil

	case *kmsg.SASLAuthenticateRequest:
		resp := body.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if c.auth != authHandshaking {
			resp.ErrorCode = kerr.IllegalSaslState.Code
			msg := "SaslAuthenticate request received without a SaslHandshake"
			if c.auth == authNone {
				// On Kafka's SASL listener this is a failed
				// authentication (IllegalSaslStateException).
				resp.ErrorMessage = &msg
				return c.failAuth(req, resp, "refused authentication: "+msg)
			}
			// KafkaApis answers it on a connection past its start.
			c.s.counters.authFailed.Add(1)
			if c.auth == authMember {
				msg = "SaslAuthenticate request received after successful authentication"
			}
			resp.ErrorMessage = &msg
			c.s.plog.info("refused authentication: "+msg, "peer", c.peer)
			c.push(req, resp)
			return nil
		}
		out, done, err := c.scram.next(body.SASLAuthBytes)
		if err != nil {
			c.scram = nil
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			msg := authFailedMessage
			resp.ErrorMessage = &msg
			return c.failAuth(req, resp, "refused authentication", "err", err)
		}
		resp.SASLAuthBytes = out
		if done {
			c.auth, c.scram, c.authDeadline = authMember, nil, time.Time{}
			c.s.counters.authenticated.Add(1)
			c.s.log.Debug("member authenticated", "peer", c.peer, "principal", MemberPrincipal)
			c.promote()
		}
		c.push(req, resp)
		return nil
	}
	return nil
}

// failAuth counts and logs a failed authentication, and answers req with
// resp after FailedAuthenticationDelay, as Kafka's Selector delays the
// failure and then closes the channel: a guesser gets one try per
// connection and per delay. The request gives its charges back at once:
// it holds nothing but its small answer while it waits.
func (c *serverConn) failAuth(req *Request, resp kmsg.Response, msg string, args ...any) error {
	c.s.counters.authFailed.Add(1)
	c.s.plog.info(msg, append([]any{"peer", c.peer}, args...)...)
	c.mu.Lock()
	c.releaseLocked(req)
	c.mu.Unlock()
	if d := c.s.cfg.FailedAuthenticationDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.closed:
			t.Stop()
			return errCloseAfter
		}
	}
	c.pushLast(req, resp)
	return errCloseAfter
}
