package server

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// fetchedReplica is a follower partition as the replica fetchers see it
// (fetcher.Replica): the partition's methods, with the epoch lookup in
// the fetcher's order.
type fetchedReplica struct{ p *partition.Partition }

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
func (r fetchedReplica) TruncateTo(offset int64) error         { return r.p.TruncateTo(offset) }

func (r fetchedReplica) TruncateFullyAndStartAt(offset int64) error {
	return r.p.TruncateFullyAndStartAt(offset)
}

func (r fetchedReplica) UpdateHighWatermark(hwm int64) { r.p.UpdateHighWatermark(hwm) }

// Flush fsyncs what the fetcher appended, without the partition's lock; a
// follower's flush moves no high watermark.
func (r fetchedReplica) Flush() error {
	_, err := r.p.Flush(time.Now())
	return err
}
