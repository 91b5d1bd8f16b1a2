package server

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/internal/closest"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
)

// Settings are every setting of a playground's servers that a user may
// change, each by its Kafka configuration key (see SettingKeys), in
// milliseconds for durations, so that a learner can map it to Kafka's
// documentation: the metadata quorum's timeouts, the metadata log's
// snapshots, the brokers' sessions, the data plane, and what one request
// may cost. DefaultSettings holds Kafka's defaults, each read from the
// part that owns it; Set changes one by its key, and NodeConfig maps them
// onto a node's Config. In a Config, a zero value takes the owning part's
// default (0 disables the NoOps and the time-based snapshots).
type Settings struct {
	// ElectionTimeout is controller.quorum.election.timeout.ms: how long a
	// Prospective or Candidate waits for votes before it tries again,
	// randomised to [T, 2T).
	ElectionTimeout time.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms: a follower that
	// has not fetched successfully from the leader for this long starts an
	// election, and a leader that has not been fetched from by a majority
	// for 1.5 times this long resigns (check-quorum).
	FetchTimeout time.Duration
	// ElectionBackoffMax is controller.quorum.election.backoff.max.ms: the
	// cap of the binary exponential backoff between lost elections.
	ElectionBackoffMax time.Duration
	// RequestTimeout is controller.quorum.request.timeout.ms: how long a
	// quorum request may stay unanswered before it is retried.
	RequestTimeout time.Duration
	// RetryBackoff is controller.quorum.retry.backoff.ms: the pause before
	// retrying a failed quorum request.
	RetryBackoff time.Duration
	// AppendLinger is controller.quorum.append.linger.ms: how long the
	// leader accumulates records before it writes them as one batch.
	AppendLinger time.Duration
	// FetchMaxWait is kraftlab.quorum.fetch.max.wait.ms: how long the leader
	// parks a Fetch that has nothing new. Kafka hard-codes it as
	// KafkaRaftClient.MAX_FETCH_WAIT_MS = 500; it is a key here because it
	// must stay well below FetchTimeout when the profile scales time.
	// Under push it is the leader's heartbeat interval, so that an idle
	// follower hears from its leader as often in both modes.
	FetchMaxWait time.Duration
	// Replication is kraftlab.quorum.replication: how the metadata quorum
	// replicates, pull (Kafka's: followers and observers fetch) or push
	// (classic Raft's: the leader sends AppendEntries). Elections, the
	// log and its snapshots are the same in both.
	Replication raft.Replication
	// Flush is kraftlab.quorum.flush: when the metadata log is fsynced.
	// storage.FlushAlways is Kafka's behaviour: the leader flushes before
	// its own log end offset counts toward the high watermark, and a
	// follower flushes before its next Fetch acknowledges what it
	// appended. storage.FlushNever leaves writes in the page cache: a
	// kraftlab kill stops a node inside the process, so the page cache
	// survives it, and only a crash of the machine could lose acknowledged
	// records; tests use it because fsync dominates their run time.
	Flush storage.FlushPolicy
	// MetadataMaxIdleInterval is metadata.max.idle.interval.ms: the active
	// controller appends a NoOpRecord when it has written nothing for this
	// long, so the log (and the high watermark) visibly move; 0 disables.
	MetadataMaxIdleInterval time.Duration
	// SnapshotMaxNewRecordBytes is
	// metadata.log.max.record.bytes.between.snapshots: a node snapshots its
	// metadata once this many bytes were committed since the last snapshot.
	SnapshotMaxNewRecordBytes int64
	// SnapshotMaxInterval is metadata.log.max.snapshot.interval.ms: a node
	// snapshots at least this often if anything was committed; 0 disables.
	SnapshotMaxInterval time.Duration
	// BrokerSessionTimeout is broker.session.timeout.ms: the active
	// controller fences a broker it has not heard a heartbeat from for
	// this long.
	BrokerSessionTimeout time.Duration
	// BrokerHeartbeatInterval is broker.heartbeat.interval.ms: how often a
	// broker sends BrokerHeartbeat to the active controller.
	BrokerHeartbeatInterval time.Duration
	// ZooKeeperSessionTimeout is zookeeper.session.timeout.ms: in the
	// ZooKeeper-era mode, ZooKeeper ends the session of a broker it has
	// not heard from for this long, and with it the broker's
	// registration, which the controller watches.
	ZooKeeperSessionTimeout time.Duration

	// The data plane: how brokers replicate partitions.

	// NumReplicaFetchers is num.replica.fetchers: the fetcher threads a
	// broker runs per leader broker; a partition's thread is a hash of its
	// name.
	NumReplicaFetchers int64
	// ReplicaLagTimeMax is replica.lag.time.max.ms: a follower that has not
	// caught up with its leader for this long leaves the ISR.
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms: how long a leader
	// parks a follower's fetch that has less than ReplicaFetchMinBytes.
	ReplicaFetchWaitMax time.Duration
	// ReplicaFetchBackoff is replica.fetch.backoff.ms: how long a
	// partition waits after a fetch error.
	ReplicaFetchBackoff time.Duration
	// ReplicaFetchMinBytes is replica.fetch.min.bytes: what a follower's
	// fetch waits for before it is answered.
	ReplicaFetchMinBytes int64
	// ReplicaFetchMaxBytes is replica.fetch.max.bytes: the bytes a fetch
	// asks for per partition (a larger first batch still comes whole).
	ReplicaFetchMaxBytes int64
	// ReplicaFetchResponseMaxBytes is replica.fetch.response.max.bytes:
	// the bytes a fetch asks for in all.
	ReplicaFetchResponseMaxBytes int64
	// MinInsyncReplicas is min.insync.replicas, the cluster's default:
	// while the ISR is smaller (the setting capped at the replication
	// factor) an acks=all produce is refused and the high watermark does
	// not move. A topic's own config, or a dynamic cluster default,
	// overrides it.
	MinInsyncReplicas int64
	// EligibleLeaderReplicasVersion is the level of the
	// eligible.leader.replicas.version feature a new cluster starts with,
	// what `kafka-storage format --feature
	// eligible.leader.replicas.version=N` chooses: 1 (Kafka 4.4's
	// default) turns on eligible leader replicas (KIP-966), 0 leaves them
	// off. The active controller writes it when it bootstraps an empty
	// metadata log; a cluster that has one keeps its level.
	EligibleLeaderReplicasVersion int64
	// KRaftVersion is the kraft.version a new cluster's quorum is formatted
	// with: 1 (the default, what Kafka 4.4's kafka-storage format
	// --standalone or --initial-controllers chooses) a dynamic quorum
	// (KIP-853), whose voter set lives in the metadata log, names each
	// voter's directory id and changes with AddRaftVoter and
	// RemoveRaftVoter; 0 a static one, whose voters are the initial
	// controllers for ever (controller.quorum.voters). The initial
	// controllers write it into their empty logs; a cluster that has a
	// log keeps what it was formatted with.
	KRaftVersion int64
	// UncleanLeaderElectionEnable is unclean.leader.election.enable, the
	// cluster's default: when no ISR member is alive, the controller may
	// elect a live replica outside the ISR, losing what only the ISR had.
	// A topic's own config overrides it.
	UncleanLeaderElectionEnable bool
	// UncleanLeaderElectionInterval is unclean.leader.election.interval.ms
	// (an internal key in Kafka): how often the active controller looks
	// for leaderless partitions that allow an unclean election.
	UncleanLeaderElectionInterval time.Duration
	// AutoLeaderRebalanceEnable is auto.leader.rebalance.enable: the
	// active controller makes each partition's preferred replica (its
	// first) its leader again, where that replica may lead, every
	// LeaderImbalanceCheckInterval.
	AutoLeaderRebalanceEnable bool
	// LeaderImbalanceCheckInterval is
	// leader.imbalance.check.interval.seconds.
	LeaderImbalanceCheckInterval time.Duration

	// Consumer groups: the group coordinator and its internal topic.

	// OffsetsTopicNumPartitions is offsets.topic.num.partitions: the
	// partitions of __consumer_offsets, made on the first FindCoordinator.
	// A group lives on one of them, by the hash of its id.
	OffsetsTopicNumPartitions int64
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor:
	// the replicas of each partition of __consumer_offsets. Until that
	// many brokers are registered the topic cannot be made, and
	// FindCoordinator answers COORDINATOR_NOT_AVAILABLE.
	OffsetsTopicReplicationFactor int64
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms: the
	// first rebalance of an empty group waits this long for more members
	// (again for each that comes, up to the rebalance timeout).
	GroupInitialRebalanceDelay time.Duration
	// GroupConsumerSessionTimeout is group.consumer.session.timeout.ms:
	// a member of a consumer group (KIP-848) that sends no heartbeat for
	// this long is fenced and its partitions go to the others.
	GroupConsumerSessionTimeout time.Duration
	// GroupConsumerHeartbeatInterval is
	// group.consumer.heartbeat.interval.ms: how often the coordinator
	// tells a consumer group's members to heartbeat.
	GroupConsumerHeartbeatInterval time.Duration

	// What one request may cost.

	// MaxBrokerPartitions is max.broker.partitions (KIP-578): the most
	// partition replicas one broker may host; the controller refuses
	// CreateTopics and CreatePartitions past it (POLICY_VIOLATION).
	MaxBrokerPartitions int64
	// MessageMaxBytes is message.max.bytes: the largest batch a producer
	// may append (MESSAGE_TOO_LARGE); a compressed one may decompress to
	// 64 times this.
	MessageMaxBytes int64
	// FetchMaxBytes is fetch.max.bytes: the most one Fetch answer holds
	// (plus one batch), whatever it asks.
	FetchMaxBytes int64

	// The listeners: what peers and clients may make a node hold.

	// SocketRequestMaxBytes is socket.request.max.bytes: the largest
	// request frame a broker reads.
	SocketRequestMaxBytes int64
	// ControllerSocketRequestMaxBytes is
	// kraftlab.controller.socket.request.max.bytes: the largest request
	// frame a controller reads. Kafka's controllers take
	// socket.request.max.bytes; kraftlab's serve no Produce, and no other
	// request is read above 1 MiB.
	ControllerSocketRequestMaxBytes int64
	// QueuedMaxRequestBytes is queued.max.request.bytes: the memory that
	// requests in a node may hold, once for the playground's members and
	// once for everyone else; -1 (or 0) is unbounded, as Kafka's default.
	QueuedMaxRequestBytes int64
	// MaxConnections is max.connections: a node's connections. Members of
	// the playground are always let in, closing a stranger's least
	// recently used connection when the node is full.
	MaxConnections int64
	// MaxConnectionsPerIP is max.connections.per.ip: a node's connections
	// from one address, members not counted.
	MaxConnectionsPerIP int64
	// ConnectionsMaxIdle is connections.max.idle.ms: an idle connection
	// is closed after this long.
	ConnectionsMaxIdle time.Duration
	// FailedAuthenticationDelay is
	// connection.failed.authentication.delay.ms: how long a failed
	// authentication waits for its answer, after which the connection
	// closes.
	FailedAuthenticationDelay time.Duration
	// SaslServerMaxReceiveSize is sasl.server.max.receive.size: the
	// largest frame a node reads during a SASL exchange.
	SaslServerMaxReceiveSize int64
	// SaslAuthenticationTimeout is kraftlab.sasl.authentication.timeout.ms:
	// a connection must finish authenticating this long after its
	// SaslHandshake (Kafka has no such bound).
	SaslAuthenticationTimeout time.Duration
}

