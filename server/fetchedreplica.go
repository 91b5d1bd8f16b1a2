package server

import (
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// fetchedReplica is a follower partition as the replica fetchers see it
// (fetcher.Replica): the partition's methods, with the epoch lookup in
// the fetcher's order, and what the manager does after a truncation
// (checkpoint the recovery points, as Kafka's LogManager.truncateTo does,
// so that a restart does not take the shorter log for a damaged one) and
// a high watermark (a damaged replica may be repaired).
type fetchedReplica struct {
	p  *partition.Partition
	rm *ReplicaManager
	tp fetcher.TopicPartition
}

var _ fetcher.Replica = fetchedReplica{}

func (r fetchedReplica) LogEndOffset() int64   { return r.p.LogEndOffset() }
func (r fetchedReplica) LogStartOffset() int64 { return r.p.LogStartOffset() }

func (r fetchedReplica) LastFetchedEpoch() int32 {
	epochs := r.p.Epochs()
	if len(epochs) == 0 {
		return partition.NoEpoch
	}
	return epochs[len(epochs)-1].Epoch
}

func (r fetchedReplica) EndOffsetForEpoch(epoch int32) (endOffset int64, foundEpoch int32, ok bool) {
	eo, err := r.p.LastOffsetForLeaderEpoch(partition.NoEpoch, epoch, false)
	if err != nil || eo.Epoch < 0 {
		return -1, -1, false
	}
	return eo.EndOffset, eo.Epoch, true
}

func (r fetchedReplica) AppendAsFollower(batches []byte) error { return r.p.AppendAsFollower(batches) }

func (r fetchedReplica) TruncateTo(offset int64) error {
	return r.checkpointIfShorter(func() error { return r.p.TruncateTo(offset) })
}

func (r fetchedReplica) TruncateFullyAndStartAt(offset int64) error {
	return r.checkpointIfShorter(func() error { return r.p.TruncateFullyAndStartAt(offset) })
}

// checkpointIfShorter runs a truncation and, if the log end went back,
// checkpoints the recovery points and tells of it.
func (r fetchedReplica) checkpointIfShorter(truncate func() error) error {
	before := r.p.LogEndOffset()
	err := truncate()
	if after := r.p.LogEndOffset(); after < before {
		r.rm.checkpoint()
		r.rm.emit(ReplicaEvent{Kind: ReplicaTruncated, Topic: r.tp.Topic, Partition: r.tp.Partition,
			Leader: r.p.State().LeaderID, LogEndOffset: after, TruncatedFrom: before})
	}
	return err
}

func (r fetchedReplica) UpdateHighWatermark(hwm int64) {
	r.p.UpdateHighWatermark(hwm)
	r.rm.maybeRepaired(r.tp, hwm)
}

// Flush fsyncs what the fetcher appended, without the partition's lock; a
// follower's flush moves no high watermark.
func (r fetchedReplica) Flush() error {
	_, err := r.p.Flush(r.rm.clock.Now())
	return err
}
