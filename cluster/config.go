package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/internal/closest"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
)

// Limits of a playground's shape. Controllers take IDs 1..N and brokers
// 101..100+M, so neither range may reach the other.
const (
	MaxControllers = 99
	MaxBrokers     = 99
	// FirstBrokerID is the ID of the first broker; broker i has FirstBrokerID+i-1.
	FirstBrokerID = 101
)

// Config is everything the Engine needs to start a playground.
type Config struct {
	// Controllers is the number of KRaft voters, with node IDs 1..Controllers.
	Controllers int
	// Brokers is the number of brokers, with node IDs 101..100+Brokers. They
	// observe the metadata quorum: they fetch it but never vote.
	Brokers int
	// Profile names the timing profile Timing started from.
	Profile string
	// Timing holds every timeout and size, after --set overrides.
	Timing Timing
	// DataDir is where the nodes keep their logs, one folder per node. Empty
	// means a fresh temporary folder that Engine.Close removes; a folder the
	// user named is kept.
	DataDir string
	// Logger, if set, receives every node's server log (Kafka's
	// server.log), each line with its node's ID; nil discards it.
	Logger *slog.Logger
}

// DefaultConfig is the shape `kraftlab up` starts without flags: three
// controllers and three brokers on the workshop profile.
func DefaultConfig() Config {
	t, _ := ProfileTiming(DefaultProfile)
	return Config{Controllers: 3, Brokers: 3, Profile: DefaultProfile, Timing: t}
}