// DefaultSettings are Apache Kafka's defaults, read from the parts that
// own them: the quorum's (raft.DefaultConfig), the quorum controller's,
// the lifecycle manager's, the replica fetchers', a partition's and the
// ReplicaManager's. Kafka fsyncs the metadata log (FlushAlways).
func DefaultSettings() Settings {
	q := raft.DefaultConfig()
	return Settings{
		ElectionTimeout:           q.ElectionTimeout,
		FetchTimeout:              q.FetchTimeout,
		ElectionBackoffMax:        q.ElectionBackoffMax,
		RequestTimeout:            q.RequestTimeout,
		RetryBackoff:              q.RetryBackoff,
		AppendLinger:              q.AppendLinger,
		FetchMaxWait:              q.FetchMaxWait,
		Replication:               q.Replication,
		Flush:                     storage.FlushAlways,
		MetadataMaxIdleInterval:   controller.DefaultNoOpInterval,
		SnapshotMaxNewRecordBytes: quorum.DefaultSnapshotMaxNewBytes,
		SnapshotMaxInterval:       quorum.DefaultSnapshotMaxInterval,
		BrokerSessionTimeout:      controller.DefaultSessionTimeout,
		BrokerHeartbeatInterval:   DefaultBrokerHeartbeatInterval,
		ZooKeeperSessionTimeout:   DefaultZooKeeperSessionTimeout,

		NumReplicaFetchers:             fetcher.DefaultNumReplicaFetchers,
		ReplicaLagTimeMax:              partition.DefaultReplicaLagTimeMax,
		ReplicaFetchWaitMax:            fetcher.DefaultReplicaFetchWaitMax,
		ReplicaFetchBackoff:            fetcher.DefaultReplicaFetchBackoff,
		ReplicaFetchMinBytes:           fetcher.DefaultReplicaFetchMinBytes,
		ReplicaFetchMaxBytes:           fetcher.DefaultReplicaFetchMaxBytes,
		ReplicaFetchResponseMaxBytes:   fetcher.DefaultReplicaFetchResponseMaxBytes,
		MinInsyncReplicas:              partition.DefaultMinInsyncReplicas,
		EligibleLeaderReplicasVersion:  int64(record.EligibleLeaderReplicasOn),
		KRaftVersion:                   int64(raft.KRaftVersion1),
		UncleanLeaderElectionEnable:    false,
		UncleanLeaderElectionInterval:  controller.DefaultUncleanElectionInterval,
		AutoLeaderRebalanceEnable:      true,
		LeaderImbalanceCheckInterval:   controller.DefaultLeaderImbalanceCheckInterval,
		OffsetsTopicNumPartitions:      DefaultOffsetsTopicNumPartitions,
		OffsetsTopicReplicationFactor:  DefaultOffsetsTopicReplicationFactor,
		GroupInitialRebalanceDelay:     DefaultGroupInitialRebalanceDelay,
		GroupConsumerSessionTimeout:    DefaultGroupConsumerSessionTimeout,
		GroupConsumerHeartbeatInterval: DefaultGroupConsumerHeartbeatInterval,
		MaxBrokerPartitions:            controller.DefaultMaxBrokerPartitions,
		MessageMaxBytes:                partition.DefaultMaxMessageBytes,
		FetchMaxBytes:                  DefaultFetchMaxBytes,

		// The listeners': Kafka's, except that a node bounds its
		// connections and request memory, which Kafka leaves unbounded,
		// because a playground runs every node in one process (the
		// setting's kafka field says Kafka's own).
		SocketRequestMaxBytes:           wire.DefaultMaxFrameSize,
		ControllerSocketRequestMaxBytes: wire.ControllerMaxFrameSize,
		QueuedMaxRequestBytes:           wire.DefaultQueuedMaxRequestBytes,
		MaxConnections:                  wire.DefaultMaxConnections,
		MaxConnectionsPerIP:             math.MaxInt32,
		ConnectionsMaxIdle:              wire.DefaultIdleTimeout,
		FailedAuthenticationDelay:       wire.DefaultFailedAuthenticationDelay,
		SaslServerMaxReceiveSize:        wire.DefaultSaslMaxReceiveSize,
		SaslAuthenticationTimeout:       wire.DefaultAuthenticationTimeout,
	}
}

