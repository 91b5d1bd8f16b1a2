package datasim

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// run is one seed with a number of partitions.
type run struct {
	seed       uint64
	partitions int
}

// defaultRuns run in every go test: the first seeds, and seeds that once
// found a bug (683 with one partition: a re-elected leader counted a
// follower's log end from its old epoch). KRAFTLAB_DATASIM_SEEDS=N runs
// seeds 1 to N instead, KRAFTLAB_DATASIM_SEED=N replays one with a longer
// trace, both with KRAFTLAB_DATASIM_PARTITIONS partitions (default 2).
var defaultRuns = []run{{1, 2}, {2, 2}, {3, 2}, {4, 2}, {5, 2}, {6, 2}, {7, 2}, {8, 2}, {683, 1}}

func runsToDo(t *testing.T) (runs []run, traceLines int) {
	partitions := 2
	if s := os.Getenv("KRAFTLAB_DATASIM_PARTITIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("KRAFTLAB_DATASIM_PARTITIONS=%q: %v", s, err)
		}
		partitions = n
	}
	if s := os.Getenv("KRAFTLAB_DATASIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_DATASIM_SEED=%q: %v", s, err)
		}
		return []run{{seed, partitions}}, 400
	}
	if s := os.Getenv("KRAFTLAB_DATASIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_DATASIM_SEEDS=%q: want a positive count", s)
		}
		for i := 1; i <= n; i++ {
			runs = append(runs, run{uint64(i), partitions})
		}
		return runs, 0
	}
	if testing.Short() {
		return defaultRuns[:3], 0
	}
	return defaultRuns, 0
}

// Each seed runs the three brokers under faults with every invariant
// checked after every event; a failure names its seed and the command
// that replays it.
func TestDataPlaneUnderFaults(t *testing.T) {
	runs, lines := runsToDo(t)
	start := time.Now()
	failures := 0
	for _, r := range runs {
		s, err := Run(Options{Seed: r.seed, Partitions: r.partitions, Dir: t.TempDir(), TraceLines: lines})
		if err != nil {
			if failures++; failures <= 5 {
				t.Errorf("%d partitions, %v\nreplay: KRAFTLAB_DATASIM_SEED=%d KRAFTLAB_DATASIM_PARTITIONS=%d go test -run TestDataPlaneUnderFaults -v ./replication/datasim/",
					r.partitions, err, r.seed, r.partitions)
			}
			continue
		}
		if len(runs) <= 10 {
			t.Logf("seed %d, %d partitions: %s", r.seed, r.partitions, s.Summary())
		}
	}
	t.Logf("%d seeds, %d failed, in %v", len(runs), failures, time.Since(start).Round(time.Millisecond))
}

// The same seed replays the same run, event for event: its trace hashes
// the same; another seed's does not.
func TestSameSeedReplaysSameTrace(t *testing.T) {
	do := func(seed uint64) *Sim {
		s, err := Run(Options{Seed: seed, Dir: t.TempDir(), Duration: 15 * time.Second})
		if s == nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		return s
	}
	a, b, c := do(3), do(3), do(4)
	if a.TraceHash() != b.TraceHash() || a.Events() != b.Events() {
		t.Fatalf("seed 3 ran twice: %x (%d events) vs %x (%d events)", a.TraceHash(), a.Events(), b.TraceHash(), b.Events())
	}
	if a.TraceHash() == c.TraceHash() {
		t.Fatal("seeds 3 and 4 hash the same trace")
	}
}

// Run refuses a partition count it cannot place.
func TestRunRefusesBadPartitionCount(t *testing.T) {
	if _, err := Run(Options{Seed: 1, Dir: t.TempDir(), Partitions: 4}); err == nil {
		t.Fatal("4 partitions accepted")
	}
}
