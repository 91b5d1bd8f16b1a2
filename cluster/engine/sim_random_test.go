package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/seedtest"
)

// A simulated playground under random actions, as users would take them
// in any order: the invariants hold after every event, a rewind to a
// random step logs a prefix of the run, and replaying the branch to its
// end logs the run again. Then everything heals and the cluster must
// catch up. KRAFTLAB_SIMPLAY_SEEDS=N runs seeds 1..N (default 4);
// KRAFTLAB_SIMPLAY_SEED=N replays one.
func TestSimPlaygroundUnderRandomActions(t *testing.T) {
	first, count, _ := seedtest.Seeds(t, "KRAFTLAB_SIMPLAY", 4, 4)
	for seed := first; seed < first+uint64(count); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			randomActions(t, seed)
		})
	}
}

func randomActions(t *testing.T, seed uint64) {
	p := openSim(t, seed)
	r := rand.New(rand.NewPCG(seed, 0x706c6179))
	ids := []int32{1, 2, 3, 101, 102, 103}
	pick := func() condition.NodeRef { return condition.NodeID(ids[r.IntN(len(ids))]) }
	var lines []string
	for range 30 {
		a := randomAction(r, pick)
		lines = append(lines, a.String())
		_, err := p.Do(context.Background(), a)
		if errors.Is(err, errRunBroken) {
			t.Fatalf("seed %d (KRAFTLAB_SIMPLAY_SEED=%d replays it): after %v: %v", seed, seed, lines, err)
		}
	}
	want := simLog(t, p)
	steps := p.View().Sim.Step
	k := r.IntN(steps + 1)
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, Step: k})
	if got := simLog(t, p); len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
		t.Fatalf("seed %d: the log replayed to step %d is no prefix of the run's (actions %v)", seed, k, lines)
	}
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, Step: steps})
	if got := simLog(t, p); !slices.Equal(got, want) {
		t.Fatalf("seed %d: the branch replayed from step %d to its end logged another run (actions %v)", seed, k, lines)
	}
	// Heal: every link, every node; the cluster must catch up.
	simDo(t, p, cluster.Action{Kind: cluster.ActHeal})
	for _, n := range p.View().Nodes {
		if n.State != view.StateRunning {
			simDo(t, p, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(n.ID)})
		}
	}
	res := simDo(t, p, cluster.Action{Kind: cluster.ActRun, Until: "caught-up", AdvanceMs: 120_000})
	if !res.Held {
		t.Fatalf("seed %d: healed, the cluster never caught up: %s (actions %v)", seed, res.Message, lines)
	}
}

// randomAction is one of the actions a simulated playground takes, on a
// node pick names; many will be refused (a node already down), as a
// user's would.
func randomAction(r *rand.Rand, pick func() condition.NodeRef) cluster.Action {
	switch r.IntN(11) {
	case 0:
		return cluster.Action{Kind: cluster.ActKill, Node: pick()}
	case 1, 2:
		return cluster.Action{Kind: cluster.ActStart, Node: pick()}
	case 3:
		return cluster.Action{Kind: cluster.ActStop, Node: pick()}
	case 4:
		return cluster.Action{Kind: cluster.ActResign}
	case 5:
		return cluster.Action{Kind: cluster.ActPartition, Node: pick(), Peer: pick()}
	case 6:
		return cluster.Action{Kind: cluster.ActHeal}
	case 7:
		return cluster.Action{Kind: cluster.ActLink, Node: pick(), Peer: pick(), DelayMs: int64(r.IntN(200)), Loss: float64(r.IntN(3)) / 10}
	case 8:
		return cluster.Action{Kind: cluster.ActSnapshot, Node: pick()}
	case 9:
		return cluster.Action{Kind: cluster.ActRun, Until: "leader", AdvanceMs: int64(1000 + r.IntN(9000))}
	}
	return cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: int64(100 + r.IntN(3000))}
}
