package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// A recording is a run of a playground as the screen pulled it: the views
// and the events of successive pulls. TestRecord, TestRecordMajorityGone
// and TestRecordReplication write them from a real cluster
// (KRAFTLAB_TUI_RECORD=1 go test -run 'TestRecord' ./tui records them all);
// TestGolden replays them through the screen and compares what it draws
// with testdata/TestGolden/*.golden (go test ./tui -run TestGolden -update
// rewrites those).
type recording struct {
	// Source says what produced the views.
	Source string `json:"source"`
	// Started is when the playground started.
	Started time.Time `json:"started"`
	// Select is the node the screen has selected at the end.
	Select int32           `json:"select"`
	Frames []recordedFrame `json:"frames"`
}

type recordedFrame struct {
	View   view.View       `json:"view"`
	Events []cluster.Event `json:"events"`
}

// goldenScreen is a golden screen: the frames of one recording or more,
// replayed one after the other, the last of them cut to its first frames
// (0: all of them), with the data pane pane in front and, if help, the
// full help (?) open.
type goldenScreen struct {
	name   string
	replay []string
	frames int
	pane   dataPane
	help   bool
}

// goldenScreens are the screens the golden files show: steady state; just
// after a leader kill, the followers still following the dead leader;
// the election; the new leader; a partition of the leader; two of three
// voters killed; an isolated broker fenced. Then the data plane: a topic
// of replication factor 3 a client writes to, every replica caught up;
// broker 103 just killed, its replicas down but still in the ISRs; 103
// fenced and out of every ISR, a new leader for the partition it led;
// 103 started again and back in every ISR; the link between 103 and one
// leader slowed, that thread's partitions behind; that leader killed, 103
// elected with the shorter log and the other follower truncated to it;
// each as partitions and as fetcher threads. Then a consumer group: a
// member that lags; the broker coordinating it killed, no broker serving
// the group; its __consumer_offsets partition's new leader serving it.
// Then the full help (?), and a dynamic quorum (kraft.version 1): grown
// from one voter to three with + (controllers add); a fourth controller
// started as an observer; the first leader removed with -, an observer
// now, and a leader elected among the added voters.
var goldenScreens = []goldenScreen{
	{"steady", []string{"steady"}, 0, paneBrokers, false},
	{"leader-down", []string{"steady", "leader-kill"}, 2, paneBrokers, false},
	{"election", []string{"steady", "leader-kill"}, 4, paneBrokers, false},
	{"leader-kill", []string{"leader-kill"}, 0, paneBrokers, false},
	{"partition", []string{"partition"}, 0, paneBrokers, false},
	{"majority-gone", []string{"majority-gone"}, 0, paneBrokers, false},
	{"broker-fenced", []string{"broker-fenced"}, 0, paneBrokers, false},
	{"replication-partitions", []string{"replication"}, 0, panePartitions, false},
	{"replication-fetchers", []string{"replication"}, 0, paneFetchers, false},
	{"replica-killed-partitions", []string{"replication", "replica-down"}, 2, panePartitions, false},
	{"replica-out-partitions", []string{"replication", "replica-down"}, 0, panePartitions, false},
	{"replica-out-fetchers", []string{"replication", "replica-down"}, 0, paneFetchers, false},
	{"replica-rejoin-partitions", []string{"replication", "replica-down", "replica-rejoin"}, 0, panePartitions, false},
	{"replica-rejoin-fetchers", []string{"replication", "replica-down", "replica-rejoin"}, 0, paneFetchers, false},
	{"replica-slow-partitions", []string{"replication", "replica-down", "replica-rejoin", "replica-slow"}, 0, panePartitions, false},
	{"replica-slow-fetchers", []string{"replication", "replica-down", "replica-rejoin", "replica-slow"}, 0, paneFetchers, false},
	{"replica-truncate-partitions", []string{"replica-slow", "replica-truncate"}, 0, panePartitions, false},
	{"replica-truncate-fetchers", []string{"replica-slow", "replica-truncate"}, 0, paneFetchers, false},
	{"zk-steady", []string{"zk"}, 3, paneBrokers, false},
	{"zk-failover", []string{"zk"}, 0, panePartitions, false},
	{"attached-steady", []string{"attached"}, 2, paneBrokers, false},
	{"attached-partitions", []string{"attached"}, 2, panePartitions, false},
	{"attached-failover", []string{"attached"}, 0, paneBrokers, false},
	{"groups", []string{"groups"}, 0, paneGroups, false},
	{"groups-coordinator-down", []string{"groups", "groups-moved"}, 3, paneGroups, false},
	{"groups-coordinator-moved", []string{"groups", "groups-moved"}, 0, paneGroups, false},
	{"help", []string{"steady"}, 0, paneBrokers, true},
	{"voters-grown", []string{"voters-grown"}, 0, paneBrokers, false},
	{"voters-observer", []string{"voters-grown", "voters-observer"}, 0, paneBrokers, false},
	{"voters-shrunk", []string{"voters-observer", "voters-shrunk"}, 0, paneBrokers, false},
}

