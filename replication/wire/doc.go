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
// A Server bounds what peers can make it hold, so that nothing a local
// process sends wedges a node; see ServerConfig. A frame cap per listener
// (Kafka's socket.request.max.bytes: DefaultMaxFrameSize on brokers,
// ControllerMaxFrameSize on controllers), and, whatever the cap, no request
// but Produce above 1 MiB: decoding can allocate about 100 times a frame,
// so a Produce is charged what its structure decodes into, its records
// being aliased. Pools for the bytes of
// requests in flight and what decoding them may allocate
// (queued.max.request.bytes), one set for members and one for everyone
// else. Limits on connections, idle time, the time to complete a started
// frame and to log in. An API or version the server does not serve closes
// the connection, as in Kafka, except ApiVersions, which answers v0
// UNSUPPORTED_VERSION.
//
// Members and strangers. A connection that authenticated as a member (or
// any connection of a server without a secret) pipelines up to 256
// requests and draws on the members' pools, as do the first frames of any
// login (at most 1 KiB each). Any other connection has one request in the
// server at a time, as Kafka mutes a channel until its response is sent;
// while it waits the reader watches for the peer's close (a read, or on
// Linux the socket's state when the peer pipelined bytes), so a closed
// connection is let go at once. A request the handler parks keeps charged
// only what it really holds, and keeps it until the handler answers it,
// even after its connection closed. Over max.connections or
// max.connections.per.ip a connection is accepted on probation: a member
// gets in, closing a stranger's least recently used connection when the
// server is full (as Kafka does for its inter-broker listener); a stranger
// waits for a slot, or is closed when over its address's limit. Failed
// logins are answered after connection.failed.authentication.delay.ms and
// closed, SCRAM nonces and messages are bounded, and what peers cause is
// logged at a bounded rate (counted in Counters).
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
