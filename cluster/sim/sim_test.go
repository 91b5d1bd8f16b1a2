package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/internal/seedtest"
)

// defaultSeeds is how many seeds plain `go test` runs; -short runs fewer,
// KRAFTLAB_CLUSTERSIM_SEEDS more, and KRAFTLAB_CLUSTERSIM_SEED=N replays
// one with a longer trace.
const defaultSeeds = 6

func replayCommand(seed uint64) string {
	return fmt.Sprintf("KRAFTLAB_CLUSTERSIM_SEED=%d go test -run 'TestWholeClusterUnderFaults$' -v ./cluster/sim/", seed)
}

// Each seed runs the whole cluster under faults with both layers'
// invariants checked after every event, the seeds side by side on every
// core; a failure names its seed and the command that replays it.
func TestWholeClusterUnderFaults(t *testing.T) {
	first, count, replay := seedtest.Seeds(t, "KRAFTLAB_CLUSTERSIM", defaultSeeds, 2)
	seedtest.Parallel(t, first, count, func(seed uint64) (string, error) {
		opts := Options{Seed: seed, Dir: t.TempDir(), TraceLines: 40}
		if replay {
			opts.TraceLines = 400
		}
		s, err := Run(opts)
		if err == nil {
			return s.Summary(), nil
		}
		msg := fmt.Sprintf("%v\nreplay: %s", err, replayCommand(seed))
		if s != nil && s.ms != nil {
			msg += "\ntranscript tail:\n" + strings.Join(s.Transcript(), "\n")
			if replay {
				msg += "\ntrace tail:\n" + strings.Join(s.Trace(), "\n")
			}
		}
		return "", errors.New(msg)
	})
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