func recordingPath(name string) string { return filepath.Join("testdata", name+".json") }

func loadRecording(t *testing.T, name string) recording {
	t.Helper()
	b, err := os.ReadFile(recordingPath(name))
	if err != nil {
		t.Fatalf("read recording: %v (make it with: KRAFTLAB_TUI_RECORD=1 go test -run TestRecord ./tui)", err)
	}
	var r recording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("decode %s: %v", recordingPath(name), err)
	}
	if len(r.Frames) == 0 {
		t.Fatalf("%s has no frames", recordingPath(name))
	}
	return r
}

// replay feeds a recording to a screen of size w×h, as its pulls would.
func replay(r recording, w, h int) *Model {
	m := New(context.Background(), nil, Options{Started: r.Started, ReadOnly: r.Frames[0].View.Attached != nil})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, f := range r.Frames {
		m.pollSeq++
		m.Update(snapshotMsg{seq: m.pollSeq, view: f.View, events: f.Events})
	}
	m.quorum.selected = r.Select
	return m
}

func TestGolden(t *testing.T) {
	for _, g := range goldenScreens {
		var r recording
		for i, name := range g.replay {
			part := loadRecording(t, name)
			if i == len(g.replay)-1 && g.frames > 0 {
				part.Frames = part.Frames[:g.frames]
			}
			r.Source, r.Started, r.Select = part.Source, part.Started, part.Select
			r.Frames = append(r.Frames, part.Frames...)
		}
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s/%dx%d", g.name, size[0], size[1]), func(t *testing.T) {
				m := replay(r, size[0], size[1])
				m.showAll = g.help
				if g.pane != paneBrokers {
					m.pane = g.pane
					if m.tabbed() {
						m.tab = dataTab
					}
				}
				golden.RequireEqual(t, []byte(m.View()+"\n"))
			})
		}
	}
}