// NewConfig builds a Config from a profile name and key=value overrides
// (Kafka config names, applied in order) and validates it.
func NewConfig(controllers, brokers int, profile string, overrides []string, dataDir string) (Config, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	t, err := ProfileTiming(profile)
	if err != nil {
		return Config{}, err
	}
	if err := t.Apply(overrides); err != nil {
		return Config{}, err
	}
	c := Config{Controllers: controllers, Brokers: brokers, Profile: profile, Timing: t, DataDir: dataDir}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the shape and the timing.
func (c Config) Validate() error {
	if c.Controllers < 1 || c.Controllers > MaxControllers {
		return fmt.Errorf("controllers must be between 1 and %d, got %d", MaxControllers, c.Controllers)
	}
	if c.Brokers < 0 || c.Brokers > MaxBrokers {
		return fmt.Errorf("brokers must be between 0 and %d, got %d", MaxBrokers, c.Brokers)
	}
	return c.Timing.Validate()
}

// ControllerIDs returns the controllers' node IDs, 1..Controllers.
func (c Config) ControllerIDs() []int32 {
	ids := make([]int32, c.Controllers)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	return ids
}

// BrokerIDs returns the brokers' node IDs, 101..100+Brokers.
func (c Config) BrokerIDs() []int32 {
	ids := make([]int32, c.Brokers)
	for i := range ids {
		ids[i] = int32(FirstBrokerID + i)
	}
	return ids
}

// Timing is every timeout, interval and size of a playground. Each field is
// set by the Kafka configuration key named in its comment (see Settings),
// in milliseconds for durations, so that learners can map it to Kafka's
// documentation.
type Timing struct {
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
	FetchMaxWait time.Duration
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
	// MinInsyncReplicas is min.insync.replicas, the cluster's default: an
	// acks=all produce is refused while the ISR is smaller. A topic's own
	// config, or a dynamic cluster default, overrides it.
	MinInsyncReplicas int64
	// UncleanLeaderElectionEnable is unclean.leader.election.enable, the
	// cluster's default: when no ISR member is alive, the controller may
	// elect a live replica outside the ISR, losing what only the ISR had.
	// A topic's own config overrides it.
	UncleanLeaderElectionEnable bool
	// UncleanLeaderElectionInterval is unclean.leader.election.interval.ms
	// (an internal key in Kafka): how often the active controller looks
	// for leaderless partitions that allow an unclean election.
	UncleanLeaderElectionInterval time.Duration

	// The listeners: what peers and clients may make a node hold. The
	// same in every profile (see listenerLimits).

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
	// once for everyone else; -1 is unbounded, as Kafka's default.
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

// listenerLimits sets the listener settings, the same in every profile:
// Kafka's defaults, except that a node bounds its connections and request
// memory, which Kafka leaves unbounded by default, because a playground
// runs every node in one process.
func listenerLimits(t Timing) Timing {
	t.SocketRequestMaxBytes = 100 * mib
	t.ControllerSocketRequestMaxBytes = mib
	t.QueuedMaxRequestBytes = wire.DefaultQueuedMaxRequestBytes
	t.MaxConnections = wire.DefaultMaxConnections
	t.MaxConnectionsPerIP = math.MaxInt32
	t.ConnectionsMaxIdle = wire.DefaultIdleTimeout
	t.FailedAuthenticationDelay = wire.DefaultFailedAuthenticationDelay
	t.SaslServerMaxReceiveSize = wire.DefaultSaslMaxReceiveSize
	t.SaslAuthenticationTimeout = wire.DefaultAuthenticationTimeout
	return t
}

// Timing profile names.
const (
	ProfileWorkshop = "workshop"
	ProfileKafka    = "kafka"
	ProfileFast     = "fast"
	DefaultProfile  = ProfileWorkshop
)

// Profiles lists the timing profiles, the default first.
func Profiles() []string { return []string{ProfileWorkshop, ProfileKafka, ProfileFast} }

const (
	kib = 1024
	mib = 1024 * kib
)

// kafkaTiming is Apache Kafka's defaults (QuorumConfig, KRaftConfigs,
// ReplicationConfigs; the raft fetch wait is KafkaRaftClient's constant).
var kafkaTiming = func() Timing {
	q := raft.DefaultConfig() // the controller.quorum.* defaults, written once there
	return listenerLimits(Timing{
		ElectionTimeout:           q.ElectionTimeout,
		FetchTimeout:              q.FetchTimeout,
		ElectionBackoffMax:        q.ElectionBackoffMax,
		RequestTimeout:            q.RequestTimeout,
		RetryBackoff:              q.RetryBackoff,
		AppendLinger:              q.AppendLinger,
		FetchMaxWait:              q.FetchMaxWait,
		Flush:                     storage.FlushAlways,
		MetadataMaxIdleInterval:   500 * time.Millisecond,
		SnapshotMaxNewRecordBytes: 20 * mib,
		SnapshotMaxInterval:       time.Hour,
		BrokerSessionTimeout:      9 * time.Second,
		BrokerHeartbeatInterval:   2 * time.Second,

		NumReplicaFetchers:            1,
		ReplicaLagTimeMax:             30 * time.Second,
		ReplicaFetchWaitMax:           500 * time.Millisecond,
		ReplicaFetchBackoff:           time.Second,
		ReplicaFetchMinBytes:          1,
		ReplicaFetchMaxBytes:          mib,
		ReplicaFetchResponseMaxBytes:  10 * mib,
		MinInsyncReplicas:             1,
		UncleanLeaderElectionEnable:   false,
		UncleanLeaderElectionInterval: 5 * time.Minute,
	})
}()

// workshopTiming is tuned for a projector. Kafka's quorum is already quick
// (a failover takes about two seconds), too quick to watch. So the quorum is
// stretched, keeping Kafka's order and ratios where they matter:
//   - fetch timeout 4 s, election timeout 2 s (Kafka's 2:1): after a kill the
//     followers' "last fetch" visibly ages for a few seconds, then Prospective
//     and Candidate last long enough to be seen at the TUI's refresh rate, and
//     a new leader appears within about 5 s; an isolated leader resigns after
//     1.5 × 4 = 6 s (check-quorum).
//   - the parked-fetch wait (1 s) and the NoOpRecord interval (1 s) keep
//     Kafka's 1/4 ratio to the fetch timeout; the log end offset then ticks
//     once a second, slowly enough to read.
//   - brokers heartbeat every 1.5 s and are fenced after 6 s without one
//     (Kafka's 2 s and 9 s, about the same 1:4.5): a cut-off broker is
//     fenced within a few seconds, after several missed heartbeats.
//   - a stuck follower leaves the ISR after 6 s (Kafka's 30 s), checked
//     every 3 s, so a shrink shows within ten seconds of a kill; fetches
//     keep Kafka's 500 ms wait, well under it. An unclean election, when
//     a topic allows one, comes within 5 s (Kafka looks every 5 min).
var workshopTiming = listenerLimits(Timing{
	ElectionTimeout:           2000 * time.Millisecond,
	FetchTimeout:              4000 * time.Millisecond,
	ElectionBackoffMax:        2000 * time.Millisecond,
	RequestTimeout:            4000 * time.Millisecond,
	RetryBackoff:              40 * time.Millisecond,
	AppendLinger:              25 * time.Millisecond,
	FetchMaxWait:              1000 * time.Millisecond,
	Flush:                     storage.FlushAlways,
	MetadataMaxIdleInterval:   1000 * time.Millisecond,
	SnapshotMaxNewRecordBytes: 20 * mib,
	SnapshotMaxInterval:       time.Hour,
	BrokerSessionTimeout:      6 * time.Second,
	BrokerHeartbeatInterval:   1500 * time.Millisecond,

	NumReplicaFetchers:            1,
	ReplicaLagTimeMax:             6 * time.Second,
	ReplicaFetchWaitMax:           500 * time.Millisecond,
	ReplicaFetchBackoff:           time.Second,
	ReplicaFetchMinBytes:          1,
	ReplicaFetchMaxBytes:          mib,
	ReplicaFetchResponseMaxBytes:  10 * mib,
	MinInsyncReplicas:             1,
	UncleanLeaderElectionEnable:   false,
	UncleanLeaderElectionInterval: 5 * time.Second,
})

// fastTiming is for tests and scenarios: Kafka's quorum timing divided by
// ten, so that a failover takes a few hundred milliseconds, with the same
// 1/4 ratio of parked-fetch wait and NoOpRecord interval to the fetch
// timeout. Writes are not fsynced. If spurious elections show up under the
// race detector on a busy 2-core machine, raise the fetch timeout first.
// The data plane is scaled less than the quorum: a follower leaves the ISR
// after 1.5 s, because a fetcher starved of CPU for a few hundred
// milliseconds must not flap the ISR of a test that did not ask for it.
var fastTiming = listenerLimits(Timing{
	ElectionTimeout:           100 * time.Millisecond,
	FetchTimeout:              200 * time.Millisecond,
	ElectionBackoffMax:        100 * time.Millisecond,
	RequestTimeout:            200 * time.Millisecond,
	RetryBackoff:              10 * time.Millisecond,
	AppendLinger:              5 * time.Millisecond,
	FetchMaxWait:              50 * time.Millisecond,
	Flush:                     storage.FlushNever,
	MetadataMaxIdleInterval:   50 * time.Millisecond,
	SnapshotMaxNewRecordBytes: 20 * mib,
	SnapshotMaxInterval:       time.Hour,
	BrokerSessionTimeout:      900 * time.Millisecond,
	BrokerHeartbeatInterval:   200 * time.Millisecond,

	NumReplicaFetchers:            1,
	ReplicaLagTimeMax:             1500 * time.Millisecond,
	ReplicaFetchWaitMax:           50 * time.Millisecond,
	ReplicaFetchBackoff:           100 * time.Millisecond,
	ReplicaFetchMinBytes:          1,
	ReplicaFetchMaxBytes:          mib,
	ReplicaFetchResponseMaxBytes:  10 * mib,
	MinInsyncReplicas:             1,
	UncleanLeaderElectionEnable:   false,
	UncleanLeaderElectionInterval: 200 * time.Millisecond,
})

// ProfileTiming returns a profile's timing.
func ProfileTiming(name string) (Timing, error) {
	switch name {
	case ProfileWorkshop:
		return workshopTiming, nil
	case ProfileKafka:
		return kafkaTiming, nil
	case ProfileFast:
		return fastTiming, nil
	}
	return Timing{}, fmt.Errorf("unknown profile %q; valid profiles: %s", name, strings.Join(Profiles(), ", "))
}

// Apply applies key=value overrides in order.
func (t *Timing) Apply(overrides []string) error {
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
func (t *Timing) Set(key, value string) error {
	s, ok := settingByKey(key)
	if !ok {
		return unknownKeyError(key)
	}
	return s.set(t, value)
}

// Get returns one value by its configuration key, as Set accepts it.
func (t Timing) Get(key string) (string, error) {
	s, ok := settingByKey(key)
	if !ok {
		return "", unknownKeyError(key)
	}
	return s.get(&t), nil
}

// Validate checks each value's range and the relations Kafka relies on.
func (t Timing) Validate() error {
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
	// Kafka only logs an error for this one; the playground refuses it.
	if 2*t.BrokerHeartbeatInterval > t.BrokerSessionTimeout {
		return fmt.Errorf("%s must be at most half of %s (%s=%s, %s=%s): otherwise one late heartbeat fences a healthy broker",
			keyHeartbeatInterval, keySessionTimeout, keyHeartbeatInterval, t.mustGet(keyHeartbeatInterval), keySessionTimeout, t.mustGet(keySessionTimeout))
	}
	return nil
}

// RaftConfig maps the timing onto the quorum configuration of node id, a
// voter when voters holds it and an observer otherwise.
func (t Timing) RaftConfig(id int32, voters []int32, clusterID string) raft.Config {
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
	return c
}

func (t Timing) mustGet(key string) string {
	v, _ := t.Get(key)
	return v
}

// Setting describes one configuration key of Timing.
type Setting struct {
	Key string
	// Unit is "ms", "bytes", "count" or one of a fixed set of words.
	Unit string
	// Doc is one line saying what the key does.
	Doc string
}

// Settings lists every configuration key that --set accepts, in the order
// a reader meets them: quorum, metadata log, brokers, then the data plane.
func Settings() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		out[i] = Setting{Key: s.key, Unit: s.unit(), Doc: s.doc}
	}
	return out
}

// Keys lists every configuration key that --set accepts.
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
	dur func(*Timing) *time.Duration
	num func(*Timing) *int64
	max int64 // largest allowed number (num only)
	// flush marks the flush policy's key, valued always or never.
	flush bool
	// boolean is a true|false key's field.
	boolean func(*Timing) *bool
	// kafka is Kafka's default, where kraftlab's differs in every
	// profile (the kafka profile included).
	kafka string
}

