package partition

import (
	"encoding/binary"
	"testing"
)

// BenchmarkReplicateBatch is one acks=-1 round on a leader with two
// followers: the producer's 10-record batch is checked and appended, and
// both followers' next fetches move the high watermark past it. The
// idempotent case's batches carry a producer id and the next sequence, so
// the leader's producer-state check runs on each.
func BenchmarkReplicateBatch(b *testing.B) {
	for _, tc := range []struct {
		name       string
		idempotent bool
	}{{"plain", false}, {"idempotent", true}} {
		b.Run(tc.name, func(b *testing.B) {
			p := open(b, b.TempDir(), 1, 2)
			leader(b, p, []int32{1, 2, 3})
			batch := producerBatch(10, "bench", t0.UnixMilli())
			if tc.idempotent {
				batch = idemBatch(42, 0, 0, 10, "bench")
			}
			buf := make([]byte, len(batch))
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			var seq int32
			for b.Loop() {
				copy(buf, batch)
				if tc.idempotent {
					// The CRC covers the sequence, so each batch is
					// stamped and checksummed again: the producer's
					// cost, not the broker's (BenchmarkProducerStateCheck
					// times the check alone).
					binary.BigEndian.PutUint32(buf[baseSequenceOffset:], uint32(seq))
					recrc(buf)
					seq += 10
				}
				info, err := p.AppendAsLeader(buf, -1, t0)
				if err != nil || info.Duplicate {
					b.Fatal(info, err)
				}
				fetch(b, p, 2, info.LastOffset+1, t0)
				fetch(b, p, 3, info.LastOffset+1, t0)
				if p.HighWatermark() != info.LastOffset+1 {
					b.Fatal("high watermark did not move")
				}
			}
		})
	}
}

// BenchmarkProducerStateCheck is the producer-state work alone of one
// idempotent append: reading the header, looking for a duplicate among
// the producer's last five batches, checking epoch and sequence, and
// recording the batch.
func BenchmarkProducerStateCheck(b *testing.B) {
	m := newProducerStateManager()
	raw := idemBatch(42, 0, 0, 10, "bench")
	var off int64
	b.ReportAllocs()
	for b.Loop() {
		binary.BigEndian.PutUint32(raw[baseSequenceOffset:], uint32(off))
		h := readProducerHeader(raw)
		if _, dup, err := m.duplicateOrCheck(h); err != nil || dup {
			b.Fatal(dup, err)
		}
		m.update(h, off, off+9)
		off += 10
	}
}
