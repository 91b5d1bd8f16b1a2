package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// envelopeOf wraps req as a forwarding broker does: a request header
// (correlation id, client id, tagged fields when flexible) and the body.
func envelopeOf(req kmsg.Request, corr int32, clientID string) *kmsg.EnvelopeRequest {
	b := kbin.AppendInt16(nil, req.Key())
	b = kbin.AppendInt16(b, req.GetVersion())
	b = kbin.AppendInt32(b, corr)
	b = kbin.AppendNullableString(b, &clientID)
	if req.IsFlexible() {
		b = kbin.AppendUvarint(b, 0)
	}
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData = req.AppendTo(b)
	env.RequestPrincipal = []byte("User:ANONYMOUS")
	env.ClientHostAddress = []byte{127, 0, 0, 1}
	return env
}

// openEnvelope reads the response an envelope carries: its header's
// correlation id, then the body into resp.
func openEnvelope(t *testing.T, env *kmsg.EnvelopeResponse, resp kmsg.Response) int32 {
	t.Helper()
	if env.ErrorCode != 0 || len(env.ResponseData) < 4 {
		t.Fatalf("envelope: error %d, %d bytes", env.ErrorCode, len(env.ResponseData))
	}
	r := kbin.Reader{Src: env.ResponseData}
	corr := r.Int32()
	if resp.IsFlexible() {
		r.Uvarint()
	}
	if err := resp.ReadFrom(r.Src); err != nil {
		t.Fatalf("the envelope's %s: %v", kmsg.NameForKey(resp.Key()), err)
	}
	return corr
}

// A member's envelope carries a client's request to the API that serves
// it, as that client's (not a member's), and brings the answer back under
// the client's correlation id; a members-only API inside is refused, a
// broken envelope gets INVALID_REQUEST, and a stranger's envelope is
// refused whole.
func TestEnvelopeCarriesAClientsRequest(t *testing.T) {
	var h seen
	mux := NewMux()
	for _, api := range membersOnlyAPIs() {
		if err := mux.Handle(api, h.handler()); err != nil {
			t.Fatal(err)
		}
	}
	if err := mux.ServeEnvelopes(); err != nil {
		t.Fatal(err)
	}
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: mux.APIs(), handler: mux})
	member := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism(testSecret)})

	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	env := do(t, member, envelopeOf(dq, 4242, "kafka-admin")).(*kmsg.EnvelopeResponse)
	got := kmsg.NewPtrDescribeQuorumResponse()
	got.Version = 1
	if corr := openEnvelope(t, env, got); corr != 4242 || len(got.Topics) != 1 {
		t.Fatalf("DescribeQuorum in an envelope: correlation id %d, %+v", corr, got)
	}
	reqs := h.all()
	if len(reqs) != 1 || reqs[0].Member || reqs[0].Principal != AnonymousPrincipal || reqs[0].ClientID != "kafka-admin" {
		t.Fatalf("the handler saw %+v, want the forwarded client's request, not a member's", reqs)
	}

	vote := voteRequest(3, false)
	env = do(t, member, envelopeOf(vote, 7, "x")).(*kmsg.EnvelopeResponse)
	vr := kmsg.NewPtrVoteResponse()
	vr.Version = vote.Version
	if openEnvelope(t, env, vr); vr.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(h.all()) != 1 {
		t.Fatalf("a members-only Vote in an envelope: %+v, want CLUSTER_AUTHORIZATION_FAILED unhandled", vr)
	}

	broken := kmsg.NewPtrEnvelopeRequest()
	broken.RequestData = []byte{0, 55, 0, 1, 0, 0}
	if r := do(t, member, broken).(*kmsg.EnvelopeResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("a broken envelope: error %d, want INVALID_REQUEST", r.ErrorCode)
	}
	nested := envelopeOf(envelopeOf(dq, 1, "x"), 2, "y")
	if r := do(t, member, nested).(*kmsg.EnvelopeResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("an envelope in an envelope: error %d, want INVALID_REQUEST", r.ErrorCode)
	}

	stranger := newClient(t, ClientConfig{From: 9, To: 1, Addr: s.Addr()})
	if r := do(t, stranger, envelopeOf(dq, 1, "x")).(*kmsg.EnvelopeResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("a stranger's envelope: error %d, want CLUSTER_AUTHORIZATION_FAILED", r.ErrorCode)
	}
}