var settings = []setting{
	{key: "controller.quorum.election.timeout.ms", min: 1, doc: "wait for votes before trying again (randomised to [T, 2T))",
		dur: func(t *Timing) *time.Duration { return &t.ElectionTimeout }},
	{key: keyFetchTimeout, min: 1, doc: "no successful fetch from the leader for this long starts an election; a leader not fetched from by a majority for 1.5x this resigns",
		dur: func(t *Timing) *time.Duration { return &t.FetchTimeout }},
	{key: "controller.quorum.election.backoff.max.ms", min: 1, doc: "cap of the exponential backoff between lost elections",
		dur: func(t *Timing) *time.Duration { return &t.ElectionBackoffMax }},
	{key: keyRequestTimeout, min: 1, doc: "a quorum request unanswered for this long is retried",
		dur: func(t *Timing) *time.Duration { return &t.RequestTimeout }},
	{key: "controller.quorum.retry.backoff.ms", min: 0, doc: "pause before retrying a failed quorum request",
		dur: func(t *Timing) *time.Duration { return &t.RetryBackoff }},
	{key: "controller.quorum.append.linger.ms", min: 0, doc: "the leader gathers records this long before writing a batch",
		dur: func(t *Timing) *time.Duration { return &t.AppendLinger }},
	{key: keyFetchMaxWait, min: 0, doc: "the leader parks a Fetch with nothing new this long (a constant, 500, in Kafka)",
		dur: func(t *Timing) *time.Duration { return &t.FetchMaxWait }},
	{key: "kraftlab.quorum.flush", flush: true, doc: "fsync the metadata log before acknowledging (always, as Kafka) or leave it to the page cache (never)"},
	{key: "metadata.max.idle.interval.ms", min: 0, doc: "the active controller appends a NoOpRecord after this long without writes; 0 disables",
		dur: func(t *Timing) *time.Duration { return &t.MetadataMaxIdleInterval }},
	{key: "metadata.log.max.record.bytes.between.snapshots", min: 1, max: maxBytes, doc: "snapshot after this many bytes committed since the last snapshot",
		num: func(t *Timing) *int64 { return &t.SnapshotMaxNewRecordBytes }},
	{key: "metadata.log.max.snapshot.interval.ms", min: 0, doc: "snapshot at least this often when something was committed; 0 disables",
		dur: func(t *Timing) *time.Duration { return &t.SnapshotMaxInterval }},
	{key: keySessionTimeout, min: 1, doc: "the active controller fences a broker it has not heard a heartbeat from for this long",
		dur: func(t *Timing) *time.Duration { return &t.BrokerSessionTimeout }},
	{key: keyHeartbeatInterval, min: 1, doc: "how often a broker sends BrokerHeartbeat to the active controller",
		dur: func(t *Timing) *time.Duration { return &t.BrokerHeartbeatInterval }},
	{key: "num.replica.fetchers", min: 1, max: maxReplicaFetchers, doc: "replica fetcher threads per leader broker on each broker",
		num: func(t *Timing) *int64 { return &t.NumReplicaFetchers }},
	{key: keyReplicaLagTimeMax, min: 1, doc: "a follower not caught up with its leader for this long leaves the ISR",
		dur: func(t *Timing) *time.Duration { return &t.ReplicaLagTimeMax }},
	{key: keyReplicaFetchWaitMax, min: 1, doc: "a leader parks a follower's fetch with too little data this long",
		dur: func(t *Timing) *time.Duration { return &t.ReplicaFetchWaitMax }},
	{key: "replica.fetch.backoff.ms", min: 1, doc: "a partition whose fetch failed waits this long before the next",
		dur: func(t *Timing) *time.Duration { return &t.ReplicaFetchBackoff }},
	{key: "replica.fetch.min.bytes", min: 1, max: maxBytes, doc: "a follower's fetch is answered once this much data is there (or the wait ends)",
		num: func(t *Timing) *int64 { return &t.ReplicaFetchMinBytes }},
	{key: "replica.fetch.max.bytes", min: 1, max: maxBytes, doc: "bytes a follower fetches per partition per request (a bigger first batch still comes)",
		num: func(t *Timing) *int64 { return &t.ReplicaFetchMaxBytes }},
	{key: "replica.fetch.response.max.bytes", min: 1, max: maxBytes, doc: "bytes a follower fetches per request in all",
		num: func(t *Timing) *int64 { return &t.ReplicaFetchResponseMaxBytes }},
	{key: "min.insync.replicas", min: 1, max: MaxBrokers, doc: "cluster default: acks=all produces are refused while the ISR is smaller; a topic config overrides it",
		num: func(t *Timing) *int64 { return &t.MinInsyncReplicas }},
	{key: "unclean.leader.election.enable", doc: "cluster default: with no ISR member alive, elect a live replica outside the ISR (may lose data); a topic config overrides it",
		boolean: func(t *Timing) *bool { return &t.UncleanLeaderElectionEnable }},
	{key: "unclean.leader.election.interval.ms", min: 1, doc: "how often the active controller looks for leaderless partitions that allow an unclean election (internal in Kafka)",
		dur: func(t *Timing) *time.Duration { return &t.UncleanLeaderElectionInterval }},
	{key: "socket.request.max.bytes", min: 1 * kib, max: maxBytes, doc: "the largest request a broker reads (a request other than Produce: 1 MiB)",
		num: func(t *Timing) *int64 { return &t.SocketRequestMaxBytes }},
	{key: "kraftlab.controller.socket.request.max.bytes", min: 1 * kib, max: mib, doc: "the largest request a controller reads (socket.request.max.bytes in Kafka; controllers serve no Produce)",
		num: func(t *Timing) *int64 { return &t.ControllerSocketRequestMaxBytes }},
	{key: "queued.max.request.bytes", min: -1, max: maxBytes, kafka: "-1 (unbounded)", doc: "memory requests may hold in a node, once for members and once for everyone else; -1 or 0 unbounded",
		num: func(t *Timing) *int64 { return &t.QueuedMaxRequestBytes }},
	{key: "max.connections", min: 1, max: math.MaxInt32, kafka: "2147483647", doc: "connections to a node; a member over it closes a stranger's least recently used one",
		num: func(t *Timing) *int64 { return &t.MaxConnections }},
	{key: "max.connections.per.ip", min: 1, max: math.MaxInt32, doc: "connections to a node from one address, members not counted (every node is 127.0.0.1)",
		num: func(t *Timing) *int64 { return &t.MaxConnectionsPerIP }},
	{key: keyConnectionsMaxIdle, min: 1, doc: "a connection with nothing in flight and no traffic for this long is closed",
		dur: func(t *Timing) *time.Duration { return &t.ConnectionsMaxIdle }},
	{key: keyFailedAuthDelay, min: 0, doc: "a failed authentication is answered this late, then its connection closed",
		dur: func(t *Timing) *time.Duration { return &t.FailedAuthenticationDelay }},
	{key: "sasl.server.max.receive.size", min: 1 * kib, max: maxBytes, doc: "the largest frame a node reads during a SASL login",
		num: func(t *Timing) *int64 { return &t.SaslServerMaxReceiveSize }},
	{key: "kraftlab.sasl.authentication.timeout.ms", min: 1, doc: "a SASL login must be done this long after its SaslHandshake, or after the accept of a connection over a limit (none in Kafka)",
		dur: func(t *Timing) *time.Duration { return &t.SaslAuthenticationTimeout }},
}

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
	case s.boolean != nil:
		return "true|false"
	case s.dur != nil:
		return "ms"
	case strings.HasSuffix(s.key, ".bytes") || strings.HasSuffix(s.key, "between.snapshots") || strings.HasSuffix(s.key, ".size"):
		return "bytes"
	}
	return "count"
}