// TestRecord records the playground runs the golden screens replay, from
// a real fast-profile cluster. It runs only when asked to, since it
// rewrites testdata: KRAFTLAB_TUI_RECORD=1 go test -run TestRecord ./tui
func TestRecord(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, "testdata/*.json", "the real engine, 3 controllers and 3 brokers, profile fast")
	pg := rec.pg

	// Steady state: a leader, every voter caught up, offsets moving, the
	// brokers unfenced and a topic on all of them.
	rec.until("a leader with every voter caught up and the brokers unfenced", 30*time.Second, func(v *view.View) bool {
		return v.LeaderID != view.NoLeader && v.HighWatermark > 0 && v.MaxFollowerLag == 0 && unfencedBrokers(v) == 3
	})
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	rec.until("the topic on every broker", 30*time.Second, func(v *view.View) bool {
		tp, ok := v.Topic("orders")
		return ok && len(tp.OnBrokers) == 3
	})
	rec.frames(3 * time.Second)
	steady := rec.cut()
	steady.Select = steady.Frames[len(steady.Frames)-1].View.LeaderID
	rec.save("steady", steady)

	// Kill the leader: the followers time out, pre-vote, vote, and a new
	// leader commits again.
	before := rec.last
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()}); err != nil {
		t.Fatal(err)
	}
	rec.until("a new leader that committed", 30*time.Second, func(v *view.View) bool {
		return v.LeaderEpoch > before.LeaderEpoch && v.HighWatermark > before.HighWatermark
	})
	rec.frames(time.Second)
	kill := rec.cut()
	kill.Select = before.LeaderID
	rec.save("leader-kill", kill)

	// Isolate the new leader: check-quorum makes it resign, the others
	// elect a leader among themselves.
	before = rec.last
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(kill.Select)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActIsolate, Node: condition.LeaderRef()}); err != nil {
		t.Fatal(err)
	}
	rec.until("a leader elected without the isolated one", 30*time.Second, func(v *view.View) bool {
		n, _ := v.Node(before.LeaderID)
		return v.LeaderEpoch > before.LeaderEpoch && v.LeaderID != before.LeaderID && n.Role != view.RoleLeader
	})
	rec.frames(time.Second)
	part := rec.cut()
	part.Select = before.LeaderID
	rec.save("partition", part)

	// Isolate a broker: the active controller hears no heartbeat from it,
	// fences it after broker.session.timeout.ms and moves its
	// leaderships.
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActHeal}); err != nil {
		t.Fatal(err)
	}
	rec.until("every broker unfenced again", 30*time.Second, func(v *view.View) bool { return unfencedBrokers(v) == 3 })
	rec.cut()
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActIsolate, Node: condition.NodeID(101)}); err != nil {
		t.Fatal(err)
	}
	rec.until("broker 101 fenced and leading nothing", 30*time.Second, func(v *view.View) bool {
		n, _ := v.Node(101)
		return n.Broker != nil && n.Broker.Fenced && n.Broker.PartitionsLed == 0
	})
	rec.frames(time.Second)
	fenced := rec.cut()
	fenced.Select = 101
	rec.save("broker-fenced", fenced)
}

// unfencedBrokers counts the brokers the committed metadata has unfenced.
func unfencedBrokers(v *view.View) int {
	n := 0
	for _, node := range v.Nodes {
		if b := node.Broker; b != nil && b.Registered && !b.Fenced {
			n++
		}
	}
	return n
}

// TestRecordMajorityGone records a quorum that lost its majority, from a
// real fast-profile cluster: the leader killed, then the next leader
// killed too. KRAFTLAB_TUI_RECORD=1 go test -run TestRecordMajorityGone ./tui
func TestRecordMajorityGone(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, "testdata/majority-gone.json", "the real engine, 3 controllers and 3 brokers, profile fast")
	pg := rec.pg
	rec.until("a leader with every voter caught up", 30*time.Second, func(v *view.View) bool {
		return v.LeaderID != view.NoLeader && v.HighWatermark > 0 && v.MaxFollowerLag == 0
	})
	rec.frames(time.Second)
	rec.cut() // the steady state is steady.json's

	before := rec.last
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()}); err != nil {
		t.Fatal(err)
	}
	rec.until("a new leader that committed", 30*time.Second, func(v *view.View) bool {
		return v.LeaderEpoch > before.LeaderEpoch && v.HighWatermark > before.HighWatermark
	})
	rec.frames(500 * time.Millisecond)
	second := rec.last.LeaderID
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()}); err != nil {
		t.Fatal(err)
	}
	// The last voter times out and tries, again and again, to be elected.
	rec.frames(2 * time.Second)
	gone := rec.cut()
	gone.Select = second
	rec.save("majority-gone", gone)
}

// TestRecordZooKeeper records zk mode: brokers on a real ZooKeeper, a
// topic, the controller broker killed, and its successor's failover.
// KRAFTLAB_TUI_RECORD=1 go test -run TestRecordZooKeeper ./tui
func TestRecordZooKeeper(t *testing.T) {
	if os.Getenv("KRAFTLAB_TUI_RECORD") == "" {
		t.Skip("set KRAFTLAB_TUI_RECORD=1 to record testdata/zk.json from a real zk-mode cluster")
	}
	ctx := context.Background()
	cfg, err := cluster.NewConfigMode(cluster.ModeZK, 0, 3, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	pg, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	rec := &recorder{t: t, pg: pg, started: started, source: "the real engine, zk mode, 3 brokers, profile fast"}
	rec.until("every broker registered with the controller", 30*time.Second, func(v *view.View) bool { return unfencedBrokers(v) == 3 })
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	rec.until("every ISR full", 30*time.Second, func(v *view.View) bool {
		tp, ok := v.Topic("orders")
		if !ok || len(tp.Partitions) != 3 {
			return false
		}
		for _, p := range tp.Partitions {
			if len(p.Isr) != 3 {
				return false
			}
		}
		return true
	})
	rec.frames(500 * time.Millisecond)
	first := rec.last.ZooKeeper.ControllerID
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: mustParseRef(t, "controller")}); err != nil {
		t.Fatal(err)
	}
	rec.until("the next controller done with its failover", 30*time.Second, func(v *view.View) bool {
		z := v.ZooKeeper
		return z.ControllerID != first && z.ControllerID != view.NoLeader && z.LastFailover != nil && z.LastFailover.Epoch == z.ControllerEpoch
	})
	rec.frames(500 * time.Millisecond)
	zk := rec.cut()
	zk.Select = first
	rec.save("zk", zk)
}

