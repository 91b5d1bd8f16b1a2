package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// The real engine: nodes on loopback sockets with the fast profile.

func openReal(t *testing.T, controllers, brokers int, dataDir string) *cluster.Playground {
	t.Helper()
	cfg, err := cluster.NewConfig(controllers, brokers, cluster.ProfileFast, nil, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return openWith(t, cfg)
}

// openWith starts a playground of cfg on the real engine.
func openWith(t *testing.T, cfg cluster.Config) *cluster.Playground {
	t.Helper()
	p, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitRejoined waits until a leader that resigned is back in the quorum:
// a follower of the leader that replaced it, or, on a loaded machine
// where that leader's first fetch timeout ran out, the leader again at a
// later epoch (resigning does not bar a node from the next election).
func waitRejoined(t *testing.T, p *cluster.Playground, old int32) {
	t.Helper()
	first := p.View()
	var epoch int32
	if l, ok := first.Leader(); ok {
		epoch = l.Epoch
	}
	var saw *view.Node
	poll.Until(t, 15*time.Second, fmt.Sprintf("node %d back as a follower", old), func() bool {
		v := p.View()
		saw, _ = v.Node(old)
		return saw != nil && (saw.Role == view.RoleFollower || (saw.Role == view.RoleLeader && saw.Epoch > epoch))
	}, func() string { return describeNodes(p) })
	if saw.Role == view.RoleLeader {
		t.Logf("node %d was elected again at epoch %d after resigning", old, saw.Epoch)
	}
}

// describeNodes is every node's state, role, epoch and leader, and the
// newest events, for a failed wait to say what it saw.
func describeNodes(p *cluster.Playground) string {
	v := p.View()
	var b strings.Builder
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "node %d: %s %s epoch %d leader %d voted %d\n", n.ID, n.State, n.Role, n.Epoch, n.LeaderID, n.VotedID)
	}
	evs := p.EventStream().Since(0)
	for _, e := range evs[max(0, len(evs)-25):] {
		fmt.Fprintf(&b, "  %+v\n", e)
	}
	return b.String()
}

// waitCond polls the playground until the condition holds. A topic the
// view does not have yet is waited for too: a CreateTopics is answered
// once its records are committed, and the controllers' loaders, which the
// view reads, publish them a moment later.
func waitCond(t *testing.T, p *cluster.Playground, text string) view.View {
	t.Helper()
	c, err := condition.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var v view.View
	var saw string
	poll.Until(t, 15*time.Second, text, func() bool {
		v = p.View()
		ok, s, err := c.Eval(&v)
		if errors.Is(err, condition.ErrUnknownTopic) {
			saw = err.Error()
			return false
		}
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		saw = s
		return ok
	}, func() string { return "last saw: " + saw })
	return v
}

