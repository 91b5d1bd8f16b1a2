package datasim

import (
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// replica is a follower partition as the fetcher sees it, as the server's
// fetchedReplica adapts it: the epoch lookup in the fetcher's order, and
// the flush on the virtual clock. Comparable, so that adding the same
// replica again keeps its fetch state.
type replica struct {
	b *broker
	h *host
	p *partition.Partition
}

var _ fetcher.Replica = replica{}

func (r replica) LogEndOffset() int64   { return r.p.LogEndOffset() }
func (r replica) LogStartOffset() int64 { return r.p.LogStartOffset() }

func (r replica) LastFetchedEpoch() int32 {
	epochs := r.p.Epochs()
	if len(epochs) == 0 {
		return partition.NoEpoch
	}
	return epochs[len(epochs)-1].Epoch
}

func (r replica) EndOffsetForEpoch(epoch int32) (endOffset int64, foundEpoch int32, ok bool) {
	eo, err := r.p.LastOffsetForLeaderEpoch(partition.NoEpoch, epoch, false)
	if err != nil || eo.Epoch < 0 {
		return -1, -1, false
	}
	return eo.EndOffset, eo.Epoch, true
}

func (r replica) AppendAsFollower(batches []byte) error { return r.p.AppendAsFollower(batches) }

func (r replica) TruncateTo(offset int64) error {
	before := r.p.LogEndOffset()
	err := r.p.TruncateTo(offset)
	r.b.truncated(r.h, before, err)
	return err
}

func (r replica) TruncateFullyAndStartAt(offset int64) error {
	before := r.p.LogEndOffset()
	err := r.p.TruncateFullyAndStartAt(offset)
	r.b.truncated(r.h, before, err)
	return err
}

func (r replica) UpdateHighWatermark(hwm int64) { r.p.UpdateHighWatermark(hwm) }

func (r replica) Flush() error {
	_, err := r.p.Flush(r.b.s.now())
	return err
}