func mustParseRef(t *testing.T, s string) condition.NodeRef {
	t.Helper()
	r, err := condition.ParseNodeRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recorder pulls a playground as the screen does, keeping every frame
// since the last cut.
type recorder struct {
	t       *testing.T
	pg      *cluster.Playground
	started time.Time
	source  string
	after   uint64
	pending []recordedFrame
	last    view.View
}

// newRecorder starts a real fast-profile playground of 3 controllers and
// 3 brokers to record what (a testdata file) from, when
// KRAFTLAB_TUI_RECORD asks for it; source says what ran.
func newRecorder(t *testing.T, what, source string) *recorder {
	t.Helper()
	return newRecorderOf(t, what, source, 3, 3, nil)
}

// newRecorderOf is newRecorder with that many controllers and brokers
// and the settings overrides (as up --set takes them).
func newRecorderOf(t *testing.T, what, source string, controllers, brokers int, overrides []string) *recorder {
	t.Helper()
	if os.Getenv("KRAFTLAB_TUI_RECORD") == "" {
		t.Skip("set KRAFTLAB_TUI_RECORD=1 to record " + what + " from a real cluster")
	}
	cfg, err := cluster.NewConfig(controllers, brokers, cluster.ProfileFast, overrides, "")
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	pg, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return &recorder{t: t, pg: pg, started: started, source: source}
}

// pull takes one frame.
func (r *recorder) pull() {
	v := r.pg.View()
	evs := r.pg.EventStream().Since(r.after)
	if n := len(evs); n > 0 {
		r.after = evs[n-1].Seq
	}
	r.pending = append(r.pending, recordedFrame{View: v, Events: evs})
	r.last = v
}

// until pulls every 100ms until cond holds.
func (r *recorder) until(what string, timeout time.Duration, cond func(*view.View) bool) {
	deadline := time.Now().Add(timeout)
	for {
		r.pull()
		if cond(&r.last) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no %s within %v: %+v", what, timeout, r.last)
		}
		time.Sleep(DefaultInterval)
	}
}

// frames pulls every 100ms for d.
func (r *recorder) frames(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		time.Sleep(DefaultInterval)
		r.pull()
	}
}

// cut returns the frames since the last cut, thinned to at most one every
// 200ms before the last two seconds (the rate window), to keep testdata
// small; the events of a dropped frame move to the next kept one.
func (r *recorder) cut() recording {
	var kept []recordedFrame
	var carry []cluster.Event
	lastTS := r.pending[len(r.pending)-1].View.Timestamp
	prev := int64(0)
	for i, f := range r.pending {
		carry = append(carry, f.Events...)
		keep := i == len(r.pending)-1 || f.View.Timestamp >= lastTS-rateWindow.Milliseconds() || f.View.Timestamp-prev >= 200
		if !keep {
			continue
		}
		f.Events, carry = carry, nil
		kept = append(kept, f)
		prev = f.View.Timestamp
	}
	r.pending = nil
	return recording{Source: r.source, Started: r.started, Frames: kept}
}

func (r *recorder) save(name string, rec recording) {
	b, err := json.Marshal(rec)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(recordingPath(name), append(b, '\n'), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.t.Logf("recorded %s: %d frames, %d bytes", recordingPath(name), len(rec.Frames), len(b))
}
