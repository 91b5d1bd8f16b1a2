// Package server makes a kraftlab node a Kafka server made of parts, as
// Apache Kafka's ControllerServer and BrokerServer are: one wire listener
// per node, a dispatcher by API key on which each part registers the APIs
// it serves (so ApiVersions lists exactly those), and a lifecycle (start,
// graceful stop, kill, restart from the node's folder) that acts on the
// whole server and all its parts at once.
//
// A controller holds a raft client that votes and serves the quorum's
// RPCs. A broker holds a raft client that only observes: it sends Fetch
// and FetchSnapshot to the leader and serves none of the quorum's RPCs; it
// forwards DescribeQuorum to the leader, as Kafka's brokers forward it to
// the active controller.
package server
