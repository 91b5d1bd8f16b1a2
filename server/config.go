package server

import (
	"log/slog"
	"time"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/quorum"
)

// Config configures a Server.
type Config struct {
	// Kind says which parts the server has.
	Kind Kind
	// Raft configures the server's raft client: the node's id, the
	// voters, its folder, how it reaches its peers. A controller must be
	// one of Raft.Raft.Voters and a broker must not. Raft.Secret, the
	// playground's member secret (LoadSecret), is required: the listener
	// serves the quorum's RPCs only to connections that authenticate with
	// it, and the node's clients authenticate with it.
	Raft quorum.Config
	// Addr is the address to listen on; empty means 127.0.0.1 on a port
	// the system picks. A restarted server listens on the address it got
	// the first time, so its peers find it again.
	Addr string
	// Publishers, if set, returns the parts that subscribe to the metadata
	// loader of one incarnation (the quorum controller on a controller,
	// the lifecycle manager on a broker). It is called at each start,
	// before the new loader is handed any record, so the parts see every
	// image from the first.
	Publishers func() []loader.Publisher
	// OnLoaderEvent, if set, receives the loader's events from its own
	// goroutine; it must not block.
	OnLoaderEvent func(loader.Event)
	// Controller configures a controller's quorum controller.
	Controller ControllerConfig
	// Broker configures a broker's lifecycle manager.
	Broker BrokerConfig
	// OnRestart, if set, hears that the node started again by itself
	// after it stopped on a disk fault (see Restarting), with what the
	// restarts did; it is called from the restarts' goroutine and must
	// not block.
	OnRestart func(RestartStatus)
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
}

// ControllerConfig configures the quorum controller a controller runs in
// each incarnation; it acts while its node leads the quorum.
type ControllerConfig struct {
	// SessionTimeout is broker.session.timeout.ms; 0 means Kafka's 9 s.
	SessionTimeout time.Duration
	// NoOpInterval is metadata.max.idle.interval.ms; 0 writes no NoOps.
	NoOpInterval time.Duration
	// DefaultNumPartitions and DefaultReplicationFactor are num.partitions
	// and default.replication.factor; 0 means Kafka's 1.
	DefaultNumPartitions     int32
	DefaultReplicationFactor int16
	// UncleanLeaderElectionEnable is unclean.leader.election.enable, the
	// cluster default a topic's config overrides.
	UncleanLeaderElectionEnable bool
	// UncleanLeaderElectionInterval is unclean.leader.election.interval.ms;
	// 0 means Kafka's 5 min.
	UncleanLeaderElectionInterval time.Duration
	// MaxBrokerPartitions is max.broker.partitions (KIP-578): the most
	// partition replicas one broker may host. 0 means
	// controller.DefaultMaxBrokerPartitions.
	MaxBrokerPartitions int
	// OnEvent, if set, receives the controller's events, from its
	// goroutine; it must not block.
	OnEvent func(controller.Event)
}

// BrokerConfig configures a broker's lifecycle manager and its
// ReplicaManager. Zero values take Kafka's defaults.
type BrokerConfig struct {
	// HeartbeatInterval is broker.heartbeat.interval.ms; 0 means Kafka's
	// 2 s.
	HeartbeatInterval time.Duration
	// OnEvent, if set, receives the lifecycle manager's events, from its
	// goroutine; it must not block.
	OnEvent func(LifecycleEvent)
	// ReplicaLagTimeMax is replica.lag.time.max.ms; 0 means Kafka's 30 s.
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms; 0 means Kafka's
	// 500 ms.
	ReplicaFetchWaitMax time.Duration
	// NumReplicaFetchers is num.replica.fetchers; 0 means Kafka's 1.
	NumReplicaFetchers int
	// ReplicaFetchBackoff is replica.fetch.backoff.ms; 0 means Kafka's 1 s.
	ReplicaFetchBackoff time.Duration
	// ReplicaFetchMinBytes, ReplicaFetchMaxBytes and
	// ReplicaFetchResponseMaxBytes are replica.fetch.min.bytes (1),
	// replica.fetch.max.bytes (1 MiB) and replica.fetch.response.max.bytes
	// (10 MiB).
	ReplicaFetchMinBytes         int32
	ReplicaFetchMaxBytes         int32
	ReplicaFetchResponseMaxBytes int32
	// OnReplicaEvent, if set, receives the ReplicaManager's news of
	// damaged and repaired replicas; it must not block.
	OnReplicaEvent func(ReplicaEvent)
	// MinInsyncReplicas is min.insync.replicas from the broker's own
	// configuration: the default below a topic's config and the dynamic
	// cluster default. 0 means Kafka's 1.
	MinInsyncReplicas int
	// FetchMaxBytes is fetch.max.bytes: the most one Fetch answer holds
	// (plus one batch), whatever the request asks; a follower's is also
	// bounded by ReplicaFetchResponseMaxBytes. 0 means Kafka's 55 MiB.
	FetchMaxBytes int32
	// MessageMaxBytes is message.max.bytes: the largest batch a producer
	// may append (MESSAGE_TOO_LARGE). 0 means Kafka's 1048588.
	MessageMaxBytes int32
	// MaxBrokerPartitions is max.broker.partitions: the most replicas the
	// broker opens, whatever the metadata assigns it. 0 means
	// controller.DefaultMaxBrokerPartitions.
	MaxBrokerPartitions int
}
