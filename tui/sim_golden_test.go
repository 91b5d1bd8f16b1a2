package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
)

// A simulated playground is a function of its seed and its actions, so
// its screens need no recording: the test takes the actions and pulls
// the frames itself, the same every run. The screens: seed 7 after a
// leader kill and the new election, the run stepping along its branch;
// then rewound to step 1 and sent down another branch, the old leader
// restarted instead of left down, which the slider shows as branch 2
// leaving branch 1.
func TestGoldenSim(t *testing.T) {
	cfg, err := cluster.NewConfig(cluster.SimControllers, cluster.SimBrokers, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sim, cfg.Seed = true, 7
	pg, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	var r recording
	r.Started = raftsim.Start
	after := uint64(0)
	do := func(a cluster.Action) cluster.Result {
		t.Helper()
		res, err := pg.Do(context.Background(), a)
		if err != nil || (a.Kind == cluster.ActRun && !res.Held) {
			t.Fatalf("%s: %v %+v", a, err, res)
		}
		evs := pg.EventStream().Since(after)
		if n := len(evs); n > 0 {
			after = evs[n-1].Seq
		}
		r.Frames = append(r.Frames, recordedFrame{View: pg.View(), Events: evs})
		return res
	}
	run := func(cond string) {
		do(cluster.Action{Kind: cluster.ActRun, Until: cond, AdvanceMs: (30 * time.Second).Milliseconds()})
	}
	advance := func(d time.Duration) {
		do(cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: d.Milliseconds()})
	}
	run("leader")
	advance(time.Second)
	killed := do(cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()}).Nodes[0]
	run("new-leader")
	advance(time.Second)
	failover := r
	failover.Select = r.Frames[len(r.Frames)-1].View.LeaderID
	do(cluster.Action{Kind: cluster.ActRewind, Step: 2})
	do(cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(killed)})
	run("caught-up")
	branched := r
	branched.Select = failover.Select

	for _, g := range []struct {
		name string
		r    recording
	}{{"sim-failover", failover}, {"sim-branched", branched}} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s/%dx%d", g.name, size[0], size[1]), func(t *testing.T) {
				m := replay(g.r, size[0], size[1])
				golden.RequireEqual(t, []byte(m.View()+"\n"))
			})
		}
	}
}
