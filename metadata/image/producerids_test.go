package image

import (
	"errors"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// TestProducerIdsMoveForwardOnly: each ProducerIdsRecord moves the next
// producer id; one that would hand out ids again is refused and leaves the
// delta as it was.
func TestProducerIdsMoveForwardOnly(t *testing.T) {
	if got := Empty.ProducerIds().NextProducerID(); got != -1 {
		t.Fatalf("empty image's next producer id = %d, want -1", got)
	}
	img := replayAll(t, Empty, 1, &record.ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 3, NextProducerID: 1000})
	img = replayAll(t, img, 2, &record.ProducerIdsRecord{BrokerID: 102, BrokerEpoch: 4, NextProducerID: 2000})
	if got := img.ProducerIds().NextProducerID(); got != 2000 {
		t.Fatalf("next producer id = %d, want 2000", got)
	}
	for _, next := range []int64{2000, 1000, -5} {
		d := NewMetadataDelta(img)
		err := d.Replay(&record.ProducerIdsRecord{BrokerID: 101, NextProducerID: next})
		if !errors.Is(err, ErrInconsistent) {
			t.Fatalf("next producer id %d over 2000: err = %v, want ErrInconsistent", next, err)
		}
		if got := d.Apply(img.Provenance()).ProducerIds().NextProducerID(); got != 2000 {
			t.Fatalf("after a refused %d the next producer id is %d", next, got)
		}
	}
}

// TestProducerIdsInSnapshots: a snapshot states the next producer id after
// the configs, with no broker (Kafka's ProducerIdsImage.write), and loading
// it, even over an image with the same id, gives it back.
func TestProducerIdsInSnapshots(t *testing.T) {
	img := cluster(t)
	recs, err := img.Records()
	if err != nil {
		t.Fatal(err)
	}
	last, ok := recs[len(recs)-1].(*record.ProducerIdsRecord)
	if !ok || *last != (record.ProducerIdsRecord{BrokerID: -1, BrokerEpoch: -1, NextProducerID: 1000}) {
		t.Fatalf("snapshot's last record = %+v, want the ProducerIdsRecord of 1000", recs[len(recs)-1])
	}
	for _, base := range []*MetadataImage{Empty, img} {
		d := NewSnapshotDelta(base)
		for _, r := range recs {
			if err := d.Replay(r); err != nil {
				t.Fatal(err)
			}
		}
		if got := d.Apply(img.Provenance()).ProducerIds().NextProducerID(); got != 1000 {
			t.Fatalf("snapshot loaded: next producer id = %d, want 1000", got)
		}
	}
	empty, _ := Empty.Records()
	for _, r := range empty {
		if _, ok := r.(*record.ProducerIdsRecord); ok {
			t.Fatal("an image without producer ids wrote a ProducerIdsRecord")
		}
	}
}
