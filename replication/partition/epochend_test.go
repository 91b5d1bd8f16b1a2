package partition

import (
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

// The end offset of an epoch is Kafka's LeaderEpochFileCache.endOffsetFor:
// an epoch below every epoch the log holds ends where the first one
// starts, which is what lets an old leader whose whole log the new leader
// never had truncate it all.
func TestKafkaEndOffsetFor(t *testing.T) {
	log := []storage.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 3, StartOffset: 40}, {Epoch: 4, StartOffset: 70}}
	for _, c := range []struct {
		entries []storage.EpochEntry
		epoch   int32
		want    EpochEndOffset
	}{
		{log, 4, EpochEndOffset{4, 100}},      // the latest: the log end
		{log, 3, EpochEndOffset{3, 70}},       // ends where 4 starts
		{log, 2, EpochEndOffset{1, 40}},       // unknown: the largest below, to the next start
		{log, 0, EpochEndOffset{0, 0}},        // below every epoch: where the first starts
		{log, 5, EpochEndOffset{NoEpoch, -1}}, // above every epoch
		{log, NoEpoch, EpochEndOffset{NoEpoch, -1}},
		{nil, 0, EpochEndOffset{NoEpoch, -1}},
		// A new leader of epoch 1 with an empty log: its epoch starts at 0.
		{[]storage.EpochEntry{{Epoch: 1, StartOffset: 0}}, 0, EpochEndOffset{0, 0}},
	} {
		if got := kafkaEndOffsetFor(c.entries, c.epoch, 100); got != c.want {
			t.Errorf("endOffsetFor(%v, %d) = %+v, want %+v", c.entries, c.epoch, got, c.want)
		}
	}
}
