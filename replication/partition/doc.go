// Package partition is one replica of a topic partition on a broker: its
// log, and on the leader the high watermark, the ISR and the state of every
// follower (Kafka's kafka.cluster.Partition and the parts of UnifiedLog the
// replication protocol needs). The ReplicaManager owns one Partition per
// hosted replica and feeds it requests; the ReplicaFetcherThreads feed a
// follower what they fetched.
//
// # A state machine the caller drives
//
// A Partition starts no goroutine and reads no clock of its own: every
// method that depends on time takes now, and a method never waits. What a
// change should be followed by is returned to the caller (the high
// watermark moved, so delayed produces and fetches may complete; an ISR
// change to send with AlterPartition). Methods are safe for concurrent use:
// one mutex guards the state, and the log does its own I/O under it, except
// for Flush: under FlushAlways appends do not fsync, and Flush does without
// the replica's lock, one fsync for every append before it (group commit).
// A leader's own records then count toward the high watermark only once
// flushed, so the caller must call Flush after appending (NeedsFlush says
// whether there is anything to flush). Under FlushNever each append marks
// itself flushed (no fsync: the page cache outlives the process), so a
// kill (Crash) keeps every record appended, as it keeps the metadata log's.
//
// # Leader
//
// MakeLeader starts a leader epoch at the log end offset. AppendAsLeader
// checks a producer's batch, refuses acks=-1 while the ISR is smaller than
// min.insync.replicas (NOT_ENOUGH_REPLICAS), assigns offsets and stamps the
// leader epoch. A follower's next fetch is its acknowledgement:
// UpdateFollowerFetch records its log end offset, and the high watermark
// becomes the smallest log end offset over the maximal ISR (the committed
// ISR plus a replica whose expansion is in flight, and any caught-up replica
// about to join), never moving back. ISRChange proposes a shrink (members not
// caught up for replica.lag.time.max.ms) or an expansion (one replica at or
// past the high watermark and the leader epoch's start offset), one at a time;
// ApplyPartitionState commits what the controller decided.
//
// # Producer state
//
// Each replica keeps, per idempotent producer id, its epoch and its last
// NumBatchesToRetain batches (Kafka's ProducerStateManager). The leader
// drops a retried batch (AppendInfo.Duplicate, with the original's
// offsets) and refuses an older epoch or a sequence gap; followers record
// what they replicate, so a new leader drops retries too; truncation and
// opening rebuild the state from the log.
//
// # Follower
//
// MakeFollower records the new leader and epoch but does not truncate: the
// fetcher learns the divergence point from the leader (the DivergingEpoch of
// a fetch, or OffsetForLeaderEpoch) and calls TruncateTo, then AppendAsFollower
// with the batches as the leader wrote them and UpdateHighWatermark with the
// leader's high watermark.
//
// # Waiting
//
// Purgatory holds delayed operations (DelayedProduce, DelayedFetch) until the
// partition changes enough or their deadline passes; the caller calls
// CheckAndComplete after a change and Expire on a timer.
package partition
