package view

// BrokerState is a broker's lifecycle state, with the names of Kafka's
// BrokerState (what its BrokerLifecycleManager reports).
type BrokerState string

// Broker lifecycle states.
const (
	// BrokerStarting: the broker registers with the active controller and
	// replays the metadata log, until a heartbeat answer says it has
	// caught up to its own registration record (isCaughtUp).
	BrokerStarting BrokerState = "STARTING"
	// BrokerRecovery: caught up to its own registration, still fenced,
	// waiting for the controller to unfence it.
	BrokerRecovery BrokerState = "RECOVERY"
	// BrokerRunning: unfenced by the controller. It stays RUNNING if the
	// controller fences it later (a missed session): Fenced says that.
	BrokerRunning BrokerState = "RUNNING"
	// BrokerPendingControlledShutdown: it asked to shut down and waits
	// while the controller moves its leaderships away.
	BrokerPendingControlledShutdown BrokerState = "PENDING_CONTROLLED_SHUTDOWN"
	// BrokerShuttingDown: the controller let it go.
	BrokerShuttingDown BrokerState = "SHUTTING_DOWN"
)

// BrokerStates lists the lifecycle states in the order a broker goes
// through them.
func BrokerStates() []BrokerState {
	return []BrokerState{BrokerStarting, BrokerRecovery, BrokerRunning, BrokerPendingControlledShutdown, BrokerShuttingDown}
}

// Broker is a broker's place in the metadata: what its lifecycle manager
// says of itself, and what the cluster's committed metadata says of it.
type Broker struct {
	// State is what the broker's lifecycle manager reports; empty while
	// the broker does not run.
	State BrokerState `json:"state,omitempty"`
	// BrokerEpoch is the epoch of its current registration (the offset of
	// its RegisterBrokerRecord), -1 while it has none.
	BrokerEpoch int64 `json:"brokerEpoch"`
	// Registered, Fenced and InControlledShutdown are what the active
	// controller's committed metadata says, the cluster's truth: a
	// broker cut off from the controller may still believe it is
	// unfenced.
	Registered           bool `json:"registered"`
	Fenced               bool `json:"fenced"`
	InControlledShutdown bool `json:"inControlledShutdown"`
	// LastHeartbeatTimestamp is when the active controller last heard the
	// broker's BrokerHeartbeat, in Unix milliseconds; -1 when it has not.
	LastHeartbeatTimestamp int64 `json:"lastHeartbeatTimestamp"`
	// MetadataLag is how many offsets of the committed metadata log the
	// broker has not applied yet (the leader's high watermark minus the
	// offset after the broker's last applied record); -1 when unknown.
	// It is kraftlab's own measure, not a Kafka metric, and nothing acts
	// on it: Kafka fences a broker only for a missed session or at its own
	// request, never for lag, and unfences it once it has applied its own
	// registration. Kafka's own figures are the broker's
	// last-applied-record-lag-ms and DescribeQuorum's observer log ends.
	MetadataLag int64 `json:"metadataLag"`
	// PartitionsLed counts the partitions whose leader it is.
	PartitionsLed int `json:"partitionsLed"`
	// Fetchers are its ReplicaFetcherThreads, by source broker and
	// fetcher id; empty while it follows no partition or does not run.
	Fetchers []FetcherThread `json:"fetchers"`
	// FailedPartitions are the partitions a fetcher thread gave up on (a
	// fenced leader epoch, a storage error) until metadata adds them
	// again, as TOPIC-P.
	FailedPartitions []string `json:"failedPartitions,omitempty"`
	// DelayedProduces and DelayedFetches count the requests waiting in its
	// purgatories: acks=all produces for the ISR, fetches for bytes.
	DelayedProduces int `json:"delayedProduces"`
	DelayedFetches  int `json:"delayedFetches"`
	// LeaderThrottledBytesPerSec and FollowerThrottledBytesPerSec are the
	// measured rates of throttled replication it serves as a leader and
	// fetches as a follower, the rates leader.replication.throttled.rate
	// and follower.replication.throttled.rate bound.
	LeaderThrottledBytesPerSec   float64 `json:"leaderThrottledBytesPerSec"`
	FollowerThrottledBytesPerSec float64 `json:"followerThrottledBytesPerSec"`
	// Coordinating are the partitions of __consumer_offsets whose groups
	// its group coordinator serves, by partition; empty while it leads
	// none or does not run.
	Coordinating []CoordinatorShard `json:"coordinating,omitempty"`
}

// ControllerMetrics is a controller's kafka.controller:type=KafkaController
// metrics, with Kafka's names, as its quorum controller counts them.
type ControllerMetrics struct {
	// ActiveControllerCount is 1 on the active controller, 0 elsewhere.
	ActiveControllerCount int `json:"ActiveControllerCount"`
	// ActiveBrokerCount and FencedBrokerCount count the registered
	// brokers unfenced and fenced.
	ActiveBrokerCount int `json:"ActiveBrokerCount"`
	FencedBrokerCount int `json:"FencedBrokerCount"`
	// GlobalTopicCount and GlobalPartitionCount count topics and
	// partitions; OfflinePartitionsCount the partitions without a leader.
	GlobalTopicCount       int `json:"GlobalTopicCount"`
	GlobalPartitionCount   int `json:"GlobalPartitionCount"`
	OfflinePartitionsCount int `json:"OfflinePartitionsCount"`
	// LastAppliedRecordOffset is the offset of its committed image;
	// LastCommittedRecordOffset the highest offset it knows committed.
	LastAppliedRecordOffset   int64 `json:"LastAppliedRecordOffset"`
	LastCommittedRecordOffset int64 `json:"LastCommittedRecordOffset"`
	// TimedOutBrokerHeartbeatCount counts the brokers it fenced because
	// their session timed out, since it started.
	TimedOutBrokerHeartbeatCount int64 `json:"TimedOutBrokerHeartbeatCount"`
	// UncleanLeaderElectionsPerSec counts, since it started, the leaders
	// it elected from outside a partition's ISR (Kafka's ControllerStats
	// meter of that name, as a count).
	UncleanLeaderElectionsPerSec int64 `json:"UncleanLeaderElectionsPerSec"`
	// ElectionFromEligibleLeaderReplicasPerSec counts, since it started,
	// the leaders it elected from a partition's ELR (KIP-966; Kafka's
	// ControllerStats meter of that name, as a count).
	ElectionFromEligibleLeaderReplicasPerSec int64 `json:"ElectionFromEligibleLeaderReplicasPerSec"`
}

// ExternalBroker is a registered broker that is not one of the
// playground's nodes: only the committed metadata and the active
// controller's heartbeats speak of it (its State is empty, its
// MetadataLag -1: the playground cannot look inside it).
type ExternalBroker struct {
	ID int32 `json:"nodeId"`
	// Listener is its first registered endpoint, host:port.
	Listener string `json:"listener"`
	Broker
}
