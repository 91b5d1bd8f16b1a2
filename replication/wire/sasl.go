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
// answered, then the connection closes.
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
			c.s.log.Info("refused authentication: SaslHandshake on a connection past its start", "peer", c.peer)
			c.push(req, resp)
			return nil
		case body.Mechanism != MemberMechanismName:
			c.s.counters.authFailed.Add(1)
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			c.s.log.Info("refused authentication: unsupported SASL mechanism", "peer", c.peer, "mechanism", body.Mechanism)
			c.pushLast(req, resp)
			return errCloseAfter
		}
		c.auth, c.scram = authHandshaking, &scramServer{cred: c.s.cred}
		c.push(req, resp)
		return nil

	case *kmsg.SASLAuthenticateRequest:
		resp := body.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if c.auth != authHandshaking {
			c.s.counters.authFailed.Add(1)
			resp.ErrorCode = kerr.IllegalSaslState.Code
			msg := "SaslAuthenticate request received without a SaslHandshake"
			if c.auth == authMember {
				msg = "SaslAuthenticate request received after successful authentication"
			}
			resp.ErrorMessage = &msg
			c.s.log.Info("refused authentication: "+msg, "peer", c.peer)
			c.push(req, resp)
			return nil
		}
		out, done, err := c.scram.next(body.SASLAuthBytes)
		if err != nil {
			c.s.counters.authFailed.Add(1)
			c.scram = nil
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			msg := authFailedMessage
			resp.ErrorMessage = &msg
			c.s.log.Info("refused authentication", "peer", c.peer, "err", err)
			c.pushLast(req, resp)
			return errCloseAfter
		}
		resp.SASLAuthBytes = out
		if done {
			c.auth, c.scram = authMember, nil
			c.s.counters.authenticated.Add(1)
			c.s.log.Debug("member authenticated", "peer", c.peer, "principal", MemberPrincipal)
		}
		c.push(req, resp)
		return nil
	}
	return nil
}
