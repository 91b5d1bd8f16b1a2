package raft_test

import (
	"testing"
	"time"
)

// BenchmarkCommit measures the state machine's own cost of committing
// records in a cluster of three with in-memory logs and instant delivery:
// each op appends 100 records of 1 KiB, lets the linger pass and replicates
// until committed everywhere. No encoding, network or fsync is included.
func BenchmarkCommit(b *testing.B) {
	t := &testing.T{}
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	for _, id := range h.ids {
		h.nodes[id].l.values = nil // keep no copies
	}
	recs := make([]string, 100)
	for i := range recs {
		recs[i] = string(make([]byte, 1024))
	}
	b.SetBytes(100 * 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		last := h.append(1, recs...)
		for h.status(3).AppliedOffset <= last {
			h.advance(25 * time.Millisecond)
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
}
