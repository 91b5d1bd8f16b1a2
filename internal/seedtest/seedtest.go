// Package seedtest runs a seeded simulation's test over many seeds: which
// seeds (from the environment, so that CI can run thousands and a failure
// can be replayed alone), side by side on every core, each failure named
// with its seed.
package seedtest

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Seeds says which seeds a test runs: with PREFIX_SEED=N the one seed N,
// to replay it (replay is then true); with PREFIX_SEEDS=N the seeds 1 to
// N; otherwise 1 to def, or 1 to short with -short.
func Seeds(t testing.TB, prefix string, def, short int) (first uint64, count int, replay bool) {
	t.Helper()
	if s := os.Getenv(prefix + "_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s_SEED=%q: %v", prefix, s, err)
		}
		return seed, 1, true
	}
	count = def
	if testing.Short() {
		count = short
	}
	if s := os.Getenv(prefix + "_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s_SEEDS=%q: want a positive count", prefix, s)
		}
		count = n
	}
	return 1, count, false
}

// maxReported bounds the failures a test prints in full.
const maxReported = 5

// Parallel runs run for the seeds first to first+count-1, on every core.
// A seed's error fails t (the first few in full, as run words them); the
// summaries of a run of at most ten seeds are logged, by seed.
func Parallel(t *testing.T, first uint64, count int, run func(seed uint64) (summary string, err error)) {
	t.Helper()
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var failures, summaries []string
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				summary, err := run(seed)
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("seed %d: %v", seed, err))
				} else if count <= 10 && summary != "" {
					summaries = append(summaries, fmt.Sprintf("seed %d: %s", seed, summary))
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
		if i == maxReported {
			t.Errorf("... and %d more failures", len(failures)-maxReported)
			break
		}
		t.Error(f)
	}
}