func act(t *testing.T, p *cluster.Playground, words string) cluster.Result {
	t.Helper()
	f := strings.Fields(words)
	a := cluster.Action{Kind: cluster.ActionKind(f[0])}
	if len(f) > 1 {
		a.Node = mustRef(t, f[1])
	}
	if len(f) > 2 {
		a.Peer = mustRef(t, f[2])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := p.Do(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", words, err)
	}
	return res
}

func mustRef(t *testing.T, s string) condition.NodeRef {
	r, err := condition.ParseNodeRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func eventKinds(p *cluster.Playground) map[cluster.EventKind]int {
	out := map[cluster.EventKind]int{}
	for _, e := range p.EventStream().Since(0) {
		out[e.Kind]++
	}
	return out
}

func TestRealEngineView(t *testing.T) {
	p := openReal(t, 3, 2, "")
	v := waitCond(t, p, "caught-up")
	if len(v.ClusterID) != 22 || len(v.Nodes) != 5 {
		t.Fatalf("view: cluster %q, %d nodes", v.ClusterID, len(v.Nodes))
	}
	for _, n := range v.Nodes {
		if !strings.HasPrefix(n.Listener, "127.0.0.1:") || n.State != view.StateRunning {
			t.Errorf("node %d: listener %q state %s", n.ID, n.Listener, n.State)
		}
		want := view.KindController
		if n.ID >= cluster.FirstBrokerID {
			want = view.KindBroker
			if n.Role != view.RoleObserver {
				t.Errorf("broker %d role %s", n.ID, n.Role)
			}
		}
		if n.Kind != want {
			t.Errorf("node %d kind %s", n.ID, n.Kind)
		}
	}
	// The idle leader's NoOpRecords move the high watermark.
	v = waitCond(t, p, "hwm >= 10")
	if len(v.CurrentVoters) != 3 || len(v.CurrentObservers) != 2 || v.CurrentVoters[0].Status != view.StatusLeader {
		t.Fatalf("replication table: voters %+v observers %+v", v.CurrentVoters, v.CurrentObservers)
	}
	for _, r := range v.CurrentObservers {
		// A broker names itself by its folder's directory id, as Kafka's
		// brokers send their metadata log folder's.
		if r.LastFetchTimestamp <= 0 || r.LogEndOffset <= 0 || r.DirectoryID == "" {
			t.Errorf("observer %+v", r)
		}
	}
	leader, _ := v.Leader()
	if leader.RPC["Fetch"].Requests == 0 || leader.RPC["Fetch"].Responses == 0 {
		t.Errorf("leader RPC counters: %+v", leader.RPC)
	}
	if l := v.Link(101, leader.ID); l.RPC["Fetch"].Requests == 0 || l.RPC["Fetch"].ResponseBytes == 0 {
		t.Errorf("link 101 -> %d: %+v", leader.ID, l)
	}
	kinds := eventKinds(p)
	if kinds[cluster.EventElection] == 0 || kinds[cluster.EventHighWatermark] == 0 {
		t.Errorf("events: %v", kinds)
	}
	// One recovery event per node for opening its log. A controller's
	// loader may add one: its log opens with the initial voter set, whose
	// replay at startup ends only once that commits, and by then the
	// controller may have fetched the first metadata records too.
	opened := 0
	for _, e := range p.EventStream().Since(0) {
		if e.Kind == cluster.EventRecovery && strings.HasPrefix(e.Message, "opened ") {
			opened++
		}
	}
	if opened != 5 {
		t.Errorf("%d nodes opened their logs, want 5; events: %v", opened, kinds)
	}
}

func TestRealEngineActions(t *testing.T) {
	p := openReal(t, 3, 1, "")
	waitCond(t, p, "caught-up")

	act(t, p, "kill leader")
	v := waitCond(t, p, "new-leader")
	old := v.Baseline.LeaderID
	if n, _ := v.Node(old); n.State != view.StateKilled || n.Role != "" {
		t.Errorf("killed node: %+v", n)
	}
	waitCond(t, p, "hwm > baseline")
	act(t, p, "start old-leader")
	waitCond(t, p, "node old-leader role Follower")
	waitCond(t, p, "caught-up")

	res := act(t, p, "snapshot leader")
	if res.Snapshot == nil || res.Snapshot.EndOffset <= 0 {
		t.Fatalf("snapshot: %+v", res)
	}
	v = waitCond(t, p, "node leader log-start > 0")
	if l, _ := v.Leader(); l.LatestSnapshot == nil || *l.LatestSnapshot != *res.Snapshot {
		t.Errorf("leader's latest snapshot %v, took %v", l.LatestSnapshot, res.Snapshot)
	}

	act(t, p, "resign")
	v = waitCond(t, p, "new-leader")
	waitRejoined(t, p, v.Baseline.LeaderID)

	act(t, p, "isolate leader")
	waitCond(t, p, "new-leader")
	waitCond(t, p, "node old-leader role != Leader")
	v = p.View()
	if n, _ := v.Node(v.Baseline.LeaderID); n.State != view.StateIsolated {
		t.Errorf("isolated node state %s", n.State)
	}
	if l := v.Link(v.Baseline.LeaderID, 101); !l.Down {
		t.Errorf("link from the isolated node: %+v", l)
	}
	ctx := context.Background()
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActHeal}); err != nil {
		t.Fatal(err)
	}
	waitCond(t, p, "node old-leader role Follower")
	waitCond(t, p, "caught-up")

	act(t, p, "stop leader")
	waitCond(t, p, "new-leader")
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActStop, Node: mustRef(t, "old-leader")}); !errors.Is(err, cluster.ErrNodeState) {
		t.Errorf("stop a stopped node: %v", err)
	}
	kinds := eventKinds(p)
	for _, k := range []cluster.EventKind{cluster.EventEndQuorumEpoch, cluster.EventBeginQuorumEpoch, cluster.EventSnapshotTaken, cluster.EventRoleChange} {
		if kinds[k] == 0 {
			t.Errorf("no %s event: %v", k, kinds)
		}
	}
	checkEventOrder(t, p.EventStream().Since(0))
}

