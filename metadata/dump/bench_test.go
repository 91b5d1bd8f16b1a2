package dump

import (
	"io"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// BenchmarkDumpText reads and prints 1,000 batches of 10 partition changes
// each (10,000 records), as `kraftlab metadata log` would a busy segment.
func BenchmarkDumpText(b *testing.B) {
	var raw []byte
	for i := range 1000 {
		recs := make([]record.Record, 10)
		for j := range recs {
			c := record.NewPartitionChangeRecord(topicT, int32(j))
			c.Isr, c.Leader = []int32{101, 102}, 101
			recs[j] = c
		}
		raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: int64(i * 10), LeaderEpoch: 1, Timestamp: t0}, encode(b, recs...))
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Read(raw).WriteText(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
