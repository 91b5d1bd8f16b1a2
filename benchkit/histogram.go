package benchkit

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// maxLatency is the largest latency a histogram tracks; longer ones are
// clamped to it, which a report can only show as "at least a minute".
const maxLatency = time.Minute

// subBits sets the histogram's resolution: below 2^subBits ns every
// nanosecond has its own bucket, above it each power of two is split into
// 2^(subBits-1) buckets, so a reported value is at most 0.2% above the
// true one (about three significant digits, as HdrHistogram keeps).
const subBits = 10

var numBuckets = bucketOf(int64(maxLatency)) + 1

// histogram counts latencies in log-linear buckets: a fixed size whatever
// the number of samples, and recording allocates nothing.
type histogram struct {
	counts []int64
	total  int64
	max    time.Duration
}

func newHistogram() *histogram { return &histogram{counts: make([]int64, numBuckets)} }

// bucketOf maps v ≥ 0 nanoseconds to its bucket.
func bucketOf(v int64) int {
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - subBits
	return e<<(subBits-1) + int(v>>e)
}

// bucketHigh is the largest value bucket i holds.
func bucketHigh(i int) int64 {
	if i < 1<<subBits {
		return int64(i)
	}
	e := i>>(subBits-1) - 1
	m := int64(i - e<<(subBits-1))
	return (m+1)<<e - 1
}

func (h *histogram) record(d time.Duration) {
	d = min(max(d, 1), maxLatency)
	h.counts[bucketOf(int64(d))]++
	h.total++
	h.max = max(h.max, d)
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// quantile returns the value at q (0 < q ≤ 1): the top of the bucket
// holding the sample of rank ⌈q·total⌉, capped at the largest sample.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := max(int64(math.Ceil(q*float64(h.total))), 1)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(bucketHigh(i)), h.max)
		}
	}
	return h.max
}

// recorder spreads latency samples over a few locked histograms so that
// many goroutines can record without contending on one lock.
type recorder struct {
	shards []shard
}

type shard struct {
	mu sync.Mutex
	h  *histogram
	_  [48]byte // keep neighbouring shards' locks on separate cache lines
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
	s.h.record(d)
	s.mu.Unlock()
}

// merged returns one histogram with every shard's samples.
func (r *recorder) merged() *histogram {
	out := newHistogram()
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		out.merge(s.h)
		s.mu.Unlock()
	}
	return out
}

// Latency summarises the latencies of one measurement.
type Latency struct {
	Count int64         `json:"count"`
	P50   time.Duration `json:"p50Ns"`
	P99   time.Duration `json:"p99Ns"`
	P999  time.Duration `json:"p999Ns"`
	Max   time.Duration `json:"maxNs"`
}

func (h *histogram) summary() Latency {
	if h.total == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.total,
		P50:   h.quantile(0.50),
		P99:   h.quantile(0.99),
		P999:  h.quantile(0.999),
		Max:   h.max,
	}
}
