package view

// ZooKeeper is the ZooKeeper-era mode's ZooKeeper and its controller, as
// the playground sees them; nil in KRaft mode.
type ZooKeeper struct {
	// Addr is the ZooKeeper server's address.
	Addr string `json:"addr"`
	// State is the ZooKeeper server's: running, killed or stopped.
	State State `json:"state"`
	// Sessions, Znodes, Ephemerals and Watches are what the server last
	// said of itself (ZooKeeper's mntr), RequestsPerSec the requests it
	// received a second over the last sample; all -1 while it has not
	// answered (it is down).
	Sessions       int64   `json:"sessions"`
	Znodes         int64   `json:"znodes"`
	Ephemerals     int64   `json:"ephemerals"`
	Watches        int64   `json:"watches"`
	RequestsPerSec float64 `json:"requestsPerSec"`
	// CutOff are the brokers whose link to ZooKeeper is cut, by ID.
	CutOff []int32 `json:"cutOff,omitempty"`
	// ControllerID is the broker that holds /controller as the running
	// brokers see it, NoLeader if none; ControllerEpoch its epoch.
	ControllerID    int32 `json:"controllerId"`
	ControllerEpoch int32 `json:"controllerEpoch"`
	// LastFailover is the active controller's failover: what it read
	// from ZooKeeper and how long the cluster was unmanaged.
	LastFailover *ZkFailover `json:"lastFailover,omitempty"`
	// Channels are the active controller's queues and senders, one per
	// broker, by broker.
	Channels []ZkChannel `json:"channels"`
}

// ZkFailover is one controller failover: the election, the reading of
// every broker, topic and partition state out of ZooKeeper, and the
// pushes that follow, during which nothing in the cluster is managed.
type ZkFailover struct {
	Epoch      int32 `json:"epoch"`
	Brokers    int   `json:"brokers"`
	Topics     int   `json:"topics"`
	Partitions int   `json:"partitions"`
	// Reads counts the znodes read.
	Reads int `json:"reads"`
	// ReadMs is the time reading ZooKeeper took, TotalMs the time from
	// the election until every push was queued.
	ReadMs  float64 `json:"readMs"`
	TotalMs float64 `json:"totalMs"`
}

// ZkChannel is the active controller's queue of requests to one broker
// (Kafka's ControllerChannelManager): pushes wait in it, one is on the
// wire at a time.
type ZkChannel struct {
	Broker int32 `json:"broker"`
	// Queued are the requests waiting; InFlight names the one on the
	// wire, "" if none.
	Queued   int    `json:"queued"`
	InFlight string `json:"inFlight,omitempty"`
	// LeaderAndIsr, UpdateMetadata and StopReplica count the requests
	// the broker answered, Bytes their size.
	LeaderAndIsr   int64 `json:"leaderAndIsr"`
	UpdateMetadata int64 `json:"updateMetadata"`
	StopReplica    int64 `json:"stopReplica"`
	Bytes          int64 `json:"bytes"`
	// Retries counts the sends that failed and were tried again.
	Retries int64 `json:"retries"`
}