// kafka is DefaultSettings, for the errors that name Kafka's default.
var kafka = DefaultSettings()

// Apply applies key=value overrides in order.
func (t *Settings) Apply(overrides []string) error {
	for _, kv := range overrides {
		key, value, ok := strings.Cut(kv, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return fmt.Errorf("bad --set %q: want key=value, e.g. controller.quorum.fetch.timeout.ms=2000", kv)
		}
		if err := t.Set(key, value); err != nil {
			return err
		}
	}
	return nil
}

// Set sets one value by its configuration key. Durations are whole
// milliseconds, as in Kafka.
func (t *Settings) Set(key, value string) error {
	s, ok := settingByKey(key)
	if !ok {
		return unknownKeyError(key)
	}
	return s.set(t, value)
}

// Get returns one value by its configuration key, as Set accepts it.
func (t Settings) Get(key string) (string, error) {
	s, ok := settingByKey(key)
	if !ok {
		return "", unknownKeyError(key)
	}
	return s.get(&t), nil
}

// Validate checks each value's range and the relations Kafka relies on.
func (t Settings) Validate() error {
	for _, s := range settings {
		if err := s.check(&t); err != nil {
			return err
		}
	}
	rel := []struct {
		ok          bool
		small, big  string
		relation    string
		explanation string
	}{
		{t.FetchMaxWait < t.FetchTimeout, keyFetchMaxWait, keyFetchTimeout, "less than", "a follower whose fetch is parked would time out and start an election"},
		{t.FetchMaxWait < t.RequestTimeout, keyFetchMaxWait, keyRequestTimeout, "less than", "a parked fetch would time out as a request"},
		// Kafka's KafkaConfig refuses this one too.
		{t.ReplicaFetchWaitMax <= t.ReplicaLagTimeMax, keyReplicaFetchWaitMax, keyReplicaLagTimeMax, "at most", "a follower whose fetch is parked would fall out of the ISR"},
		// Kafka's KafkaConfig refuses this one too.
		{t.FailedAuthenticationDelay < t.ConnectionsMaxIdle, keyFailedAuthDelay, keyConnectionsMaxIdle, "less than", "the connection would be closed as idle before its refusal is answered"},
	}
	for _, r := range rel {
		if !r.ok {
			return fmt.Errorf("%s must be %s %s (%s=%s, %s=%s): otherwise %s",
				r.small, r.relation, r.big, r.small, t.mustGet(r.small), r.big, t.mustGet(r.big), r.explanation)
		}
	}
	if t.Replication == raft.Push && t.FetchMaxWait < time.Millisecond {
		return fmt.Errorf("%s must be at least 1 under %s=%v: it is the push leader's heartbeat interval", keyFetchMaxWait, keyReplication, raft.Push)
	}
	// Kafka only logs an error for this one; the playground refuses it.
	if 2*t.BrokerHeartbeatInterval > t.BrokerSessionTimeout {
		return fmt.Errorf("%s must be at most half of %s (%s=%s, %s=%s): otherwise one late heartbeat fences a healthy broker",
			keyHeartbeatInterval, keySessionTimeout, keyHeartbeatInterval, t.mustGet(keyHeartbeatInterval), keySessionTimeout, t.mustGet(keySessionTimeout))
	}
	return nil
}

