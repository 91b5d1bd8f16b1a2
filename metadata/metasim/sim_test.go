package metasim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// defaultSeeds is how many seeds plain `go test` runs; -short runs fewer,
// KRAFTLAB_METASIM_SEEDS more, and KRAFTLAB_METASIM_SEED=N replays one with
// its trace.
const defaultSeeds = 50

const workloadFaults = 12

func replayCommand(seed uint64) string {
	return fmt.Sprintf("KRAFTLAB_METASIM_SEED=%d go test -run 'TestSeeds$' -v ./metadata/metasim/", seed)
}

func seedsToRun(t *testing.T) (first uint64, count int) {
	if s := os.Getenv("KRAFTLAB_METASIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_METASIM_SEED=%q: %v", s, err)
		}
		return seed, 1
	}
	count = defaultSeeds
	if testing.Short() {
		count = 10
	}
	if s := os.Getenv("KRAFTLAB_METASIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_METASIM_SEEDS=%q: want a positive count", s)
		}
		count = n
	}
	return 1, count
}

// TestSeeds runs the randomized workload over many seeds.
func TestSeeds(t *testing.T) {
	first, count := seedsToRun(t)
	replay := count == 1
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var failures []string
	events, created, deleted, grown := 0, 0, 0, 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				wo := WorkloadOptions{Faults: workloadFaults, TraceLines: 40}
				if replay {
					wo.TraceLines = 400
				}
				s, err := Run(seed, wo)
				mu.Lock()
				if s != nil {
					events += s.Events()
					for _, c := range s.clients {
						created += c.created
						deleted += c.deleted
						grown += c.grown
					}
				}
				if err != nil {
					msg := fmt.Sprintf("seed %d: %v\nreplay: %s", seed, err, replayCommand(seed))
					if s != nil {
						msg += "\ntranscript tail:\n" + strings.Join(s.Transcript(), "\n")
						if replay {
							msg += "\ntrace tail:\n" + strings.Join(s.Trace(), "\n")
						}
					}
					failures = append(failures, msg)
				}
				mu.Unlock()
			}
		}()
	}
	for s := first; s < first+uint64(count); s++ {
		seeds <- s
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d seeds, %d events; acknowledged %d creations, %d deletions, %d growths; in %v",
		count, events, created, deleted, grown, time.Since(start).Round(time.Millisecond))
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more failures", len(failures)-5)
			break
		}
		t.Error(f)
	}
}

// The same seed replays the same run, so its trace hashes the same.
func TestSameSeedReplaysSameTrace(t *testing.T) {
	for _, seed := range []uint64{1, 7, 42} {
		a, errA := Run(seed, WorkloadOptions{Faults: workloadFaults})
		b, errB := Run(seed, WorkloadOptions{Faults: workloadFaults})
		if (errA == nil) != (errB == nil) {
			t.Fatalf("seed %d: first run %v, second %v", seed, errA, errB)
		}
		if a.TraceHash() != b.TraceHash() || a.Events() != b.Events() {
			t.Fatalf("seed %d: traces differ: %x (%d events) vs %x (%d events)", seed, a.TraceHash(), a.Events(), b.TraceHash(), b.Events())
		}
		if c, _ := Run(seed+1, WorkloadOptions{Faults: workloadFaults}); c.TraceHash() == a.TraceHash() {
			t.Fatalf("seeds %d and %d hash the same trace", seed, seed+1)
		}
	}
}
