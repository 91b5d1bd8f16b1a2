// Package server makes a kraftlab node a Kafka server made of parts, as
// Apache Kafka's kafka.server does: one wire listener per node, a
// dispatcher by API key on which each part registers the APIs it serves
// (so ApiVersions lists exactly those), and a life (start, graceful stop,
// kill, restart from the node's folder after a disk fault) that acts on
// the whole node at once.
//
// Server is what every node shares (Kafka's SharedServer): the listener,
// the raft client and the metadata loader. What only one kind runs is made
// anew at each start:
//
//   - ControllerServer (controllerserver.go): the quorum controller, the
//     raft client's RPCs (the node votes), DescribeCluster for
//     --bootstrap-controller tools, Envelope for what brokers forward, and
//     the recovery election's questions to the brokers.
//   - BrokerServer (brokerserver.go): the forwarder to the controllers, the
//     metadata cache, the ReplicaManager (replicamanager.go and the files
//     of its requests: produce.go, fetch.go, listoffsets.go, …) with its
//     replica fetchers, the producer id manager, and the lifecycle manager
//     (lifecycle.go). The broker's raft client only observes: it sends
//     Fetch and FetchSnapshot and serves none of the quorum's RPCs; it
//     forwards DescribeQuorum to the leader, as Kafka's brokers forward it
//     to the active controller.
//
// A node's folder is formatted as Kafka's is (meta.go: meta.properties
// with the cluster, the node and the log directory's id), and the
// playground's member secret lives beside the nodes' folders (secret.go).
package server