// RaftConfig maps the timing onto the quorum configuration of node id, a
// voter when voters holds it and an observer otherwise.
func (t Settings) RaftConfig(id int32, voters []int32, clusterID string) raft.Config {
	c := raft.DefaultConfig()
	c.NodeID = id
	c.Voters = voters
	c.ClusterID = clusterID
	c.ElectionTimeout = t.ElectionTimeout
	c.ElectionBackoffMax = t.ElectionBackoffMax
	c.FetchTimeout = t.FetchTimeout
	c.RequestTimeout = t.RequestTimeout
	c.RetryBackoff = t.RetryBackoff
	c.AppendLinger = t.AppendLinger
	c.FetchMaxWait = t.FetchMaxWait
	c.Replication = t.Replication
	c.HeartbeatInterval = t.FetchMaxWait
	// A push is a request a replica reads up to its frame limit, a
	// controller's or (to an observer) a broker's: half of the smaller
	// leaves room for the request's header.
	limit := t.ControllerSocketRequestMaxBytes
	if b := t.SocketRequestMaxBytes; b > 0 && (limit <= 0 || b < limit) {
		limit = b
	}
	if half := limit / 2; half > 0 && half < int64(c.AppendMaxBytes) {
		c.AppendMaxBytes = int32(half)
	}
	return c
}