// checkEventOrder checks that the event log reads as a story: times rise
// with sequence numbers, and every voter reports a new leader's
// BeginQuorumEpoch after the leader reported its election.
func checkEventOrder(t *testing.T, evs []cluster.Event) {
	t.Helper()
	elected := map[int32]uint64{} // epoch -> seq of its election event
	for i, ev := range evs {
		if i > 0 && ev.Time.Before(evs[i-1].Time) {
			t.Errorf("#%d at %s is before #%d at %s", ev.Seq, ev.Time.Format("15:04:05.000"), evs[i-1].Seq, evs[i-1].Time.Format("15:04:05.000"))
		}
		switch ev.Kind {
		case cluster.EventElection:
			elected[ev.Epoch] = ev.Seq
		case cluster.EventBeginQuorumEpoch:
			if _, ok := elected[ev.Epoch]; !ok {
				t.Errorf("#%d %s: node %d reports BeginQuorumEpoch of epoch %d before its leader reported the election", ev.Seq, ev.Kind, ev.Node, ev.Epoch)
			}
		}
	}
}

// TestRealEngineKeepsDataDir: a named data folder survives Close, keeps
// its cluster ID and its log, and starts again from them.
func TestRealEngineKeepsDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := openReal(t, 3, 0, dir)
	v := waitCond(t, p, "hwm >= 5")
	id, hwm := v.ClusterID, v.HighWatermark
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"node-1/meta.properties", "node-2/__cluster_metadata-0/quorum-state", "node-3/__cluster_metadata-0/00000000000000000000.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after Close: %v", err)
		}
	}
	p = openReal(t, 3, 0, dir)
	v = waitCond(t, p, "leader")
	if v.ClusterID != id {
		t.Errorf("cluster id %s after restart, was %s", v.ClusterID, id)
	}
	// The high watermark promises the records below it to a majority, not
	// to every voter: a follower may have been behind when the folder
	// closed. A majority must have read them back from its files, and the
	// restarted quorum must commit up to the old mark again.
	holding := 0
	for _, n := range v.Nodes {
		if n.LogEndOffset >= hwm {
			holding++
		}
	}
	if holding < 2 {
		t.Errorf("%d of 3 voters restarted with the log up to the high watermark %d they had:\n%s", holding, hwm, describeNodes(p))
	}
	waitCond(t, p, fmt.Sprintf("hwm >= %d", hwm))
	p.Close()

	// A folder of another cluster is refused with a clear error.
	meta := filepath.Join(dir, "node-2", "meta.properties")
	if err := os.WriteFile(meta, []byte("version=1\ncluster.id=someOtherCluster000000\nnode.id=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := cluster.NewConfig(3, 0, cluster.ProfileFast, nil, dir)
	if _, err := engine.Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "mixes clusters") {
		t.Errorf("open a folder of two clusters: %v", err)
	}
}

func TestRealEngineTempDirRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := openReal(t, 1, 0, "")
	v := waitCond(t, p, "leader")
	if v.LeaderID != 1 {
		t.Fatalf("single controller: leader %d", v.LeaderID)
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "kraftlab-*", "node-1", "__cluster_metadata-0"))
	if len(dirs) != 1 {
		t.Fatalf("data folders under TMPDIR: %v", dirs)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary data folder left behind: %v", left)
	}
}

