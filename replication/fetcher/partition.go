package fetcher

import "fmt"

// TopicPartition names a partition, as Kafka's TopicPartition does.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String formats the partition as Kafka logs it: topic-partition.
func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Replica is the local follower replica a fetcher thread feeds
// (replication/partition satisfies it). Calls for one replica never overlap:
// they are made under its thread's lock, from the thread's goroutine or from
// the caller of Manager.AddPartitions or Manager.Stats; Flush alone is
// called without the lock, from the thread's goroutine, while the others
// may run.
type Replica interface {
	// LogEndOffset is the offset the next appended record takes.
	LogEndOffset() int64
	// LastFetchedEpoch is the leader epoch of the last batch in the log, -1
	// if the log is empty.
	LastFetchedEpoch() int32
	// EndOffsetForEpoch finds the largest epoch at or below epoch that the
	// log holds and the offset where it ends; ok is false when the log holds
	// no epoch at or below it.
	EndOffsetForEpoch(epoch int32) (endOffset int64, foundEpoch int32, ok bool)
	// AppendAsFollower appends whole v2 batches as the leader sent them.
	// It need not make them durable: the thread calls Flush before the
	// fetch whose offset acknowledges them.
	AppendAsFollower(batches []byte) error
	// Flush makes what was appended durable, as the replica's flush
	// policy says (an fsync, or nothing). It must be safe to call while
	// the replica's other methods run.
	Flush() error
	// TruncateTo removes every record at or above offset.
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and starts it at offset, for a
	// follower that fell behind the leader's log start.
	TruncateFullyAndStartAt(offset int64) error
	// UpdateHighWatermark takes the high watermark the leader sent, capped
	// at the log end offset by the replica, which keeps its own when it is
	// higher (a new leader's can lag the old one's).
	UpdateHighWatermark(hwm int64)
	// LogStartOffset is the first offset the log holds.
	LogStartOffset() int64
}

// InitialFetchState is where a partition starts fetching when it is added
// to a fetcher (Kafka's InitialFetchState).
type InitialFetchState struct {
	// Leader is the broker id of the partition's leader, the source broker.
	Leader int32
	// LeaderEpoch is the leader epoch the metadata gave; the leader fences
	// fetches carrying another.
	LeaderEpoch int32
	// TopicID is the topic's id; Fetch names topics by id.
	TopicID [16]byte
	// Replica is the local log the fetched batches go to.
	Replica Replica
	// InitOffset is the first offset to fetch; below zero means the
	// replica's log end offset.
	InitOffset int64
}