func (t Settings) mustGet(key string) string {
	v, _ := t.Get(key)
	return v
}

// Setting describes one configuration key of Settings.
type Setting struct {
	Key string
	// Unit is "ms", "bytes", "count" or one of a fixed set of words.
	Unit string
	// Doc is one line saying what the key does.
	Doc string
}

// SettingKeys lists every configuration key Set accepts, in the order a
// reader meets them: quorum, metadata log, brokers, then the data plane.
func SettingKeys() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		out[i] = Setting{Key: s.key, Unit: s.unit(), Doc: s.doc}
	}
	return out
}

// Keys lists every configuration key Set accepts.
func Keys() []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.key
	}
	return out
}

const (
	keyFetchTimeout      = "controller.quorum.fetch.timeout.ms"
	keyRequestTimeout    = "controller.quorum.request.timeout.ms"
	keyFetchMaxWait      = "kraftlab.quorum.fetch.max.wait.ms"
	keyReplication       = "kraftlab.quorum.replication"
	keySessionTimeout    = "broker.session.timeout.ms"
	keyHeartbeatInterval = "broker.heartbeat.interval.ms"

	keyReplicaLagTimeMax   = "replica.lag.time.max.ms"
	keyReplicaFetchWaitMax = "replica.fetch.wait.max.ms"

	keyConnectionsMaxIdle = "connections.max.idle.ms"
	keyFailedAuthDelay    = "connection.failed.authentication.delay.ms"
)

// maxMillis bounds every duration: a day is far beyond anything a
// playground waits for, and keeps nanoseconds far from overflow.
const maxMillis = 24 * 60 * 60 * 1000

// maxBytes bounds every size to 1 GiB.
const maxBytes = 1 << 30

type setting struct {
	key string
	doc string
	min int64 // smallest allowed value (durations in ms)
	dur func(*Settings) *time.Duration
	num func(*Settings) *int64
	max int64 // largest allowed number (num only)
	// flush marks the flush policy's key, valued always or never.
	flush bool
	// replication marks the replication mode's key, valued pull or push.
	replication bool
	// boolean is a true|false key's field.
	boolean func(*Settings) *bool
	// seconds marks a duration key valued in whole seconds, as Kafka's
	// *.seconds keys are; other durations are milliseconds.
	seconds bool
	// kafka is Kafka's default, where kraftlab's differs in every
	// profile (the kafka profile included).
	kafka string
}

