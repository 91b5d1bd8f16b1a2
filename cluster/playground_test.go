package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func open(t *testing.T, controllers, brokers int) (*cluster.Playground, *clustertest.Engine) {
	t.Helper()
	cfg, err := cluster.NewConfig(controllers, brokers, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var eng *clustertest.Engine
	p, err := cluster.OpenWith(context.Background(), cfg, func(ctx context.Context, cfg cluster.Config, ev *cluster.Events) (cluster.Engine, error) {
		eng = clustertest.New(cfg, ev, clustertest.Options{})
		return eng, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, eng
}

func do(t *testing.T, p *cluster.Playground, a cluster.Action) cluster.Result {
	t.Helper()
	res, err := p.Do(context.Background(), a)
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	return res
}

func ref(s string) condition.NodeRef {
	r, err := condition.ParseNodeRef(s)
	if err != nil {
		panic(err)
	}
	return r
}

func TestOpenRejectsBadConfigAndFailedStart(t *testing.T) {
	_, err := cluster.OpenWith(context.Background(), cluster.Config{}, clustertest.Start(clustertest.Options{}))
	if err == nil {
		t.Error("zero config accepted")
	}
	boom := errors.New("port in use")
	_, err = cluster.OpenWith(context.Background(), cluster.DefaultConfig(), func(context.Context, cluster.Config, *cluster.Events) (cluster.Engine, error) {
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("failed start = %v", err)
	}
}

func TestKillLeaderRecordsBaselineAndElects(t *testing.T) {
	p, _ := open(t, 3, 1)
	v := p.View()
	if v.LeaderID != 1 || v.LeaderEpoch != 1 || v.Profile != string(cluster.ProfileFast) {
		t.Fatalf("start: leader %d epoch %d profile %s", v.LeaderID, v.LeaderEpoch, v.Profile)
	}
	res := do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref("leader")})
	if res.Action != cluster.ActKill || len(res.Nodes) != 1 || res.Nodes[0] != 1 || res.Message != "killed node 1 (the leader of epoch 1)" {
		t.Errorf("result %+v", res)
	}
	v = p.View()
	if v.Baseline == nil || v.Baseline.Action != "kill" || v.Baseline.LeaderID != 1 || v.Baseline.LeaderEpoch != 1 || v.Baseline.NodeID != 1 {
		t.Fatalf("baseline %+v", v.Baseline)
	}
	for _, c := range []string{"new-leader", "leader != old-leader", "node old-leader state killed", "epoch == baseline+1"} {
		cond, _ := condition.Parse(c)
		if ok, saw, err := cond.Eval(&v); !ok || err != nil {
			t.Errorf("%s = %t, %v (%s)", c, ok, err, saw)
		}
	}
	// Killing it again is refused, with the reason.
	_, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActKill, Node: ref("1")})
	if !errors.Is(err, cluster.ErrNodeState) || err.Error() != "node 1 is killed, not running" {
		t.Errorf("second kill = %v", err)
	}
	do(t, p, cluster.Action{Kind: cluster.ActStart, Node: ref("1")})
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActStart, Node: ref("1")}); !errors.Is(err, cluster.ErrNodeState) {
		t.Errorf("start a running node = %v", err)
	}
	// A start is not a baseline action.
	if b := p.View().Baseline; b.Action != "kill" {
		t.Errorf("baseline replaced by start: %+v", b)
	}
}

