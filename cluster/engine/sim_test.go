package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
)

// openSim starts a simulated playground of seed on the fast profile.
func openSim(t *testing.T, seed uint64) *cluster.Playground {
	t.Helper()
	cfg, err := cluster.NewConfig(cluster.SimControllers, cluster.SimBrokers, cluster.ProfileFast, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sim, cfg.Seed = true, seed
	p, err := OpenSim(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// simDo performs an action line's action and fails the test on an error.
func simDo(t *testing.T, p *cluster.Playground, a cluster.Action) cluster.Result {
	t.Helper()
	res, err := p.Do(context.Background(), a)
	if err != nil {
		for _, ev := range p.EventStream().Since(0) {
			t.Log(ev)
		}
		t.Fatalf("%s: %v", a, err)
	}
	return res
}

// simWait runs simulated time until cond holds, failing the test if it
// does not within limit.
func simWait(t *testing.T, p *cluster.Playground, cond string, limit time.Duration) cluster.Result {
	t.Helper()
	res := simDo(t, p, cluster.Action{Kind: cluster.ActRun, Until: cond, AdvanceMs: limit.Milliseconds()})
	if !res.Held {
		t.Fatalf("wait %s: still false after %v of simulated time; saw %s", cond, limit, res.Message)
	}
	return res
}

func node(id int32) condition.NodeRef { return condition.NodeID(id) }

// simScript is a failover the tests take a run through, one step a call.
var simScript = []func(t *testing.T, p *cluster.Playground){
	func(t *testing.T, p *cluster.Playground) { simWait(t, p, "leader", 30*time.Second) },
	func(t *testing.T, p *cluster.Playground) {
		simDo(t, p, cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()})
	},
	func(t *testing.T, p *cluster.Playground) { simWait(t, p, "new-leader", 30*time.Second) },
	func(t *testing.T, p *cluster.Playground) {
		simDo(t, p, cluster.Action{Kind: cluster.ActStart, Node: mustRef("old-leader")})
	},
	func(t *testing.T, p *cluster.Playground) {
		simDo(t, p, cluster.Action{Kind: cluster.ActStop, Node: node(101)})
	},
	func(t *testing.T, p *cluster.Playground) {
		simDo(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 2000})
	},
	func(t *testing.T, p *cluster.Playground) {
		simDo(t, p, cluster.Action{Kind: cluster.ActStart, Node: node(101)})
	},
	func(t *testing.T, p *cluster.Playground) { simWait(t, p, "caught-up", 60*time.Second) },
}

func simLog(t *testing.T, p *cluster.Playground) []cluster.Event {
	t.Helper()
	return simDo(t, p, cluster.Action{Kind: cluster.ActHistory}).Log
}

func TestSimSameSeedSameLog(t *testing.T) {
	var logs [2][]cluster.Event
	var views [2][]byte
	for i := range logs {
		p := openSim(t, 7)
		for _, step := range simScript {
			step(t, p)
			// The first run is watched often, the second never: a view
			// reads, it does not change the run.
			for range 5 * (1 - i) {
				p.View()
			}
		}
		logs[i] = simLog(t, p)
		v := p.View()
		v.DataDir = "" // the test's own folder
		views[i], _ = json.Marshal(v)
	}
	if string(views[0]) != string(views[1]) {
		t.Errorf("seed 7 ran twice, watched and not, ends in two views:\n%s\n%s", views[0], views[1])
	}
	if len(logs[0]) < 10 {
		t.Fatalf("the run logged only %d events: %v", len(logs[0]), logs[0])
	}
	if !slices.Equal(logs[0], logs[1]) {
		t.Fatalf("seed 7 ran twice gave two logs:\n%v\n%v", logs[0], logs[1])
	}
	for _, ev := range logs[0] {
		t.Log(ev)
	}
}

func mustRef(s string) condition.NodeRef {
	r, err := condition.ParseNodeRef(s)
	if err != nil {
		panic(err)
	}
	return r
}

func TestSimRewindAndRepeatGivesTheSameLog(t *testing.T) {
	p := openSim(t, 7)
	for _, step := range simScript {
		step(t, p)
	}
	want := simLog(t, p)
	v := p.View()
	// The first wait holds at once, which takes no step.
	steps := len(simScript) - 1
	if v.Sim == nil || v.Sim.Branch != 1 || v.Sim.Step != steps {
		t.Fatalf("after the script the run stands at %+v, want step %d of branch 1", v.Sim, steps)
	}
	// Back to step 2 (the leader killed and a new one elected), then the
	// same actions again: a second branch, which must log what the
	// first did.
	const k = 2
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, Step: k})
	if v := p.View(); v.Sim.Step != k || v.Sim.Branch != 1 {
		t.Fatalf("after rewind %d the run stands at step %d of branch %d", k, v.Sim.Step, v.Sim.Branch)
	}
	if got := simLog(t, p); !slices.Equal(got, want[:len(got)]) {
		t.Fatalf("the log replayed to step %d is no prefix of the run's:\n%v\nwant a prefix of\n%v", k, got, want)
	}
	for _, step := range simScript[k+1:] {
		step(t, p)
	}
	if got := simLog(t, p); !slices.Equal(got, want) {
		t.Fatalf("repeating the actions after rewind %d logged:\n%v\nwant\n%v", k, got, want)
	}
	v = p.View()
	if len(v.Sim.Branches) != 2 || v.Sim.Branch != 2 || v.Sim.Branches[1].Parent != 1 || v.Sim.Branches[1].Fork != k {
		t.Fatalf("history after the repeat: %+v, want branch 2 leaving branch 1 at step %d", v.Sim, k)
	}
	// A different action at step 2 makes a third branch, another run.
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, Step: k, Branch: 1})
	simDo(t, p, cluster.Action{Kind: cluster.ActKill, Node: node(102)})
	if v := p.View(); len(v.Sim.Branches) != 3 || v.Sim.Branch != 3 {
		t.Fatalf("a new action after a rewind left the history at %+v, want a third branch", v.Sim)
	}
	// And branch 1's end is the first run again.
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, Step: steps, Branch: 1})
	if got := simLog(t, p); !slices.Equal(got, want) {
		t.Fatalf("branch 1 replayed to its end logged:\n%v\nwant\n%v", got, want)
	}
}