var settings = []setting{
	{key: "controller.quorum.election.timeout.ms", min: 1, doc: "wait for votes before trying again (randomised to [T, 2T))",
		dur: func(t *Settings) *time.Duration { return &t.ElectionTimeout }},
	{key: keyFetchTimeout, min: 1, doc: "no successful fetch from the leader for this long starts an election; a leader not fetched from by a majority for 1.5x this resigns",
		dur: func(t *Settings) *time.Duration { return &t.FetchTimeout }},
	{key: "controller.quorum.election.backoff.max.ms", min: 1, doc: "cap of the exponential backoff between lost elections",
		dur: func(t *Settings) *time.Duration { return &t.ElectionBackoffMax }},
	{key: keyRequestTimeout, min: 1, doc: "a quorum request unanswered for this long is retried",
		dur: func(t *Settings) *time.Duration { return &t.RequestTimeout }},
	{key: "controller.quorum.retry.backoff.ms", min: 0, doc: "pause before retrying a failed quorum request",
		dur: func(t *Settings) *time.Duration { return &t.RetryBackoff }},
	{key: "controller.quorum.append.linger.ms", min: 0, doc: "the leader gathers records this long before writing a batch",
		dur: func(t *Settings) *time.Duration { return &t.AppendLinger }},
	{key: keyFetchMaxWait, min: 0, doc: "the leader parks a Fetch with nothing new this long (a constant, 500, in Kafka); under push, its heartbeat interval",
		dur: func(t *Settings) *time.Duration { return &t.FetchMaxWait }},
	{key: keyReplication, replication: true, doc: "the quorum replicates by pull (Kafka's: followers fetch) or push (classic Raft's: the leader sends AppendEntries)"},
	{key: "kraftlab.quorum.flush", flush: true, doc: "fsync the metadata log before acknowledging (always, as Kafka) or leave it to the page cache (never)"},
	{key: "metadata.max.idle.interval.ms", min: 0, doc: "the active controller appends a NoOpRecord after this long without writes; 0 disables",
		dur: func(t *Settings) *time.Duration { return &t.MetadataMaxIdleInterval }},
	{key: "metadata.log.max.record.bytes.between.snapshots", min: 1, max: maxBytes, doc: "snapshot after this many bytes committed since the last snapshot",
		num: func(t *Settings) *int64 { return &t.SnapshotMaxNewRecordBytes }},
	{key: "metadata.log.max.snapshot.interval.ms", min: 0, doc: "snapshot at least this often when something was committed; 0 disables",
		dur: func(t *Settings) *time.Duration { return &t.SnapshotMaxInterval }},
	{key: keySessionTimeout, min: 1, doc: "the active controller fences a broker it has not heard a heartbeat from for this long",
		dur: func(t *Settings) *time.Duration { return &t.BrokerSessionTimeout }},
	{key: keyHeartbeatInterval, min: 1, doc: "how often a broker sends BrokerHeartbeat to the active controller",
		dur: func(t *Settings) *time.Duration { return &t.BrokerHeartbeatInterval }},
	{key: "zookeeper.session.timeout.ms", min: 1000, doc: "zk mode: ZooKeeper ends a silent broker's session, and its registration, after this long",
		dur: func(t *Settings) *time.Duration { return &t.ZooKeeperSessionTimeout }},
	{key: "num.replica.fetchers", min: 1, max: maxReplicaFetchers, doc: "replica fetcher threads per leader broker on each broker",
		num: func(t *Settings) *int64 { return &t.NumReplicaFetchers }},
	{key: keyReplicaLagTimeMax, min: 1, doc: "a follower not caught up with its leader for this long leaves the ISR",
		dur: func(t *Settings) *time.Duration { return &t.ReplicaLagTimeMax }},
	{key: keyReplicaFetchWaitMax, min: 1, doc: "a leader parks a follower's fetch with too little data this long",
		dur: func(t *Settings) *time.Duration { return &t.ReplicaFetchWaitMax }},
	{key: "replica.fetch.backoff.ms", min: 1, doc: "a partition whose fetch failed waits this long before the next",
		dur: func(t *Settings) *time.Duration { return &t.ReplicaFetchBackoff }},
	{key: "replica.fetch.min.bytes", min: 1, max: maxBytes, doc: "a follower's fetch is answered once this much data is there (or the wait ends)",
		num: func(t *Settings) *int64 { return &t.ReplicaFetchMinBytes }},
	{key: "replica.fetch.max.bytes", min: 1, max: maxBytes, doc: "bytes a follower fetches per partition per request (a bigger first batch still comes)",
		num: func(t *Settings) *int64 { return &t.ReplicaFetchMaxBytes }},
	{key: "replica.fetch.response.max.bytes", min: 1, max: maxBytes, doc: "bytes a follower fetches per request in all",
		num: func(t *Settings) *int64 { return &t.ReplicaFetchResponseMaxBytes }},
	{key: "min.insync.replicas", min: 1, max: maxMinInsyncReplicas, doc: "cluster default: while the ISR is smaller (capped at the replication factor) acks=all produces are refused and the high watermark stands still; a topic config overrides it",
		num: func(t *Settings) *int64 { return &t.MinInsyncReplicas }},
	{key: record.EligibleLeaderReplicasFeature, min: 0, max: int64(record.EligibleLeaderReplicasOn), doc: "feature level a new cluster is formatted with (kafka-storage format --feature): 1 keeps the last ISR members as eligible leader replicas (KIP-966), 0 turns that off",
		num: func(t *Settings) *int64 { return &t.EligibleLeaderReplicasVersion }},
	{key: "kraft.version", min: 0, max: int64(raft.KRaftVersion1), doc: "feature level a new cluster's quorum is formatted with: 1 dynamic voters (KIP-853, Kafka 4.4's kafka-storage format --standalone or --initial-controllers: controllers added and removed at run time, a wiped voter comes back an observer), 0 static voters (controller.quorum.voters; kafka-features upgrade --feature kraft.version=1 makes them dynamic)",
		num: func(t *Settings) *int64 { return &t.KRaftVersion }},
	{key: "unclean.leader.election.enable", doc: "cluster default: with no ISR member alive, elect a live replica outside the ISR (may lose data); a topic config overrides it",
		boolean: func(t *Settings) *bool { return &t.UncleanLeaderElectionEnable }},
	{key: "auto.leader.rebalance.enable", doc: "the active controller makes each partition's preferred replica its leader again, where it may lead, every leader.imbalance.check.interval.seconds",
		boolean: func(t *Settings) *bool { return &t.AutoLeaderRebalanceEnable }},
	{key: "leader.imbalance.check.interval.seconds", min: 1, seconds: true, doc: "how often the active controller looks for partitions led by a replica other than their preferred one",
		dur: func(t *Settings) *time.Duration { return &t.LeaderImbalanceCheckInterval }},
	{key: "unclean.leader.election.interval.ms", min: 1, doc: "how often the active controller looks for leaderless partitions that allow an unclean election (internal in Kafka)",
		dur: func(t *Settings) *time.Duration { return &t.UncleanLeaderElectionInterval }},
	{key: "offsets.topic.num.partitions", min: 1, max: maxOffsetsTopicPartitions, doc: "partitions of __consumer_offsets, made on the first FindCoordinator; a group lives on the one its id hashes to",
		num: func(t *Settings) *int64 { return &t.OffsetsTopicNumPartitions }},
	{key: "offsets.topic.replication.factor", min: 1, max: math.MaxInt16, doc: "replicas of each partition of __consumer_offsets; with fewer brokers registered FindCoordinator answers COORDINATOR_NOT_AVAILABLE",
		num: func(t *Settings) *int64 { return &t.OffsetsTopicReplicationFactor }},
	{key: "group.initial.rebalance.delay.ms", min: 0, doc: "the first rebalance of an empty group waits this long for more members, again for each that comes, up to the rebalance timeout",
		dur: func(t *Settings) *time.Duration { return &t.GroupInitialRebalanceDelay }},
	{key: "group.consumer.session.timeout.ms", min: 1, doc: "a consumer group member (group.protocol=consumer) that sends no heartbeat for this long is fenced and its partitions go to the others",
		dur: func(t *Settings) *time.Duration { return &t.GroupConsumerSessionTimeout }},
	{key: "group.consumer.heartbeat.interval.ms", min: 1, doc: "how often a consumer group member (group.protocol=consumer) is told to heartbeat; keep it below the session timeout",
		dur: func(t *Settings) *time.Duration { return &t.GroupConsumerHeartbeatInterval }},
	{key: "max.broker.partitions", min: 1, max: maxBrokerPartitions, doc: "partition replicas one broker may host; creating more is refused (KIP-578; 1000 here, each replica holds files)",
		num: func(t *Settings) *int64 { return &t.MaxBrokerPartitions }},
	{key: "message.max.bytes", min: storage.BatchHeaderSize, max: math.MaxInt32, doc: "the largest batch a producer may append (a compressed one may decompress to 64 times this)",
		num: func(t *Settings) *int64 { return &t.MessageMaxBytes }},
	{key: "fetch.max.bytes", min: 1, max: math.MaxInt32, doc: "bytes one Fetch answer holds at most (plus one batch), whatever it asks",
		num: func(t *Settings) *int64 { return &t.FetchMaxBytes }},
	{key: "socket.request.max.bytes", min: 1 * kib, max: maxBytes, doc: "the largest request a broker reads (a request other than Produce: 1 MiB)",
		num: func(t *Settings) *int64 { return &t.SocketRequestMaxBytes }},
	{key: "kraftlab.controller.socket.request.max.bytes", min: 1 * kib, max: mib, doc: "the largest request a controller reads (socket.request.max.bytes in Kafka; controllers serve no Produce)",
		num: func(t *Settings) *int64 { return &t.ControllerSocketRequestMaxBytes }},
	{key: "queued.max.request.bytes", min: -1, max: maxBytes, kafka: "-1 (unbounded)", doc: "memory requests may hold in a node, once for members and once for everyone else; -1 or 0 unbounded",
		num: func(t *Settings) *int64 { return &t.QueuedMaxRequestBytes }},
	{key: "max.connections", min: 1, max: math.MaxInt32, kafka: "2147483647", doc: "connections to a node; a member over it closes a stranger's least recently used one",
		num: func(t *Settings) *int64 { return &t.MaxConnections }},
	{key: "max.connections.per.ip", min: 1, max: math.MaxInt32, doc: "connections to a node from one address, members not counted (every node is 127.0.0.1)",
		num: func(t *Settings) *int64 { return &t.MaxConnectionsPerIP }},
	{key: keyConnectionsMaxIdle, min: 1, doc: "a connection with nothing in flight and no traffic for this long is closed",
		dur: func(t *Settings) *time.Duration { return &t.ConnectionsMaxIdle }},
	{key: keyFailedAuthDelay, min: 0, doc: "a failed authentication is answered this late, then its connection closed",
		dur: func(t *Settings) *time.Duration { return &t.FailedAuthenticationDelay }},
	{key: "sasl.server.max.receive.size", min: 1 * kib, max: maxBytes, doc: "the largest frame a node reads during a SASL login",
		num: func(t *Settings) *int64 { return &t.SaslServerMaxReceiveSize }},
	{key: "kraftlab.sasl.authentication.timeout.ms", min: 1, doc: "a SASL login must be done this long after its SaslHandshake, or after the accept of a connection over a limit (none in Kafka)",
		dur: func(t *Settings) *time.Duration { return &t.SaslAuthenticationTimeout }},
}

