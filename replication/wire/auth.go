package wire

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Membership. A playground's nodes prove to each other that they belong to
// it with SASL/SCRAM-SHA-256 as MemberUser and the playground's secret, as
// Kafka's controllers and brokers authenticate on the CONTROLLER listener
// (sasl.mechanism.controller.protocol). A Server with a secret accepts
// both kinds of connection on its one listener: one that starts with
// SaslHandshake (after an optional ApiVersions) authenticates and, on
// success, is a member; one that starts with anything else is anonymous,
// as users' own Kafka clients are.
const (
	// MemberUser is the SCRAM user name members authenticate as.
	MemberUser = "kraftlab-member"
	// MemberMechanismName is the SASL mechanism members use.
	MemberMechanismName = "SCRAM-SHA-256"
	// MemberPrincipal is the principal of an authenticated member's
	// requests, in Kafka's "type:name" form.
	MemberPrincipal = "User:" + MemberUser
	// AnonymousPrincipal is the principal of a connection that did not
	// authenticate, Kafka's KafkaPrincipal.ANONYMOUS.
	AnonymousPrincipal = "User:ANONYMOUS"
)

// scramIterations is the PBKDF2 iteration count of a server's stored
// credential: Kafka's minimum (and default) for SCRAM-SHA-256.
const scramIterations = 4096

// MemberMechanism returns the SASL mechanism a Client authenticates with as
// a member of the playground whose secret is secret (ClientConfig.SASL),
// or nil for an empty secret.
func MemberMechanism(secret string) sasl.Mechanism {
	if secret == "" {
		return nil
	}
	return scram.Auth{User: MemberUser, Pass: secret}.AsSha256Mechanism()
}

// Refuse answers req with its API's response carrying
// CLUSTER_AUTHORIZATION_FAILED, as Kafka answers a request its authorizer
// denies, and counts it as unauthorized. A handler calls it for a request
// only members may make that it cannot tell by API alone (a Fetch with a
// replica id on a broker); APIs served only to members are refused by the
// Server itself (APIRange.MembersOnly). An API whose response has no
// top-level error code closes the connection instead.
func (r *Request) Refuse() {
	c := r.conn
	c.s.counters.unauthorized.add(r.Key(), 1)
	resp, ok := errorResponse(r.Body, kerr.ClusterAuthorizationFailed.Code)
	if !ok {
		c.s.plog.info("closing connection: unauthorized request that cannot be answered with an error",
			"peer", r.Peer.String(), "api", apiName(r.Key()))
		c.close()
		r.abandon()
		return
	}
	r.Respond(resp)
}

// refusable reports whether errorResponse can answer API key with an error.
func refusable(key int16) bool {
	req := requestForKey(key)
	if req == nil {
		return false
	}
	_, ok := errorResponse(req, kerr.ClusterAuthorizationFailed.Code)
	return ok
}

// errorResponse is req's response with error code, as Kafka's
// AbstractRequest.getErrorResponse builds it: the top-level ErrorCode,
// and for Fetch before v13 the code in every partition asked for too
// (FetchRequest.getErrorResponse). It reports false for an API whose
// response has no top-level ErrorCode.
func errorResponse(req kmsg.Request, code int16) (kmsg.Response, bool) {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if f, ok := req.(*kmsg.FetchRequest); ok {
		r := resp.(*kmsg.FetchResponse)
		r.ErrorCode, r.SessionID = code, f.SessionID
		if f.Version < 13 {
			for _, t := range f.Topics {
				rt := kmsg.NewFetchResponseTopic()
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewFetchResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p.Partition, code
					rp.HighWatermark = -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				r.Topics = append(r.Topics, rt)
			}
		}
		return r, true
	}
	v := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	if !v.IsValid() || v.Kind() != reflect.Int16 || !v.CanSet() {
		return nil, false
	}
	v.SetInt(int64(code))
	return resp, true
}
