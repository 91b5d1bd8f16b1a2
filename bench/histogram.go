package main

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// maxLatency is the largest latency a histogram tracks; longer ones are
// clamped to it, which a report can only show as "at least a minute".
const maxLatency = time.Minute

// newHistogram tracks nanoseconds from 1 ns to a minute to three
// significant digits.
func newHistogram() *hdr.Histogram {
	return hdr.New(1, int64(maxLatency), 3)
}

func record(h *hdr.Histogram, d time.Duration) {
	if d < 1 {
		d = 1
	}
	if d > maxLatency {
		d = maxLatency
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.RecordValue(int64(d))
}

// recorder spreads latency samples over a few locked histograms so that
// many goroutines can record without contending on one lock.
type recorder struct {
	shards []shard
}

type shard struct {
	mu sync.Mutex
	h  *hdr.Histogram
	_  [40]byte // keep neighbouring shards' locks on separate cache lines
}

func newRecorder(n int) *recorder {
	r := &recorder{shards: make([]shard, n)}
	for i := range r.shards {
		r.shards[i].h = newHistogram()
	}
	return r
}

// record adds d to the shard chosen by the caller's worker index.
func (r *recorder) record(worker int, d time.Duration) {
	s := &r.shards[worker%len(r.shards)]
	s.mu.Lock()
	record(s.h, d)
	s.mu.Unlock()
}

// merged returns one histogram with every shard's samples.
func (r *recorder) merged() *hdr.Histogram {
	out := newHistogram()
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		out.Merge(s.h)
		s.mu.Unlock()
	}
	return out
}

// latency summarises a histogram.
type latency struct {
	Count int64         `json:"count"`
	P50   time.Duration `json:"p50Ns"`
	P99   time.Duration `json:"p99Ns"`
	P999  time.Duration `json:"p999Ns"`
	Max   time.Duration `json:"maxNs"`
}

func summarize(h *hdr.Histogram) latency {
	if h.TotalCount() == 0 {
		return latency{}
	}
	return latency{
		Count: h.TotalCount(),
		P50:   time.Duration(h.ValueAtQuantile(50)),
		P99:   time.Duration(h.ValueAtQuantile(99)),
		P999:  time.Duration(h.ValueAtQuantile(99.9)),
		Max:   time.Duration(h.Max()),
	}
}