func TestActionErrors(t *testing.T) {
	p, eng := open(t, 3, 0)
	cases := []struct {
		a    cluster.Action
		kind error
		msg  string
	}{
		{cluster.Action{Kind: cluster.ActKill, Node: ref("7")}, condition.ErrUnknownNode, "unknown node 7 (nodes: 1, 2, 3)"},
		{cluster.Action{Kind: cluster.ActKill}, nil, "no node given"},
		{cluster.Action{Kind: cluster.ActKill, Node: ref("1"), Peer: ref("2")}, cluster.ErrBadAction, "kill takes one node"},
		{cluster.Action{Kind: cluster.ActPartition, Node: ref("1"), Peer: ref("leader")}, cluster.ErrBadAction, "two different nodes, got 1 twice"},
		{cluster.Action{Kind: cluster.ActPartition, Node: ref("1")}, cluster.ErrBadAction, "partition needs two nodes"},
		{cluster.Action{Kind: cluster.ActHeal, Node: ref("1"), Peer: ref("2"), OneWay: true}, cluster.ErrBadAction, "no --oneway"},
		{cluster.Action{Kind: cluster.ActLink, Node: ref("1"), Peer: ref("2"), Loss: 2}, cluster.ErrBadAction, "loss 2 must be between 0 and 1"},
		{cluster.Action{Kind: cluster.ActLink, Node: ref("1"), Peer: ref("2"), DelayMs: -1}, cluster.ErrBadAction, "delay -1ms must be between"},
		{cluster.Action{Kind: cluster.ActDisk, Node: ref("1"), DelayMs: -1}, cluster.ErrBadAction, "disk: delay -1ms must be between 0 and 10s"},
		{cluster.Action{Kind: cluster.ActDisk, Node: ref("1"), DelayMs: 10001}, cluster.ErrBadAction, "disk: delay 10001ms must be between 0 and 10s"},
		{cluster.Action{Kind: cluster.ActDisk, Node: ref("1"), Peer: ref("2"), DelayMs: 5}, cluster.ErrBadAction, "disk takes one node and a delay"},
		{cluster.Action{Kind: cluster.ActDisk, Node: ref("7"), DelayMs: 5}, condition.ErrUnknownNode, "unknown node 7"},
		{cluster.Action{Kind: cluster.ActResign, Node: ref("2")}, cluster.ErrBadAction, "resign acts on the leader only"},
		{cluster.Action{Kind: "explode"}, cluster.ErrBadAction, `unknown action "explode"`},
		{cluster.Action{Kind: cluster.ActStop, Node: ref("old-leader")}, condition.ErrNoBaseline, "no kill, stop, isolate, resign, wipe, disk or mark yet"},
	}
	for _, tc := range cases {
		_, err := p.Do(context.Background(), tc.a)
		if err == nil || (tc.kind != nil && !errors.Is(err, tc.kind)) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s = %v; want %v saying %q", tc.a, err, tc.kind, tc.msg)
		}
	}
	// Every refusal is on the event stream.
	n := 0
	for _, ev := range p.EventStream().Since(0) {
		if ev.Kind == cluster.EventActionError {
			n++
		}
	}
	if n != len(cases) {
		t.Errorf("%d action-error events, want %d", n, len(cases))
	}

	// An engine failure keeps the previous baseline.
	do(t, p, cluster.Action{Kind: cluster.ActIsolate, Node: ref("3")})
	eng.FailNextAction(errors.New("disk full"))
	_, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActKill, Node: ref("2")})
	if err == nil || err.Error() != "kill node 2: disk full" {
		t.Errorf("failed kill = %v", err)
	}
	if b := p.View().Baseline; b.Action != "isolate" || b.NodeID != 3 {
		t.Errorf("baseline after failed kill %+v", b)
	}

	// No leader: resign and "leader" have nothing to act on.
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref("1")})
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref("2")})
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActResign}); !errors.Is(err, condition.ErrNoLeader) {
		t.Errorf("resign without leader = %v", err)
	}
}

func TestLinkActions(t *testing.T) {
	p, _ := open(t, 3, 1)
	do(t, p, cluster.Action{Kind: cluster.ActLink, Node: ref("1"), Peer: ref("2"), DelayMs: 200, JitterMs: 50, Loss: 0.1})
	res := do(t, p, cluster.Action{Kind: cluster.ActPartition, Node: ref("1"), Peer: ref("2"), OneWay: true})
	if res.Message != "partitioned 1 -> 2 (one way: what 1 sends 2 is dropped)" {
		t.Errorf("message %q", res.Message)
	}
	v := p.View()
	l12, l21 := v.Link(1, 2), v.Link(2, 1)
	if !l12.Down || l12.DelayMs != 200 || l12.JitterMs != 50 || l12.Loss != 0.1 {
		t.Errorf("1->2 %+v: partition must keep the delay", l12)
	}
	if l21.Down || l21.DelayMs != 200 {
		t.Errorf("2->1 %+v", l21)
	}
	do(t, p, cluster.Action{Kind: cluster.ActHeal, Node: ref("2"), Peer: ref("1")})
	v = p.View()
	if v.Link(1, 2).Fault() != (view.LinkFault{}) || v.Link(2, 1).Fault() != (view.LinkFault{}) {
		t.Errorf("heal 1 2 left faults: %+v %+v", v.Link(1, 2), v.Link(2, 1))
	}

	res = do(t, p, cluster.Action{Kind: cluster.ActIsolate, Node: ref("leader")})
	if !strings.HasPrefix(res.Message, "isolated node 1 (the leader of epoch 1)") {
		t.Errorf("isolate message %q", res.Message)
	}
	v = p.View()
	n1, _ := v.Node(1)
	if n1.State != view.StateIsolated || v.Baseline.Action != "isolate" || v.LeaderID == 1 {
		t.Errorf("after isolate: node 1 %s, baseline %+v, leader %d", n1.State, v.Baseline, v.LeaderID)
	}
	res = do(t, p, cluster.Action{Kind: cluster.ActHeal})
	if res.Message != "healed every link (6 had faults)" {
		t.Errorf("heal message %q", res.Message)
	}
	v = p.View()
	if n1, _ := v.Node(1); n1.State != view.StateRunning {
		t.Errorf("node 1 after heal: %s", n1.State)
	}
	for _, l := range v.Links {
		if l.Down {
			t.Errorf("link still down after heal: %+v", l)
		}
	}
}

