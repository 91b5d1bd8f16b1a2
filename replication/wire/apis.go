package wire

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka error codes the server itself answers with.
var (
	errUnsupportedVersion  = kerr.UnsupportedVersion.Code
	errInvalidRequest      = kerr.InvalidRequest.Code
	errRebootstrapRequired = kerr.RebootstrapRequired.Code
)

// API keys the server answers itself once it authenticates members.
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// saslAPIs are the SASL versions a server with a secret answers:
// SaslHandshake v1 only (v0, raw tokens without SaslAuthenticate, is gone
// from Kafka 4.0, KIP-896) and every SaslAuthenticate version.
var saslAPIs = []APIRange{
	{Key: saslHandshakeKey, MinVersion: 1, MaxVersion: 1},
	{Key: saslAuthenticateKey, MinVersion: 0, MaxVersion: 2},
}

// APIRange is one API a server serves, by Kafka API key, and the versions of
// it that the server accepts.
type APIRange struct {
	Key        int16
	MinVersion int16
	MaxVersion int16
	// MembersOnly serves the API only to connections that authenticated
	// as members of the playground (see ServerConfig.Secret), as Kafka
	// authorizes CLUSTER_ACTION on the cluster for its raft and
	// controller APIs; anyone else gets the API's response with
	// CLUSTER_AUTHORIZATION_FAILED and the handler never sees the
	// request. The API's response must have a top-level ErrorCode.
	MembersOnly bool
}

// apiTable is the validated set of served ranges.
type apiTable struct {
	byKey [keySlots]struct {
		min, max    int16
		served      bool
		membersOnly bool
	}
	// list is what ApiVersions answers, sorted by key; it is shared by all
	// responses and never modified.
	list []kmsg.ApiVersionsResponseApiKey
}

// newAPITable validates apis and adds ApiVersions, which the server answers
// itself at every version kmsg knows, and with sasl the SASL APIs.
func newAPITable(apis []APIRange, sasl bool) (*apiTable, error) {
	t := &apiTable{}
	all := append(slices.Clone(apis), APIRange{Key: apiVersionsKey, MaxVersion: new(kmsg.ApiVersionsRequest).MaxVersion()})
	if sasl {
		all = append(all, saslAPIs...)
	}
	for i, r := range all {
		req, slot := requestForKey(r.Key), keySlot(r.Key)
		switch {
		case req == nil || slot < 0:
			return nil, fmt.Errorf("API key %d: unknown to kmsg and not kraftlab's", r.Key)
		case r.Key == apiVersionsKey && i < len(apis):
			return nil, fmt.Errorf("API key %d (ApiVersions): answered by the server itself, do not declare it", r.Key)
		case (r.Key == saslHandshakeKey || r.Key == saslAuthenticateKey) && i < len(apis):
			return nil, fmt.Errorf("%s: answered by the server itself when it has a secret, do not declare it", apiName(r.Key))
		case r.MembersOnly && !refusable(r.Key):
			return nil, fmt.Errorf("%s: members only, but its response has no top-level error code to refuse it with", apiName(r.Key))
		case r.MinVersion < 0 || r.MinVersion > r.MaxVersion || r.MaxVersion > req.MaxVersion():
			return nil, fmt.Errorf("%s: versions %d..%d outside 0..%d", apiName(r.Key), r.MinVersion, r.MaxVersion, req.MaxVersion())
		case t.byKey[slot].served:
			return nil, fmt.Errorf("%s: declared twice", apiName(r.Key))
		}
		t.byKey[slot].min, t.byKey[slot].max, t.byKey[slot].served = r.MinVersion, r.MaxVersion, true
		t.byKey[slot].membersOnly = r.MembersOnly
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = r.Key, r.MinVersion, r.MaxVersion
		t.list = append(t.list, k)
	}
	slices.SortFunc(t.list, func(a, b kmsg.ApiVersionsResponseApiKey) int { return int(a.ApiKey) - int(b.ApiKey) })
	return t, nil
}

func (t *apiTable) serves(key, version int16) bool {
	slot := keySlot(key)
	if slot < 0 {
		return false
	}
	r := t.byKey[slot]
	return r.served && version >= r.min && version <= r.max
}

// membersOnly reports whether key is served to members only.
func (t *apiTable) membersOnly(key int16) bool {
	slot := keySlot(key)
	return slot >= 0 && t.byKey[slot].membersOnly
}

// unsupportedApiVersions is Kafka's answer to an ApiVersions request at a
// version the server does not know: v0 with UNSUPPORTED_VERSION listing only
// ApiVersions' own range, so that the client can retry at a version we know
// (KIP-511; ApiVersionsRequest.getErrorResponse). Every other API or version
// not served closes the connection, as Kafka's Processor.parseRequestHeader
// does.
func (t *apiTable) unsupportedApiVersions() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = errUnsupportedVersion
	r := t.byKey[apiVersionsKey]
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MinVersion, k.MaxVersion = apiVersionsKey, r.min, r.max
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
	return resp
}

// apiVersions answers an ApiVersions request at a served version. clusterID
// and nodeID are the server's, for the KIP-1242 check of v5 requests; an
// empty clusterID skips it. features, if not nil, fills in the feature
// fields of a v3+ answer.
func (t *apiTable) apiVersions(req *kmsg.ApiVersionsRequest, clusterID string, nodeID int32, features func(*kmsg.ApiVersionsResponse)) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	switch {
	case req.Version >= 3 && (!validSoftware(req.ClientSoftwareName) || !validSoftware(req.ClientSoftwareVersion)):
		resp.ErrorCode = errInvalidRequest
	case req.Version >= 5 && (req.ClusterID != nil) != (req.NodeID >= 0):
		resp.ErrorCode = errInvalidRequest
	case req.Version >= 5 && req.ClusterID != nil && clusterID != "" && (*req.ClusterID != clusterID || req.NodeID != nodeID):
		resp.ErrorCode = errRebootstrapRequired
	default:
		resp.ApiKeys = t.list
		if features != nil && req.Version >= 3 {
			features(resp)
		}
	}
	return resp
}

// validSoftware reports whether s matches Kafka's pattern for
// ClientSoftwareName and ClientSoftwareVersion:
// [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
func validSoftware(s string) bool {
	if s == "" || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
