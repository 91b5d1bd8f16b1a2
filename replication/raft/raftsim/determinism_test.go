package raftsim

import (
	"testing"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// The same seed replays the same run: every event, message and fault in the
// same order at the same virtual time, so its trace hashes the same.
func TestSameSeedReplaysSameTrace(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		mo := MixOptions{Faults: mixFaults, WireCheck: true, Replication: mode}
		for _, seed := range []uint64{1, 2, 3, 42, 1000} {
			a, errA := RunMix(seed, mo)
			b, errB := RunMix(seed, mo)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("seed %d: first run %v, second %v", seed, errA, errB)
			}
			if a.TraceHash() != b.TraceHash() || a.Events() != b.Events() {
				t.Fatalf("seed %d: traces differ: %x (%d events) vs %x (%d events)", seed, a.TraceHash(), a.Events(), b.TraceHash(), b.Events())
			}
			if seed > 1 {
				if c, _ := RunMix(seed-1, mo); c.TraceHash() == a.TraceHash() {
					t.Fatalf("seeds %d and %d hash the same trace", seed-1, seed)
				}
			}
		}
	})
}
