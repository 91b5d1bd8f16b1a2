package group

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// loadState is what a load has replayed so far: the last value of each
// key wins, a tombstone deletes it.
type loadState struct {
	metadata map[string]*kmsg.GroupMetadataValue
	offsets  map[string]map[TopicPartition]Committed
	consumer map[string]*loadedConsumerGroup
	// skipped counts the records that did not decode, and firstBad is
	// the first one's error: a load goes on without them rather than
	// leave the partition's groups unserved.
	skipped  int
	firstBad error
}

func newLoadState() *loadState {
	return &loadState{metadata: map[string]*kmsg.GroupMetadataValue{}, offsets: map[string]map[TopicPartition]Committed{}, consumer: map[string]*loadedConsumerGroup{}}
}

// replayBatches replays the records of raw at or above from and returns
// the offset after the last batch.
func (st *loadState) replayBatches(raw []byte, from int64) (int64, error) {
	next := from
	err := storage.Batches(raw, func(_ int, b *storage.Batch) error {
		next = b.NextOffset()
		if b.IsControl() {
			return nil
		}
		recs, err := b.Records()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.Offset < from {
				continue
			}
			if err := st.replay(r); err != nil {
				if st.skipped++; st.firstBad == nil {
					st.firstBad = fmt.Errorf("record at offset %d: %w", r.Offset, err)
				}
			}
		}
		return nil
	})
	return next, err
}

// replay applies one record (Kafka's GroupCoordinatorShard.replay for the
// classic records).
func (st *loadState) replay(r storage.Record) error {
	rec, err := Decode(r.Key, r.Value)
	if err != nil {
		return err
	}
	switch rec.Type {
	case LegacyOffsetCommitType, OffsetCommitType:
		os := st.offsets[rec.Group]
		if rec.Offset == nil {
			delete(os, rec.Partition)
			return nil
		}
		if os == nil {
			os = map[TopicPartition]Committed{}
			st.offsets[rec.Group] = os
		}
		c := *rec.Offset
		c.logOffset = r.Offset
		os[rec.Partition] = c
	case GroupMetadataType:
		st.metadata[rec.Group] = rec.Metadata
		if rec.Metadata == nil {
			delete(st.metadata, rec.Group)
		}
	default:
		if rec.Consumer != nil {
			st.replayConsumer(rec.Consumer)
		}
	}
	return nil
}

// groups are the loaded groups: each with metadata as it was stored, and
// an empty one for each group that has only offsets (as Kafka's replay of
// an offset commit makes one).
func (st *loadState) groups(t Timing, now time.Time) map[string]*Group {
	out := map[string]*Group{}
	for id, v := range st.metadata {
		out[id] = Restore(id, t, v, now)
	}
	for id := range st.offsets {
		if out[id] == nil {
			out[id] = NewGroup(id, t, now)
		}
	}
	return out
}
