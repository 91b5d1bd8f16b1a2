// Package controller is kraftlab's quorum controller (Kafka's
// org.apache.kafka.controller.QuorumController): on the controller node
// that leads the metadata quorum it turns requests into metadata records,
// appends them through the node's raft client and answers once they commit.
//
// It runs as one goroutine, Kafka's KafkaEventQueue: requests, committed
// images, leader changes, commit completions and timers are events on it.
// Its state is the last committed image and the records it appended that
// no committed image holds yet; a request is checked against the working
// image (the committed one with those records replayed), as Kafka's
// controller replays its own records at once. When it loses the leadership
// it drops them, answers what waits NOT_CONTROLLER and goes back to the
// committed image.
//
// That goroutine only drives the loop: NewManual makes a controller
// without it, whose caller runs each turn with Step on a virtual clock and
// reports commit completions with CommitsDone, so that the seeded
// simulation (package metasim) runs the same controller.
//
// It serves BrokerRegistration and BrokerHeartbeat (Kafka's
// ClusterControlManager and BrokerHeartbeatManager); CreateTopics,
// DeleteTopics, CreatePartitions, AlterPartition and AssignReplicasToDirs
// (Kafka's ReplicationControlManager); IncrementalAlterConfigs with the
// topic configs Kafka 4.4 knows and the broker configs kraftlab acts on
// (ConfigurationControlManager); and AllocateProducerIds (Kafka's
// ProducerIdControlManager). It fences brokers whose session times out,
// moves leaderships away from fenced and shutting-down brokers and from
// replicas in lost log directories, elects unclean leaders where a topic
// allows it (unclean.go), runs the recovery election when every in-sync
// replica lost records (recovery.go), caps the replicas a broker hosts
// (max.broker.partitions), and writes a NoOpRecord when idle.
package controller
