package raftsim

import (
	"fmt"
	"strings"
	"testing"
)

// A static quorum upgrades to kraft.version 1 under random faults, with
// the invariants of a dynamic quorum checked at every step. A failure
// names its seed and the command that replays it.
func TestUpgradeUnderFaults(t *testing.T) {
	seeds, replay := reconfigSeedsToRun(t)
	appended := 0
	defer func() { t.Logf("%d seeds, %d upgrades appended", len(seeds), appended) }()
	for _, seed := range seeds {
		lines := 0
		if replay {
			lines = 400
		}
		c, err := RunUpgrade(seed, reconfigFaults, lines)
		if c != nil {
			appended += c.changes
		}
		if err == nil {
			continue
		}
		msg := fmt.Sprintf("seed %d: %v\nreplay: KRAFTLAB_SIM_SEED=%d go test -run 'TestUpgradeUnderFaults$' -v ./replication/raft/raftsim/", seed, err, seed)
		if replay && c != nil {
			msg += "\ntrace tail:\n" + strings.Join(c.Trace(), "\n")
		}
		t.Error(msg)
	}
}
