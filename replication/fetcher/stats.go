package fetcher

import "time"

// PartitionStats is a snapshot of one partition of a fetcher thread, for
// views.
type PartitionStats struct {
	TopicPartition
	PartitionFetchState
	// Delayed reports whether the partition was waiting out a backoff when
	// the snapshot was taken.
	Delayed bool
	// LogEndOffset is the local replica's log end offset.
	LogEndOffset int64
	// HighWatermark is the last high watermark the leader sent, -1 before.
	HighWatermark int64
	// LastFetchTime is when data or an empty answer last came for it.
	LastFetchTime time.Time
	// BytesPerSec is the rate of appended bytes over the last windows.
	BytesPerSec float64
	// Records and Bytes count what was appended since it was added.
	Records, Bytes int64
	// Truncations counts truncations on a DivergingEpoch or out of range.
	Truncations int64
	// LastError is the last error the leader sent or appending met, "" if none.
	LastError string
	// Throttled: the follower replication quota counts the partition's
	// bytes (follower.replication.throttled.replicas names it), so while
	// the quota is exceeded and the partition lags, it is left out of
	// fetches.
	Throttled bool
}

// ThreadStats is a snapshot of one fetcher thread, for views.
type ThreadStats struct {
	Name         string
	FetcherID    int
	SourceBroker int32
	// Requests counts fetch requests sent, Errors those that failed
	// whole, Bytes the record bytes appended.
	Requests, Errors, Bytes int64
	// LastResponseTime is when the last fetch answer arrived.
	LastResponseTime time.Time
	Partitions       []PartitionStats
}

// ManagerStats is a snapshot of a Manager, for views.
type ManagerStats struct {
	Threads []ThreadStats
	// FailedPartitions are the partitions a thread gave up on (a fenced
	// epoch, a storage error) until they are added again.
	FailedPartitions []TopicPartition
}