const (
	kib = 1024
	mib = 1024 * kib
)

// Kafka's defaults of the group coordinator's settings
// (GroupCoordinatorConfig).
const (
	DefaultOffsetsTopicNumPartitions     = 50
	DefaultOffsetsTopicReplicationFactor = 3
	DefaultGroupInitialRebalanceDelay    = 3 * time.Second
	// Kafka's defaults for consumer groups (KIP-848).
	DefaultGroupConsumerSessionTimeout    = 45 * time.Second
	DefaultGroupConsumerHeartbeatInterval = 5 * time.Second
)

// maxOffsetsTopicPartitions bounds offsets.topic.num.partitions, as
// max.broker.partitions bounds what one broker hosts.
const maxOffsetsTopicPartitions = 1000

// maxMinInsyncReplicas bounds min.insync.replicas: no partition has more
// replicas than a playground has brokers.
const maxMinInsyncReplicas = 99

// maxBrokerPartitions bounds max.broker.partitions: KIP-578's int range.
const maxBrokerPartitions = math.MaxInt32

// maxReplicaFetchers bounds num.replica.fetchers: each is a goroutine and
// a connection per leader broker.
const maxReplicaFetchers = 64

func settingByKey(key string) (setting, bool) {
	for _, s := range settings {
		if s.key == key {
			return s, true
		}
	}
	return setting{}, false
}

