package metasim

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kraftlab/kraftlab/internal/seedtest"
)

// defaultSeeds is how many seeds plain `go test` runs; -short runs fewer,
// KRAFTLAB_METASIM_SEEDS more, and KRAFTLAB_METASIM_SEED=N replays one with
// its trace.
const defaultSeeds = 50

const workloadFaults = 12

func replayCommand(seed uint64) string {
	return fmt.Sprintf("KRAFTLAB_METASIM_SEED=%d go test -run 'TestSeeds$' -v ./metadata/metasim/", seed)
}

// TestSeeds runs the randomized workload over many seeds.
func TestSeeds(t *testing.T) {
	first, count, replay := seedtest.Seeds(t, "KRAFTLAB_METASIM", defaultSeeds, 10)
	var mu sync.Mutex
	events, created, deleted, grown := 0, 0, 0, 0
	seedtest.Parallel(t, first, count, func(seed uint64) (string, error) {
		wo := WorkloadOptions{Faults: workloadFaults, TraceLines: 40}
		if replay {
			wo.TraceLines = 400
		}
		s, err := Run(seed, wo)
		if s != nil {
			mu.Lock()
			events += s.Events()
			for _, c := range s.clients {
				created += c.created
				deleted += c.deleted
				grown += c.grown
			}
			mu.Unlock()
		}
		if err == nil {
			return "", nil
		}
		msg := fmt.Sprintf("%v\nreplay: %s", err, replayCommand(seed))
		if s != nil {
			msg += "\ntranscript tail:\n" + strings.Join(s.Transcript(), "\n")
			if replay {
				msg += "\ntrace tail:\n" + strings.Join(s.Trace(), "\n")
			}
		}
		return "", errors.New(msg)
	})
	t.Logf("%d events; acknowledged %d creations, %d deletions, %d growths", events, created, deleted, grown)
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
