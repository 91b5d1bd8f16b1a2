package cluster

// Event kinds of the metadata: the active controller's doings, the
// brokers' lifecycles, and the metadata reaching each broker.
const (
	// EventControllerActivated: a controller became the active one; the
	// message says how long it took to be ready from its own image.
	EventControllerActivated EventKind = "controller-activated"
	// EventControllerDeactivated: the active controller stopped acting.
	EventControllerDeactivated EventKind = "controller-deactivated"
	// EventZkControllerElected: in the ZooKeeper era, a broker won
	// /controller and began reading the cluster out of ZooKeeper.
	EventZkControllerElected EventKind = "zk-controller-elected"
	// EventZkControllerManaging: the new controller read ZooKeeper and
	// queued its pushes; the message says how long the cluster was
	// unmanaged.
	EventZkControllerManaging EventKind = "zk-controller-managing"
	// EventBrokerRegistered: a broker's registration committed (fenced).
	EventBrokerRegistered EventKind = "broker-registered"
	// EventBrokerUnfenced: the controller unfenced a caught-up broker.
	EventBrokerUnfenced EventKind = "broker-unfenced"
	// EventBrokerFenced: the controller fenced a broker: its session timed
	// out, or it asked to be.
	EventBrokerFenced EventKind = "broker-fenced"
	// EventBrokerShutdown: a broker began a controlled shutdown.
	EventBrokerShutdown EventKind = "broker-shutdown"
	// EventBrokerState: a broker's lifecycle state changed.
	EventBrokerState EventKind = "broker-state"
	// EventPartitionChange: a partition's leader or ISR changed.
	EventPartitionChange EventKind = "partition-change"
	// EventTopicApplied: a broker applied a topic's creation from the
	// metadata log; the message says how long after the controller
	// appended it.
	EventTopicApplied EventKind = "topic-applied"
	// EventReplicaDamaged: a broker found records gone from a replica's
	// files; the message names the files and the offsets lost.
	EventReplicaDamaged EventKind = "replica-damaged"
	// EventReplicaRepaired: a damaged replica fetched back what it lost,
	// or leads what it has because no intact replica was left.
	EventReplicaRepaired EventKind = "replica-repaired"
	// EventRecoveryElection: every in-sync replica of a partition lost
	// records; the controller elected the replica with the newest, longest
	// log, or waits for the replicas that may hold them.
	EventRecoveryElection EventKind = "recovery-election"
)