func (s setting) limit() int64 {
	if s.dur != nil {
		return maxMillis
	}
	return s.max
}

func (s setting) set(t *Timing, value string) error {
	if s.flush {
		for _, p := range []storage.FlushPolicy{storage.FlushAlways, storage.FlushNever} {
			if value == p.String() {
				t.Flush = p
				return nil
			}
		}
		return fmt.Errorf("bad value %q for %s: want %s or %s", value, s.key, storage.FlushAlways, storage.FlushNever)
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
			return fmt.Errorf("bad value %q for %s: want a whole number of %s, e.g. %s (kraftlab's default; Kafka's is %s)", value, s.key, s.unit(), s.get(&kafkaTiming), s.kafka)
		}
		return fmt.Errorf("bad value %q for %s: want a whole number of %s, e.g. %s (Kafka's default)", value, s.key, s.unit(), s.get(&kafkaTiming))
	}
	if n < s.min || n > s.limit() {
		return fmt.Errorf("bad value %d for %s: must be between %d and %d %s", n, s.key, s.min, s.limit(), s.unit())
	}
	if s.dur != nil {
		*s.dur(t) = time.Duration(n) * time.Millisecond
	} else {
		*s.num(t) = n
	}
	return nil
}

func (s setting) get(t *Timing) string {
	switch {
	case s.flush:
		return t.Flush.String()
	case s.boolean != nil:
		return strconv.FormatBool(*s.boolean(t))
	case s.dur != nil:
		return fmt.Sprint(s.dur(t).Milliseconds())
	}
	return fmt.Sprint(*s.num(t))
}

// check validates a value that may have been set directly on the struct.
func (s setting) check(t *Timing) error {
	if s.flush {
		if t.Flush != storage.FlushAlways && t.Flush != storage.FlushNever {
			return fmt.Errorf("bad value %v for %s: want %s or %s", t.Flush, s.key, storage.FlushAlways, storage.FlushNever)
		}
		return nil
	}
	if s.boolean != nil {
		return nil
	}
	var n int64
	if s.dur != nil {
		d := *s.dur(t)
		if d%time.Millisecond != 0 {
			return fmt.Errorf("bad value %v for %s: must be whole milliseconds", d, s.key)
		}
		n = d.Milliseconds()
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