// A node whose start is refused shows as failed with the reason, not as
// killed; its reason is said once, without a repeated prefix.
func TestRefusedStartShowsAsFailed(t *testing.T) {
	dir := t.TempDir()
	p := openReal(t, 3, 0, dir)
	waitCond(t, p, "caught-up")
	act(t, p, "kill 2")
	state := filepath.Join(dir, "node-2", "__cluster_metadata-0", "quorum-state")
	if err := os.WriteFile(state, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActStart, Node: mustRef(t, "2")})
	if err == nil {
		t.Fatal("start with a broken quorum-state file succeeded")
	}
	if strings.Count(err.Error(), "node 2") != 1 {
		t.Errorf("error repeats its prefix: %v", err)
	}
	v := p.View()
	n := v.Nodes[1]
	if n.State != view.StateFailed || !strings.Contains(n.Error, "quorum-state") {
		t.Errorf("node 2 after the refused start: state %s, error %q", n.State, n.Error)
	}
	waitCond(t, p, "node 2 state failed")
}

// A wiped follower loses its log and quorum state, starts empty from a
// freshly formatted folder and fetches everything back from the leader;
// in a dynamic quorum the new folder's directory id makes it an observer.
func TestWipeRestartsANodeEmptyAndItCatchesUp(t *testing.T) {
	dir := t.TempDir()
	p := openReal(t, 3, 1, dir)
	v := waitCond(t, p, "caught-up")
	setLoad := func(rate int) {
		t.Helper()
		if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: rate}); err != nil {
			t.Fatal(err)
		}
	}
	setLoad(500)
	waitCond(t, p, fmt.Sprintf("hwm >= %d", v.HighWatermark+200))
	follower := int32(1)
	if v.LeaderID == follower {
		follower = 2
	}
	res := act(t, p, fmt.Sprintf("wipe %d", follower))
	if !strings.Contains(res.Message, "lost its log [0, ") || !strings.Contains(res.Message, "new directory id") {
		t.Errorf("wipe said %q", res.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("node-%d", follower), "meta.properties")); err != nil {
		t.Errorf("the wiped folder was not formatted again: %v", err)
	}
	setLoad(0)
	waitCond(t, p, "caught-up")
	waitCond(t, p, fmt.Sprintf("node %d log-end >= %d", follower, v.HighWatermark+200))
	waitCond(t, p, fmt.Sprintf("node %d role Observer", follower))
	// Adding it back while the voter set names its old folder is refused;
	// after the old entry is removed it votes again.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActAddController, Node: mustRef(t, fmt.Sprint(follower))}); err == nil || !strings.Contains(err.Error(), "remove that voter first") {
		t.Errorf("add controller %d before its old entry is removed: %v", follower, err)
	}
	act(t, p, fmt.Sprintf("%s %d", cluster.ActRemoveController, follower))
	waitCond(t, p, "voters == 2")
	act(t, p, fmt.Sprintf("%s %d", cluster.ActAddController, follower))
	waitCond(t, p, "voters == 3")
	waitCond(t, p, fmt.Sprintf("node %d role Follower", follower))
	var wiped bool
	for _, ev := range p.EventStream().Since(0) {
		wiped = wiped || (ev.Kind == cluster.EventWipe && ev.Node == follower)
	}
	if !wiped {
		t.Error("no wipe event")
	}
}

// A stranger's cluster request is refused and shows on the node it tried.
func TestStrangersShowInTheView(t *testing.T) {
	p := openReal(t, 3, 0, "")
	v := waitCond(t, p, "leader")
	leader, _ := v.Node(v.LeaderID)
	c, err := wire.NewClient(wire.ClientConfig{From: 999, To: leader.ID, Addr: leader.Listener})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := kmsg.NewPtrVoteRequest()
	req.Version = 2
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.VoteResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("anonymous Vote: error %d, want CLUSTER_AUTHORIZATION_FAILED", code)
	}
	poll.Until(t, 10*time.Second, "the refusal in the leader's view", func() bool {
		v := p.View()
		n, _ := v.Node(leader.ID)
		return n.Strangers != nil && n.Strangers.Unauthorized["Vote"] == 1
	})
}