// heal NODE undoes isolate NODE, and every other fault of that node's
// links, and leaves the other links alone.
func TestHealOneNode(t *testing.T) {
	p, _ := open(t, 3, 1)
	do(t, p, cluster.Action{Kind: cluster.ActIsolate, Node: ref("3")})
	do(t, p, cluster.Action{Kind: cluster.ActLink, Node: ref("1"), Peer: ref("2"), DelayMs: 100})
	res := do(t, p, cluster.Action{Kind: cluster.ActHeal, Node: ref("3")})
	if res.Message != "healed every link of node 3 (6 had faults)" || len(res.Nodes) != 1 || res.Nodes[0] != 3 {
		t.Errorf("heal 3 = %+v", res)
	}
	v := p.View()
	if n3, _ := v.Node(3); n3.State != view.StateRunning {
		t.Errorf("node 3 after heal 3: %s", n3.State)
	}
	for _, l := range v.Links {
		if (l.From == 3 || l.To == 3) && l.Fault() != (view.LinkFault{}) {
			t.Errorf("heal 3 left %+v", l)
		}
	}
	if v.Link(1, 2).DelayMs != 100 {
		t.Errorf("heal 3 healed 1->2 too: %+v", v.Link(1, 2))
	}
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActHeal, Node: ref("9")}); !errors.Is(err, condition.ErrUnknownNode) {
		t.Errorf("heal 9 = %v", err)
	}
}

func TestResignStopSnapshot(t *testing.T) {
	p, _ := open(t, 3, 0)
	res := do(t, p, cluster.Action{Kind: cluster.ActResign})
	if res.Message != "node 1 resigned the leadership of epoch 1" {
		t.Errorf("resign: %q", res.Message)
	}
	v := p.View()
	if v.LeaderID == 1 || v.LeaderEpoch != 2 || v.Baseline.Action != "resign" {
		t.Errorf("after resign: leader %d epoch %d baseline %+v", v.LeaderID, v.LeaderEpoch, v.Baseline)
	}
	res = do(t, p, cluster.Action{Kind: cluster.ActSnapshot, Node: ref("leader")})
	if res.Snapshot == nil || !strings.Contains(res.Message, "took a snapshot ending at offset") {
		t.Errorf("snapshot: %+v", res)
	}
	res = do(t, p, cluster.Action{Kind: cluster.ActStop, Node: ref("3")})
	if !strings.HasPrefix(res.Message, "stopped node 3 gracefully") {
		t.Errorf("stop: %q", res.Message)
	}
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActSnapshot, Node: ref("3")}); !errors.Is(err, cluster.ErrNodeState) {
		t.Errorf("snapshot of a stopped node = %v", err)
	}
}

func TestEventsFollowEndsOnClose(t *testing.T) {
	p, _ := open(t, 3, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan []cluster.EventKind, 1)
	go func() {
		var kinds []cluster.EventKind
		for ev, err := range p.Events(ctx, 0, true) {
			if err != nil {
				break
			}
			kinds = append(kinds, ev.Kind)
		}
		got <- kinds
	}()
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref("2")})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	kinds := <-got
	if len(kinds) < 3 || kinds[len(kinds)-1] != cluster.EventDown {
		t.Errorf("followed %v; want the election, the kill and down last", kinds)
	}
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: ref("1")}); !errors.Is(err, cluster.ErrClosed) {
		t.Errorf("action after close = %v", err)
	}
	if _, err := p.Status(ctx); !errors.Is(err, cluster.ErrClosed) {
		t.Errorf("status after close = %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second close = %v", err)
	}
	var n int
	for range p.Events(ctx, 0, false) {
		n++
	}
	if n == 0 {
		t.Error("history not readable after close")
	}
}

// A view carries the playground's data folder and its settings by Kafka
// config name, as --set takes them, so that a scenario can tell whether
// it fits a running playground.
func TestViewCarriesDataDirAndSettings(t *testing.T) {
	cfg, err := cluster.NewConfig(3, 0, cluster.ProfileFast, []string{"replica.lag.time.max.ms=1500"}, "/tmp/kraftlab-x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := cluster.OpenWith(context.Background(), cfg, clustertest.Start(clustertest.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	v := p.View()
	if v.DataDir != "/tmp/kraftlab-x" {
		t.Errorf("DataDir %q", v.DataDir)
	}
	if len(v.Settings) != len(cluster.SettingKeys()) {
		t.Errorf("%d settings, want %d", len(v.Settings), len(cluster.SettingKeys()))
	}
	fetch, _ := cfg.Settings.Get("controller.quorum.fetch.timeout.ms")
	if v.Settings["replica.lag.time.max.ms"] != "1500" || v.Settings["controller.quorum.fetch.timeout.ms"] != fetch {
		t.Errorf("settings %v", v.Settings)
	}
	v.Settings["replica.lag.time.max.ms"] = "1"
	if p.View().Settings["replica.lag.time.max.ms"] != "1500" {
		t.Error("a view's settings are the playground's own map")
	}
}
