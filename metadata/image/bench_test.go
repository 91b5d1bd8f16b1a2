package image

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// bigRecords are the records of an image with 3 brokers and n partitions,
// perTopic to a topic, three replicas each: what a controller writes to
// create them.
func bigRecords(n, perTopic int) []record.Record {
	recs := []record.Record{
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		register(101, 1), register(102, 2), register(103, 3),
	}
	for t := 0; t*perTopic < n; t++ {
		id := topicID(uint64(t + 1))
		recs = append(recs, &record.TopicRecord{Name: fmt.Sprintf("topic-%06d", t), TopicID: id})
		for p := 0; p < perTopic && t*perTopic+p < n; p++ {
			r := int32(101 + (t+p)%3)
			recs = append(recs, partition(id, int32(p), r, 101+(r-100)%3, 101+(r-99)%3))
		}
	}
	return recs
}

var bigImages = map[[2]int]*MetadataImage{}

// bigImage builds (once per process) the image of bigRecords.
func bigImage(tb testing.TB, n, perTopic int) *MetadataImage {
	k := [2]int{n, perTopic}
	if img := bigImages[k]; img != nil {
		return img
	}
	img := replayAll(tb, Empty, int64(n), bigRecords(n, perTopic)...)
	bigImages[k] = img
	return img
}

// changeAt is the i-th change of a workload that moves leaders and
// shrinks and grows ISRs over random partitions.
func changeAt(i, n, perTopic int) *record.PartitionChangeRecord {
	x := uint64(i)*0x9e3779b97f4a7c15 + 1
	k := int(x>>33) % n
	c := record.NewPartitionChangeRecord(topicID(uint64(k/perTopic+1)), int32(k%perTopic))
	switch i % 3 {
	case 0:
		c.Isr = []int32{101, 102}
	case 1:
		c.Isr = []int32{101, 102, 103}
	default:
		c.Leader = int32(101 + i%3)
	}
	return c
}

var sizes = []int{100_000, 1_000_000}

// BenchmarkApplyPartitionChange publishes one image per PartitionChange
// record, the worst case for a loader: B/op and allocs/op are per applied
// change, and stay flat as the image grows.
func BenchmarkApplyPartitionChange(b *testing.B) {
	layouts := []struct {
		name     string
		perTopic func(n int) int
	}{
		{"100-per-topic", func(int) int { return 100 }},
		{"one-topic", func(n int) int { return n }},
	}
	for _, n := range sizes {
		for _, l := range layouts {
			b.Run(fmt.Sprintf("partitions=%d/%s", n, l.name), func(b *testing.B) {
				per := l.perTopic(n)
				img := bigImage(b, n, per)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					d := NewMetadataDelta(img)
					if err := d.Replay(changeAt(i, n, per)); err != nil {
						b.Fatal(err)
					}
					img = d.Apply(MetadataProvenance{LastContainedOffset: int64(n + i)})
					i++
				}
			})
		}
	}
}

// BenchmarkApply10000Changes replays 10,000 PartitionChange records into
// one delta and applies it once; the metrics are per change.
func BenchmarkApply10000Changes(b *testing.B) {
	const changes = 10_000
	for _, n := range sizes {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			img := bigImage(b, n, 100)
			recs := make([]record.Record, changes)
			for i := range recs {
				recs[i] = changeAt(i, n, 100)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				d := NewMetadataDelta(img)
				for _, r := range recs {
					if err := d.Replay(r); err != nil {
						b.Fatal(err)
					}
				}
				d.Apply(MetadataProvenance{})
			}
			runtime.ReadMemStats(&after)
			per := float64(b.N) * changes
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/change")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/per, "B/change")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/per, "allocs/change")
		})
	}
}

// encodedSnapshot is the image's records, encoded.
func encodedSnapshot(tb testing.TB, img *MetadataImage) [][]byte {
	recs, err := img.Records()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([][]byte, len(recs))
	for i, r := range recs {
		if out[i], err = record.Encode(r); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// BenchmarkSnapshotWrite writes an image as encoded snapshot records (the
// batching and the file are storage's).
func BenchmarkSnapshotWrite(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			img := bigImage(b, n, 100)
			var buf []byte
			for b.Loop() {
				recs, err := img.Records()
				if err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
				for _, r := range recs {
					if buf, err = record.AppendEncode(buf, r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(buf))/1e6, "MB")
		})
	}
}

// BenchmarkSnapshotLoad decodes a snapshot's records, replays them into a
// delta of the empty image and applies it: what a node does at start-up.
func BenchmarkSnapshotLoad(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			snap := encodedSnapshot(b, bigImage(b, n, 100))
			b.ReportAllocs()
			for b.Loop() {
				d := NewMetadataDelta(Empty)
				for _, raw := range snap {
					r, err := record.Decode(raw)
					if err != nil {
						b.Fatal(err)
					}
					if err := d.Replay(r); err != nil {
						b.Fatal(err)
					}
				}
				d.Apply(MetadataProvenance{})
			}
		})
	}
}