func (s setting) unit() string {
	switch {
	case s.flush:
		return storage.FlushAlways.String() + "|" + storage.FlushNever.String()
	case s.replication:
		return raft.Pull.String() + "|" + raft.Push.String()
	case s.boolean != nil:
		return "true|false"
	case s.dur != nil && s.seconds:
		return "s"
	case s.dur != nil:
		return "ms"
	case strings.HasSuffix(s.key, ".bytes") || strings.HasSuffix(s.key, "between.snapshots") || strings.HasSuffix(s.key, ".size"):
		return "bytes"
	}
	return "count"
}

func (s setting) limit() int64 {
	if s.dur != nil {
		return maxMillis / s.step().Milliseconds()
	}
	return s.max
}

// step is the unit of a duration key's numbers.
func (s setting) step() time.Duration {
	if s.seconds {
		return time.Second
	}
	return time.Millisecond
}

func (s setting) set(t *Settings, value string) error {
	if s.flush {
		for _, p := range []storage.FlushPolicy{storage.FlushAlways, storage.FlushNever} {
			if value == p.String() {
				t.Flush = p
				return nil
			}
		}
		return fmt.Errorf("bad value %q for %s: want %s or %s", value, s.key, storage.FlushAlways, storage.FlushNever)
	}
	if s.replication {
		r, err := raft.ParseReplication(value)
		if err != nil {
			return fmt.Errorf("bad value %q for %s: want %s or %s", value, s.key, raft.Pull, raft.Push)
		}
		t.Replication = r
		return nil
	}
	if s.boolean != nil {
		// Kafka's ConfigDef takes either word in any case.
		switch strings.ToLower(value) {
		case "true":
			*s.boolean(t) = true
		case "false":
			*s.boolean(t) = false
		default:
			return fmt.Errorf("bad value %q for %s: want true or false", value, s.key)
		}
		return nil
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		if s.kafka != "" {
			return fmt.Errorf("bad value %q for %s: want a whole number of %s, e.g. %s (kraftlab's default; Kafka's is %s)", value, s.key, s.unit(), s.get(&kafka), s.kafka)
		}
		return fmt.Errorf("bad value %q for %s: want a whole number of %s, e.g. %s (Kafka's default)", value, s.key, s.unit(), s.get(&kafka))
	}
	if n < s.min || n > s.limit() {
		return fmt.Errorf("bad value %d for %s: must be between %d and %d %s", n, s.key, s.min, s.limit(), s.unit())
	}
	if s.dur != nil {
		*s.dur(t) = time.Duration(n) * s.step()
	} else {
		*s.num(t) = n
	}
	return nil
}

func (s setting) get(t *Settings) string {
	switch {
	case s.flush:
		return t.Flush.String()
	case s.replication:
		return t.Replication.String()
	case s.boolean != nil:
		return strconv.FormatBool(*s.boolean(t))
	case s.dur != nil:
		return fmt.Sprint(int64(*s.dur(t) / s.step()))
	}
	return fmt.Sprint(*s.num(t))
}

// check validates a value that may have been set directly on the struct.
func (s setting) check(t *Settings) error {
	if s.flush {
		if t.Flush != storage.FlushAlways && t.Flush != storage.FlushNever {
			return fmt.Errorf("bad value %v for %s: want %s or %s", t.Flush, s.key, storage.FlushAlways, storage.FlushNever)
		}
		return nil
	}
	if s.replication {
		if t.Replication != raft.Pull && t.Replication != raft.Push {
			return fmt.Errorf("bad value %v for %s: want %s or %s", t.Replication, s.key, raft.Pull, raft.Push)
		}
		return nil
	}
	if s.boolean != nil {
		return nil
	}
	var n int64
	if s.dur != nil {
		d := *s.dur(t)
		if d%s.step() != 0 {
			return fmt.Errorf("bad value %v for %s: must be whole %s", d, s.key, map[time.Duration]string{time.Second: "seconds", time.Millisecond: "milliseconds"}[s.step()])
		}
		n = int64(d / s.step())
	} else {
		n = *s.num(t)
	}
	if n < s.min || n > s.limit() {
		return fmt.Errorf("bad value %d for %s: must be between %d and %d %s", n, s.key, s.min, s.limit(), s.unit())
	}
	return nil
}

// ErrUnknownKey is wrapped by the error for a --set key kraftlab does not know.
var ErrUnknownKey = errors.New("unknown config key")

func unknownKeyError(key string) error {
	hint := ""
	if near := nearestKey(key); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Errorf("%w %q%s; valid keys: %s", ErrUnknownKey, key, hint, strings.Join(Keys(), ", "))
}

// nearestKey returns the known key closest to a mistyped one, if it is
// close enough to be a typo.
func nearestKey(key string) string {
	best, bestDist := "", 4
	for _, s := range settings {
		if d := closest.Distance(key, s.key); d < bestDist {
			best, bestDist = s.key, d
		}
	}
	return best
}
