package raftsim

import (
	"fmt"
	"testing"
	"time"
)

// reconfigSeeds are the seeds each reconfiguration runs under; -short runs
// the first few.
var reconfigSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 99, 1000, 31337}

// Each reconfiguration (grow 1→3, shrink 5→3, swap a voter) reaches its
// voter set under random faults, with the quorum's and KIP-853's
// invariants checked at every step. A failure names its seed: replay it
// with RunReconfig and TraceLines.
func TestReconfigurationUnderFaults(t *testing.T) {
	seeds := reconfigSeeds
	if testing.Short() {
		seeds = seeds[:4]
	}
	for _, change := range []Reconfig{Grow, Shrink, Swap} {
		t.Run(change.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			for _, seed := range seeds {
				c, err := RunReconfig(seed, ReconfigOptions{Change: change, Faults: 12, WireCheck: true, TraceLines: 40})
				if err != nil {
					trace := ""
					if c != nil {
						for _, l := range c.Trace() {
							trace += "\n" + l
						}
					}
					t.Fatalf("%v seed %d: %v%s", change, seed, err, trace)
				}
			}
			t.Logf("%v: %d seeds in %v", change, len(seeds), time.Since(start))
		})
	}
}

// Without faults each change completes within a few seconds of simulated
// time, and the target is what every node ends with.
func TestReconfigurationWithoutFaults(t *testing.T) {
	for _, change := range []Reconfig{Grow, Shrink, Swap} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%v/%d", change, seed), func(t *testing.T) {
				c, err := RunReconfig(seed, ReconfigOptions{Change: change, TraceLines: 40})
				if err != nil {
					t.Fatalf("seed %d: %v\n%v", seed, err, c.Trace())
				}
				if got := c.now.Sub(Start); got > 30*time.Second {
					t.Errorf("seed %d: took %v of simulated time", seed, got)
				}
			})
		}
	}
}
