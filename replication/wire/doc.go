// Package wire carries Kafka protocol requests and responses between kraftlab
// nodes over TCP, and lets the playground break the links between them.
//
// Frames are Apache Kafka's: an int32 size, a request header (v1, or v2 for
// flexible versions) or response header (v0, or v1 for flexible versions), and
// a body encoded with github.com/twmb/franz-go/pkg/kmsg. A Server answers
// ApiVersions itself from the API ranges it was configured with, and hands
// every other supported request to a Handler that may answer later (a parked
// long-poll Fetch) while responses still leave each connection in request
// order. A Client pipelines requests to one node on one lazily dialed
// connection.
//
// A Server bounds what peers can make it hold: a frame cap per listener
// (ControllerMaxFrameSize, BrokerMaxFrameSize), a pool for the bytes of
// requests in flight and what decoding them may allocate (decoding can
// allocate about 100 times a frame), and limits on connections, idle time
// and the time to complete a started frame; see ServerConfig. An API or
// version the server does not serve closes the connection, as in Kafka,
// except ApiVersions, which answers v0 UNSUPPORTED_VERSION.
//
// A Server with a secret (ServerConfig.Secret) answers SASL/SCRAM-SHA-256
// itself: a connection that starts with SaslHandshake authenticates as a
// member of the playground, any other is anonymous (Request.Member,
// Request.Principal). APIs marked APIRange.MembersOnly are refused to
// anonymous connections with CLUSTER_AUTHORIZATION_FAILED, as Kafka's
// authorizer refuses CLUSTER_ACTION. A Client with ClientConfig.SASL
// authenticates each connection before its first request.
//
// Every Client between two nodes goes through Links, which the cluster
// controls per direction: down, delay and jitter, loss, and a bandwidth
// limit. Counters record requests and bytes by API key per link and per node
// so the UI can show message flow. Kafka clients from outside (the user's own
// tools) talk to a Server directly and never pass through Links.
package wire