// rewind --by moves from where the run stands, so that keys pressed
// faster than the screen's polls each move a step; it refuses to move
// past either end of the branch.
func TestSimRewindByStepsFromWhereTheRunStands(t *testing.T) {
	p := openSim(t, 3)
	for _, d := range []int64{100, 200, 300} {
		simDo(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: d})
	}
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, By: -1})
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, By: -1})
	if v := p.View(); v.Sim.Step != 1 || len(v.Sim.Branches) != 1 {
		t.Fatalf("two steps back from step 3: %+v", v.Sim)
	}
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActRewind, By: -2}); !errors.Is(err, cluster.ErrNodeState) {
		t.Errorf("two steps back from step 1: %v, want a refusal", err)
	}
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActRewind, By: 3}); !errors.Is(err, cluster.ErrNodeState) {
		t.Errorf("three steps forward from step 1 of 3: %v, want a refusal", err)
	}
	simDo(t, p, cluster.Action{Kind: cluster.ActRewind, By: 2})
	if v := p.View(); v.Sim.Step != 3 || v.Timestamp-raftsimStartMs() != 600+v.Sim.Branches[0].Steps[0].AtMs {
		t.Fatalf("two steps forward to the branch's end: %+v at %d", v.Sim, v.Timestamp)
	}
}

func raftsimStartMs() int64 { return raftsim.Start.UnixMilli() }

// Running time at wall speed while a screen looks: pausing never waits
// on a view, and the time it ran is one step of the history.
func TestSimResumeAndPauseWhileViewed(t *testing.T) {
	p := openSim(t, 5)
	simDo(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})
	stop := make(chan struct{})
	viewed := make(chan struct{})
	go func() {
		defer close(viewed)
		for {
			select {
			case <-stop:
				return
			default:
				p.View()
			}
		}
	}()
	poll.Until(t, 30*time.Second, "simulated time to run", func() bool { return p.View().Sim.Step > 0 })
	simDo(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	close(stop)
	<-viewed
	v := p.View()
	if !v.Clock.Paused || len(v.Sim.Branches[0].Steps) != 1 || !strings.HasPrefix(v.Sim.Branches[0].Steps[0].Replay, "clock advance ") {
		t.Fatalf("after resume and pause: clock %+v, history %+v", v.Clock, v.Sim)
	}
}
