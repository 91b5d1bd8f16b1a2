package datasim

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// defaultSeeds run in every go test: the first few, and seeds that once
// found a bug (683: a re-elected leader counted a follower's log end from
// its old epoch). KRAFTLAB_DATASIM_SEEDS=N
// runs seeds 1 to N instead, and KRAFTLAB_DATASIM_SEED=N replays one with
// a longer trace.
var defaultSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 683}

func seedsToRun(t *testing.T) (seeds []uint64, traceLines int) {
	if s := os.Getenv("KRAFTLAB_DATASIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_DATASIM_SEED=%q: %v", s, err)
		}
		return []uint64{seed}, 400
	}
	if s := os.Getenv("KRAFTLAB_DATASIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_DATASIM_SEEDS=%q: want a positive count", s)
		}
		for i := 1; i <= n; i++ {
			seeds = append(seeds, uint64(i))
		}
		return seeds, 0
	}
	if testing.Short() {
		return defaultSeeds[:3], 0
	}
	return defaultSeeds, 0
}

// Each seed runs the three brokers under faults with every invariant
// checked after every event; a failure names its seed and the command
// that replays it.
func TestDataPlaneUnderFaults(t *testing.T) {
	seeds, lines := seedsToRun(t)
	start := time.Now()
	failures := 0
	for _, seed := range seeds {
		s, err := Run(Options{Seed: seed, Dir: t.TempDir(), TraceLines: lines})
		if err != nil {
			if failures++; failures <= 5 {
				t.Errorf("%v\nreplay: KRAFTLAB_DATASIM_SEED=%d go test -run TestDataPlaneUnderFaults -v ./replication/datasim/", err, seed)
			}
			continue
		}
		if len(seeds) <= 10 {
			t.Logf("seed %d: %s", seed, s.Summary())
		}
	}
	t.Logf("%d seeds, %d failed, in %v", len(seeds), failures, time.Since(start).Round(time.Millisecond))
}

// The same seed replays the same run, event for event: its trace hashes
// the same; another seed's does not.
func TestSameSeedReplaysSameTrace(t *testing.T) {
	run := func(seed uint64) *Sim {
		s, err := Run(Options{Seed: seed, Dir: t.TempDir(), Duration: 15 * time.Second})
		if s == nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		return s
	}
	a, b, c := run(3), run(3), run(4)
	if a.TraceHash() != b.TraceHash() || a.Events() != b.Events() {
		t.Fatalf("seed 3 ran twice: %x (%d events) vs %x (%d events)", a.TraceHash(), a.Events(), b.TraceHash(), b.Events())
	}
	if a.TraceHash() == c.TraceHash() {
		t.Fatal("seeds 3 and 4 hash the same trace")
	}
}
