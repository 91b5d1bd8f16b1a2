package image

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// At 100,000 partitions, a change copies only its own topic and the trie
// nodes above it: every other topic is the same pointer in the next image,
// and the allocations of one change do not grow with the image (see
// BenchmarkApplyPartitionChange for the bytes).
func TestApplyAtScaleSharesUnchangedTopics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-partition image")
	}
	const n, per = 100_000, 100
	img := bigImage(t, n, per)
	if img.Topics().NumPartitions() != n || img.Topics().Len() != n/per {
		t.Fatalf("%d partitions in %d topics", img.Topics().NumPartitions(), img.Topics().Len())
	}
	changed := topicID(500)
	c := record.NewPartitionChangeRecord(changed, 42)
	c.Isr = []int32{101}
	next := replayAll(t, img, n+1, c)
	same := 0
	for id, ti := range img.Topics().Topics() {
		nt := next.Topics().Topic(id)
		switch {
		case id == changed:
			if nt == ti || nt.Partition(41) != ti.Partition(41) {
				t.Error("the changed topic was not replaced, or its other partitions were copied")
			}
		case nt == ti && next.Topics().TopicByName(ti.Name()) == ti:
			same++
		}
	}
	if same != n/per-1 {
		t.Errorf("%d of %d unchanged topics shared", same, n/per-1)
	}
	if img.Topics().Partition(changed, 42).PartitionEpoch != 0 {
		t.Error("the previous image changed")
	}
	small := cluster(t)
	allocs := func(img *MetadataImage, topic record.Uuid) float64 {
		return testing.AllocsPerRun(20, func() {
			d := NewMetadataDelta(img)
			c := record.NewPartitionChangeRecord(topic, 0)
			c.Leader = 102
			if err := d.Replay(c); err != nil {
				t.Fatal(err)
			}
			d.Apply(MetadataProvenance{})
		})
	}
	a, b := allocs(small, topicID(1)), allocs(img, changed)
	if b > a+25 {
		t.Errorf("one change allocates %.0f times on a 3-partition image and %.0f on a 100,000-partition one", a, b)
	}
}
