package benchkit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The histogram's quantiles must stay within its stated resolution of the
// exact ones, over the whole range it tracks.
func TestHistogramQuantilesWithinResolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := newHistogram()
	var exact []time.Duration
	for range 100_000 {
		// Log-uniform from 1 ns to about 30 s.
		d := time.Duration(math.Exp2(rng.Float64() * 35))
		h.record(d)
		exact = append(exact, d)
	}
	slices.Sort(exact)
	for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
		want := exact[max(int(q*float64(len(exact)))-1, 0)]
		got := h.quantile(q)
		if got < want || float64(got-want) > float64(want)/(1<<(subBits-1))+1 {
			t.Errorf("quantile %v = %v, exact %v", q, got, want)
		}
	}
	if s := h.summary(); s.Count != 100_000 || s.Max != exact[len(exact)-1] {
		t.Errorf("summary %+v, max %v", s, exact[len(exact)-1])
	}
}

func TestHistogramBucketsAreContiguous(t *testing.T) {
	for v := int64(0); v < 1<<16; v++ {
		i := bucketOf(v)
		if bucketHigh(i) < v || (i > 0 && bucketHigh(i-1) >= v) {
			t.Fatalf("value %d in bucket %d: [%d, %d]", v, i, bucketHigh(i-1)+1, bucketHigh(i))
		}
	}
	if bucketOf(int64(maxLatency)) != numBuckets-1 {
		t.Fatal("the largest latency is not in the last bucket")
	}
}

func TestHistogramClampsAndMerges(t *testing.T) {
	a, b := newHistogram(), newHistogram()
	a.record(-5)
	a.record(2 * maxLatency)
	b.record(3 * time.Millisecond)
	a.merge(b)
	if a.total != 3 || a.max != maxLatency || a.quantile(0.01) != 1 {
		t.Fatalf("total %d max %v min %v", a.total, a.max, a.quantile(0.01))
	}
	if (newHistogram().summary() != Latency{}) {
		t.Fatal("an empty histogram has a summary")
	}
}
