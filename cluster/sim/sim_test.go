package sim

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// defaultSeeds is how many seeds plain `go test` runs; -short runs fewer,
// KRAFTLAB_CLUSTERSIM_SEEDS more, and KRAFTLAB_CLUSTERSIM_SEED=N replays
// one with a longer trace.
const defaultSeeds = 6

func replayCommand(seed uint64) string {
	return fmt.Sprintf("KRAFTLAB_CLUSTERSIM_SEED=%d go test -run 'TestWholeClusterUnderFaults$' -v ./cluster/sim/", seed)
}

func seedsToRun(t *testing.T) (first uint64, count int, replay bool) {
	if s := os.Getenv("KRAFTLAB_CLUSTERSIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_CLUSTERSIM_SEED=%q: %v", s, err)
		}
		return seed, 1, true
	}
	count = defaultSeeds
	if testing.Short() {
		count = 2
	}
	if s := os.Getenv("KRAFTLAB_CLUSTERSIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_CLUSTERSIM_SEEDS=%q: want a positive count", s)
		}
		count = n
	}
	return 1, count, false
}

// Each seed runs the whole cluster under faults with both layers'
// invariants checked after every event, the seeds side by side on every
// core; a failure names its seed and the command that replays it.
func TestWholeClusterUnderFaults(t *testing.T) {
	first, count, replay := seedsToRun(t)
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var failures []string
	var summaries []string
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				opts := Options{Seed: seed, Dir: t.TempDir(), TraceLines: 40}
				if replay {
					opts.TraceLines = 400
				}
				s, err := Run(opts)
				mu.Lock()
				if err != nil {
					msg := fmt.Sprintf("seed %d: %v\nreplay: %s", seed, err, replayCommand(seed))
					if s != nil && s.ms != nil {
						msg += "\ntranscript tail:\n" + strings.Join(s.Transcript(), "\n")
						if replay {
							msg += "\ntrace tail:\n" + strings.Join(s.Trace(), "\n")
						}
					}
					failures = append(failures, msg)
				} else if count <= 10 {
					summaries = append(summaries, fmt.Sprintf("seed %d: %s", seed, s.Summary()))
				}
				mu.Unlock()
			}
		}()
	}
	for seed := first; seed < first+uint64(count); seed++ {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	slices.Sort(summaries)
	for _, l := range summaries {
		t.Log(l)
	}
	t.Logf("%d seeds, %d failed, in %v", count, len(failures), time.Since(start).Round(time.Millisecond))
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more failures", len(failures)-5)
			break
		}
		t.Error(f)
	}
}

// The same seed replays the same run, event for event; another seed's
// trace differs.
func TestSameSeedReplaysSameTrace(t *testing.T) {
	do := func(seed uint64) *Sim {
		s, err := Run(Options{Seed: seed, Dir: t.TempDir(), Faults: 4})
		if s == nil || s.ms == nil {
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
