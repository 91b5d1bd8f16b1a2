package fetcher

import "time"

// ReplicaState is a partition's phase in its fetcher thread (Kafka's
// ReplicaState).
type ReplicaState int8

const (
	// Fetching: the partition is in fetch requests; divergence is found
	// from the DivergingEpoch the leader answers with.
	Fetching ReplicaState = iota
	// Truncating: the partition must truncate to its fetch offset before
	// it fetches, because its log has no leader epoch to compare with the
	// leader's.
	Truncating
)

// String names the state as Kafka does.
func (s ReplicaState) String() string {
	switch s {
	case Fetching:
		return "Fetching"
	case Truncating:
		return "Truncating"
	}
	return "Unknown"
}

// PartitionFetchState is where a partition stands in its thread (Kafka's
// PartitionFetchState).
type PartitionFetchState struct {
	TopicID            [16]byte
	FetchOffset        int64
	LastFetchedEpoch   int32
	CurrentLeaderEpoch int32
	State              ReplicaState
	// Lag is the leader's high watermark minus the fetch offset from the
	// last answer, never below zero; HasLag is false before the first.
	Lag    int64
	HasLag bool
	// DelayedUntil is when a partition that hit an error may fetch again;
	// zero when it is not delayed.
	DelayedUntil time.Time
}

// IsReadyForFetch: Fetching and not delayed at now.
func (s PartitionFetchState) IsReadyForFetch(now time.Time) bool {
	return s.State == Fetching && !s.IsDelayed(now)
}

// IsDelayed reports whether the partition waits out a backoff at now.
func (s PartitionFetchState) IsDelayed(now time.Time) bool { return now.Before(s.DelayedUntil) }

// IsReplicaInSync: the last answer showed no lag.
func (s PartitionFetchState) IsReplicaInSync() bool { return s.HasLag && s.Lag <= 0 }

// partitionState is a thread's record of one partition.
type partitionState struct {
	PartitionFetchState
	replica Replica

	// For Stats.
	lastFetch   time.Time
	records     int64
	bytes       int64
	lastError   string
	bytesPerSec *meter
	highWater   int64
	truncations int64
}
