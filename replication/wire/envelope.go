package wire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EnvelopeAPI is Envelope (API 58): a broker forwarding a client's request
// to the active controller wraps it, with the client's principal and
// address, as Kafka's ForwardingManager does. Only members may send one:
// Kafka asks CLUSTER_ACTION of the envelope's sender.
var EnvelopeAPI = APIRange{Key: kmsg.Envelope.Int16(), MinVersion: 0, MaxVersion: 0, MembersOnly: true}

// ServeEnvelopes routes Envelope to a handler that opens each envelope,
// hands the request inside to the API that serves it here as the
// forwarded client's own (not a member's: the principal is the client's),
// and wraps the answer, as Kafka's ControllerApis.handleEnvelopeRequest
// does. Call it after every other API is registered; the APIs registered
// by then are the ones an envelope may carry.
func (m *Mux) ServeEnvelopes() error {
	inner := make(map[int16]route, len(m.routes))
	for k, r := range m.routes {
		inner[k] = r
	}
	return m.Handle(EnvelopeAPI, HandlerFunc(func(req *Request) { serveEnvelope(req, inner) }))
}

func serveEnvelope(outer *Request, routes map[int16]route) {
	env, ok := outer.Body.(*kmsg.EnvelopeRequest)
	if !ok {
		outer.conn.close()
		outer.abandon()
		return
	}
	fail := func(code int16, why string) {
		outer.conn.s.plog.info("refused an envelope", "peer", outer.Peer.String(), "error", kerr.ErrorForCode(code), "why", why)
		resp := kmsg.NewPtrEnvelopeResponse()
		resp.ErrorCode = code
		outer.Respond(resp)
	}
	h, body, rest, err := parseRequest(env.RequestData)
	if err != nil {
		fail(kerr.InvalidRequest.Code, err.Error())
		return
	}
	r, ok := routes[h.key]
	switch {
	case !ok || h.key == EnvelopeAPI.Key:
		fail(kerr.InvalidRequest.Code, fmt.Sprintf("%s is not served here", apiName(h.key)))
		return
	case h.version < r.api.MinVersion || h.version > r.api.MaxVersion:
		fail(kerr.UnsupportedVersion.Code, fmt.Sprintf("%s v%d is not served here", apiName(h.key), h.version))
		return
	}
	if err := decodeBody(body, rest); err != nil {
		fail(kerr.InvalidRequest.Code, fmt.Sprintf("decode %s v%d: %v", apiName(h.key), h.version, err))
		return
	}
	in := &Request{
		Body: body, CorrelationID: h.correlationID, ClientID: string(h.clientID),
		Peer: outer.Peer, ConnID: outer.ConnID, Principal: AnonymousPrincipal,
		conn: outer.conn, envelope: outer,
	}
	if r.api.MembersOnly {
		resp, _ := errorResponse(body, kerr.ClusterAuthorizationFailed.Code)
		in.Respond(resp)
		return
	}
	r.h.ServeKafka(in)
}

// respondInEnvelope wraps inner's answer, with its response header, in the
// envelope it came in.
func (r *Request) respondInEnvelope(resp kmsg.Response) {
	if r.envelopeAnswered.Swap(true) {
		r.conn.s.log.Error("forwarded request answered twice; keeping the first answer", "api", apiName(r.Key()))
		return
	}
	out := kmsg.NewPtrEnvelopeResponse()
	if resp == nil {
		// An acks=0 Produce expects nothing; an envelope always answers.
		out.ErrorCode = kerr.InvalidRequest.Code
		r.envelope.Respond(out)
		return
	}
	b := kbin.AppendInt32(nil, r.CorrelationID)
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		b = kbin.AppendUvarint(b, 0) // response header v1: no tagged fields
	}
	out.ResponseData = resp.AppendTo(b)
	r.envelope.Respond(out)
}
