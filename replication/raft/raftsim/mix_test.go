package raftsim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// defaultSeeds is how many seeds plain `go test` runs in each mode;
// KRAFTLAB_SIM_SEEDS raises it, KRAFTLAB_SIM_SEED=N replays one.
const defaultSeeds = 500

const mixFaults = 12

func replayCommand(mode raft.Replication, seed uint64) string {
	return fmt.Sprintf("KRAFTLAB_SIM_SEED=%d go test -run 'TestMix/%v$' -v ./replication/raft/raftsim/", seed, mode)
}

// modes are the replication modes every simulation test runs in.
var modes = []raft.Replication{raft.Pull, raft.Push}

// inModes runs a test once per replication mode, as subtests named after
// the mode.
func inModes(t *testing.T, test func(t *testing.T, mode raft.Replication)) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) { test(t, mode) })
	}
}

func seedsToRun(t *testing.T) (first uint64, count int) {
	if s := os.Getenv("KRAFTLAB_SIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_SIM_SEED=%q: %v", s, err)
		}
		return seed, 1
	}
	count = defaultSeeds
	if s := os.Getenv("KRAFTLAB_SIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_SIM_SEEDS=%q: want a positive count", s)
		}
		count = n
	}
	return 1, count
}

// TestMix runs the randomized mix over many seeds, in each mode.
func TestMix(t *testing.T) { inModes(t, testMix) }

func testMix(t *testing.T, mode raft.Replication) {
	first, count := seedsToRun(t)
	replay := count == 1
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var failures []string
	events := 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				mo := MixOptions{Faults: mixFaults, WireCheck: true, Replication: mode}
				if replay {
					mo.TraceLines = 400
				}
				c, err := RunMix(seed, mo)
				mu.Lock()
				if c != nil {
					events += c.Events()
				}
				if err != nil {
					msg := fmt.Sprintf("seed %d: %v\nreplay: %s", seed, err, replayCommand(mode, seed))
					if replay && c != nil {
						msg += "\ntrace tail:\n" + strings.Join(c.Trace(), "\n")
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
	t.Logf("%v: %d seeds, %d events in %v", mode, count, events, time.Since(start).Round(time.Millisecond))
	for i, f := range failures {
		if i == 10 {
			t.Errorf("... and %d more failures", len(failures)-10)
			break
		}
		t.Error(f)
	}
}
