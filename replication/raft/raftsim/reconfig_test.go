package raftsim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reconfigSeeds are the seeds each reconfiguration runs by default: the
// first few, and seeds that once found a bug (grow 5362 and 5404: a leader
// that removed itself and stopped before any voter fetched the record).
// KRAFTLAB_RECONFIG_SEEDS=N runs seeds 1 to N instead; KRAFTLAB_SIM_SEED=N
// replays one with its trace.
var reconfigSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 99, 1000, 5362, 5404, 31337}

// reconfigFaults is how many faults each run injects while the voter set
// goes back and forth.
const reconfigFaults = 20

func reconfigSeedsToRun(t *testing.T) (seeds []uint64, replay bool) {
	if s := os.Getenv("KRAFTLAB_SIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_SIM_SEED=%q: %v", s, err)
		}
		return []uint64{seed}, true
	}
	if s := os.Getenv("KRAFTLAB_RECONFIG_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_RECONFIG_SEEDS=%q: want a positive count", s)
		}
		for i := 1; i <= n; i++ {
			seeds = append(seeds, uint64(i))
		}
		return seeds, false
	}
	if testing.Short() {
		return reconfigSeeds[:4], false
	}
	return reconfigSeeds, false
}

// Each reconfiguration (grow 1→3, shrink 5→3, swap a voter) reaches its
// voter set under random faults, with the quorum's and KIP-853's
// invariants checked at every step. A failure names its seed and the
// command that replays it.
func TestReconfigurationUnderFaults(t *testing.T) {
	seeds, replay := reconfigSeedsToRun(t)
	for _, change := range []Reconfig{Grow, Shrink, Swap} {
		t.Run(change.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			changes, failures := 0, 0
			for _, seed := range seeds {
				ro := ReconfigOptions{Change: change, Faults: reconfigFaults, WireCheck: true}
				if replay {
					ro.TraceLines = 400
				}
				c, err := RunReconfig(seed, ro)
				if c != nil {
					changes += c.changes
				}
				if err == nil {
					continue
				}
				if failures++; failures > 10 {
					continue
				}
				msg := fmt.Sprintf("%v seed %d: %v\nreplay: KRAFTLAB_SIM_SEED=%d go test -run 'TestReconfigurationUnderFaults/%v$' -v ./replication/raft/raftsim/",
					change, seed, err, seed, change)
				if replay && c != nil {
					msg += "\ntrace tail:\n" + strings.Join(c.Trace(), "\n")
				}
				t.Error(msg)
			}
			t.Logf("%v: %d seeds, %d voter sets reached under faults, in %v", change, len(seeds), changes, time.Since(start).Round(time.Millisecond))
		})
	}
}

// Without faults each change completes within seconds of simulated time.
func TestReconfigurationWithoutFaults(t *testing.T) {
	for _, change := range []Reconfig{Grow, Shrink, Swap} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%v/%d", change, seed), func(t *testing.T) {
				c, err := RunReconfig(seed, ReconfigOptions{Change: change, TraceLines: 40})
				if err != nil {
					t.Fatalf("seed %d: %v\n%s", seed, err, strings.Join(c.Trace(), "\n"))
				}
				if got := c.now.Sub(Start); got > 30*time.Second {
					t.Errorf("seed %d: took %v of simulated time", seed, got)
				}
			})
		}
	}
}
