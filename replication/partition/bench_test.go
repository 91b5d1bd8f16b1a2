package partition

import (
	"testing"
)

// BenchmarkReplicateBatch is one acks=-1 round on a leader with two
// followers: the producer's 10-record batch is checked and appended, and
// both followers' next fetches move the high watermark past it.
func BenchmarkReplicateBatch(b *testing.B) {
	p := open(b, b.TempDir(), 1, 2)
	leader(b, p, []int32{1, 2, 3})
	batch := producerBatch(10, "bench", t0.UnixMilli())
	buf := make([]byte, len(batch))
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, batch)
		info, err := p.AppendAsLeader(buf, -1, t0)
		if err != nil {
			b.Fatal(err)
		}
		fetch(b, p, 2, info.LastOffset+1, t0)
		fetch(b, p, 3, info.LastOffset+1, t0)
		if p.HighWatermark() != info.LastOffset+1 {
			b.Fatal("high watermark did not move")
		}
	}
}
