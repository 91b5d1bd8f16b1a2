package view

// PartitionReplica is one replica of a partition as the broker that hosts
// it holds it: what its own log says, not what the leader believes.
type PartitionReplica struct {
	Broker int32 `json:"broker"`
	// Hosted: the broker runs and has opened the replica's log. The
	// offsets below are -1 otherwise.
	Hosted bool `json:"hosted"`
	// LogStartOffset and LogEndOffset bound the replica's log;
	// HighWatermark is the high watermark it knows (a follower learns it
	// from its leader's fetch answers).
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	HighWatermark  int64 `json:"highWatermark"`
	// Leading: the replica is its partition's leader as its broker's
	// ReplicaManager applied the metadata.
	Leading bool `json:"leading"`
	// LeaderLogEndOffset is the follower's log end offset as the leader
	// last heard it in a fetch (the fetch is the acknowledgement), -1 when
	// unknown or for the leader itself; LeaderLastCaughtUpTimestamp is
	// when the leader last knew it caught up (Kafka's lastCaughtUpTimeMs),
	// Unix milliseconds, -1 when never in this leader epoch.
	LeaderLogEndOffset          int64 `json:"leaderLogEndOffset"`
	LeaderLastCaughtUpTimestamp int64 `json:"leaderLastCaughtUpTimestamp"`
	// Damage says what the replica's files had lost when its broker
	// opened it (records it had flushed that were gone: a damaged or
	// truncated file), empty if nothing; Repaired says it has fetched
	// them back since, or leads what it has for want of an intact
	// replica.
	Damage   string `json:"damage,omitempty"`
	Repaired bool   `json:"repaired,omitempty"`
}

// FetchState is a partition's phase in its replica fetcher thread, with
// Kafka's names (ReplicaState).
type FetchState string

// The fetch states.
const (
	// FetchStateFetching: the partition is in its thread's fetches.
	FetchStateFetching FetchState = "Fetching"
	// FetchStateTruncating: it must truncate before it fetches again.
	FetchStateTruncating FetchState = "Truncating"
)

// FetcherThread is one ReplicaFetcherThread of a broker: the partitions
// it fetches from one source broker in a single Fetch request per round.
type FetcherThread struct {
	// Name is Kafka's ReplicaFetcherThread-<fetcherId>-<sourceBrokerId>.
	Name         string `json:"name"`
	FetcherID    int    `json:"fetcherId"`
	SourceBroker int32  `json:"sourceBroker"`
	// Requests counts the fetch requests it sent, Errors those that
	// failed whole, Bytes the record bytes it appended.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	Bytes    int64 `json:"bytes"`
	// LastResponseTimestamp is when its last answer came, Unix
	// milliseconds, -1 before the first.
	LastResponseTimestamp int64              `json:"lastResponseTimestamp"`
	Partitions            []FetcherPartition `json:"partitions"`
}

// FetcherPartition is one partition of a fetcher thread (Kafka's
// PartitionFetchState, with the thread's counters for it).
type FetcherPartition struct {
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	State     FetchState `json:"state"`
	// Delayed: the partition waits out replica.fetch.backoff.ms after an
	// error and is left out of fetches until then.
	Delayed bool `json:"delayed"`
	// FetchOffset is the offset its next fetch asks for; LastFetchedEpoch
	// the epoch of the last batch it appended; CurrentLeaderEpoch the
	// leader epoch it fetches in.
	FetchOffset        int64 `json:"fetchOffset"`
	LastFetchedEpoch   int32 `json:"lastFetchedEpoch"`
	CurrentLeaderEpoch int32 `json:"currentLeaderEpoch"`
	// Lag is the leader's high watermark less the fetch offset at the last
	// answer, -1 before the first (Kafka's ConsumerLag of the replica).
	Lag int64 `json:"lag"`
	// HighWatermark is the leader's, as its last answer said; -1 before.
	HighWatermark int64 `json:"highWatermark"`
	// BytesPerSec is the rate of bytes appended over the last seconds;
	// Records and Bytes count what it appended since the thread took it.
	BytesPerSec float64 `json:"bytesPerSec"`
	Records     int64   `json:"records"`
	Bytes       int64   `json:"bytes"`
	// Truncations counts the times it cut its log back (a DivergingEpoch
	// or an out-of-range offset).
	Truncations int64 `json:"truncations"`
	// LastError is the last error the leader answered or appending met,
	// empty if none.
	LastError string `json:"lastError,omitempty"`
	// Throttled: the broker's follower replication quota counts this
	// partition (follower.replication.throttled.replicas), so it is left
	// out of fetches while the quota is exceeded and it lags.
	Throttled bool `json:"throttled"`
}
