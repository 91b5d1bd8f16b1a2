package wire

import (
	"fmt"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Versions our Client authenticates with: SaslHandshake v1 (the only one
// Kafka 4 serves) and SaslAuthenticate v1, the first that carries an
// error message and a session lifetime.
const (
	clientSaslHandshakeVersion    = 1
	clientSaslAuthenticateVersion = 1
)

// authenticate runs the client's SASL mechanism on a fresh connection
// before any queued request is written, as Kafka's
// SaslClientAuthenticator does: SaslHandshake with the mechanism's name,
// then SaslAuthenticate until the mechanism is done. Every message goes
// through the link and the counters like a request. It reports false once
// the connection is dead; a refusal kills it with an error wrapping the
// Kafka error the server gave.
func (cc *clientConn) authenticate(timer *clock.Timer) ([]byte, bool) {
	cl := cc.cl
	mech := cl.cfg.SASL
	ctx, cancel := cl.cfg.Clock.WithDeadline(cc.ctx, cc.setupDeadline)
	defer cancel()
	var buf []byte
	fail := func(err error) ([]byte, bool) {
		cc.die(fmt.Errorf("authenticate to %s with %s: %w", cl.name, mech.Name(), err))
		return buf, false
	}
	// refused fails the connection with the server's refusal, even if
	// the server's close was seen first: the refusal says why.
	refused := func(err error) ([]byte, bool) {
		err = fmt.Errorf("authenticate to %s with %s: %w", cl.name, mech.Name(), err)
		cc.mu.Lock()
		if cc.err != nil {
			cc.err = err // the calls fail with it once the writer returns
		}
		cc.mu.Unlock()
		cc.die(err)
		return buf, false
	}
	// roundTrip sends one SASL request and waits for its response.
	roundTrip := func(req kmsg.Request) (kmsg.Response, bool) {
		k := &call{req: req, corr: cl.nextCorr(), reply: make(chan reply, 1), at: cl.cfg.Clock.Now()}
		cc.mu.Lock()
		if cc.err != nil {
			cc.mu.Unlock()
			return nil, false
		}
		cc.pending[k.corr] = k
		cc.mu.Unlock()
		var ok bool
		if buf, ok = cc.writeBatch([]*call{k}, buf, timer, false); !ok {
			return nil, false
		}
		var r reply
		select {
		case r = <-k.reply:
		case <-ctx.Done(): // a deadline, or the connection died
		}
		if r.resp == nil && r.err == nil {
			// A server that refuses answers, then closes: an answer
			// read before the close says why.
			select {
			case r = <-k.reply:
			default:
				if ctx.Err() != nil && cc.isAlive() {
					cc.finish(k, nil, ctx.Err())
					fail(fmt.Errorf("%s not answered within %v: %w", apiName(req.Key()), cl.cfg.DialTimeout, ctx.Err()))
				}
				return nil, false
			}
		}
		if r.err != nil {
			fail(r.err)
			return nil, false
		}
		return r.resp, true
	}

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = clientSaslHandshakeVersion, mech.Name()
	r, ok := roundTrip(hs)
	if !ok {
		return buf, false
	}
	if hr := r.(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
		return refused(fmt.Errorf("SaslHandshake (server offers %v): %w", hr.SupportedMechanisms, kerr.ErrorForCode(hr.ErrorCode)))
	}
	session, msg, err := mech.Authenticate(ctx, cl.cfg.Addr)
	if err != nil {
		return fail(err)
	}
	for {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = clientSaslAuthenticateVersion, msg
		r, ok := roundTrip(req)
		if !ok {
			return buf, false
		}
		ar := r.(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode != 0 {
			err := kerr.ErrorForCode(ar.ErrorCode)
			if ar.ErrorMessage != nil {
				return refused(fmt.Errorf("%w: %s", err, *ar.ErrorMessage))
			}
			return refused(err)
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return refused(err)
		}
		if done && len(next) == 0 {
			cl.log.Debug("authenticated", "mechanism", mech.Name())
			return buf, true
		}
		msg = next
	}
}

func (cc *clientConn) isAlive() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err == nil
}
