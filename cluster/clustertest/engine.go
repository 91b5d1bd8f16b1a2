// Package clustertest provides a stand-in cluster.Engine for the tests of
// the packages above the engine (the control API, the CLI, scenarios, the
// TUI). It is a small deterministic model of a KRaft quorum with no
// sockets and no goroutines: leaders are chosen instantly (or after a set
// delay) among voters that reach a majority, and the leader's log grows
// with the clock. It imitates the shape of the real engine's views and
// events, not its timing or protocol, and the kraftlab binary never links
// it (a test in cli checks that).
package clustertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Options tune the model.
type Options struct {
	// ElectionDelay is how long the quorum stays leaderless after it loses
	// its leader; 0 elects at once.
	ElectionDelay time.Duration
	// AppendEvery is how often the leader appends a record; 0 means 10ms.
	AppendEvery time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Trace are the messages the model's links traced, oldest first:
	// the model sends none itself.
	Trace []view.TraceMessage
}

// Start returns a cluster.StartFunc for the model with the given options.
func Start(opt Options) cluster.StartFunc {
	return func(ctx context.Context, cfg cluster.Config, events *cluster.Events) (cluster.Engine, error) {
		return New(cfg, events, opt), nil
	}
}

type node struct {
	id              int32
	kind            view.Kind
	state           view.State
	role            view.Role
	epoch           int32
	leader          int32
	voted           int32
	leo, hwm, start int64
	snapshot        *view.SnapshotID
	truncations     int64
	snapshotsLoaded int64
	lastFetch       int64
	diskDelay       time.Duration
}

// Engine is the model. Its methods are safe for concurrent use.
type Engine struct {
	// topicLoads are the topic loads' settings by topic (guarded by mu).
	topicLoads  map[string]view.TopicLoad
	mu          sync.Mutex
	cfg         cluster.Config
	events      *cluster.Events
	opt         Options
	nodes       map[int32]*node
	order       []int32
	links       map[[2]int32]view.LinkFault
	leader      int32
	electAt     time.Time // when a leaderless quorum elects
	lastAppend  time.Time
	closed      bool
	resignedBy  int32 // a resigned leader sits out the next election
	failNextAct error
	load        modelLoad
	topics      []*modelTopic
}

// modelLoad is the background load: the leader's log grows by the rate,
// and the records commit with the rest.
type modelLoad struct {
	view    view.Load
	last    time.Time
	owed    float64
	pending int64 // on the leader's log, not yet committed
}

// New builds the model for cfg with a leader already elected in epoch 1.
func New(cfg cluster.Config, events *cluster.Events, opt Options) *Engine {
	if opt.AppendEvery == 0 {
		opt.AppendEvery = 10 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	e := &Engine{cfg: cfg, events: events, opt: opt, nodes: map[int32]*node{}, links: map[[2]int32]view.LinkFault{}, topicLoads: map[string]view.TopicLoad{}, leader: view.NoLeader, resignedBy: view.NoLeader}
	e.load.view.NodeID = view.NoLeader
	add := func(id int32, kind view.Kind) {
		e.nodes[id] = &node{id: id, kind: kind, state: view.StateRunning, role: view.RoleUnattached, leader: view.NoLeader, voted: -1, lastFetch: -1}
		e.order = append(e.order, id)
	}
	for _, id := range cfg.ControllerIDs() {
		add(id, view.KindController)
	}
	for _, id := range cfg.BrokerIDs() {
		add(id, view.KindBroker)
	}
	now := opt.Now()
	e.lastAppend = now
	e.settle(now)
	return e
}

// FailNextAction makes the next action return err, to test error paths.
func (e *Engine) FailNextAction(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failNextAct = err
}

func (e *Engine) takeFailure() error {
	err := e.failNextAct
	e.failNextAct = nil
	return err
}

func (e *Engine) live(id int32) bool {
	s := e.nodes[id].state
	return s == view.StateRunning
}

// reach reports whether a and b can talk both ways.
func (e *Engine) reach(a, b int32) bool {
	return a == b || (!e.links[[2]int32{a, b}].Down && !e.links[[2]int32{b, a}].Down)
}

func (e *Engine) voters() []int32 { return e.cfg.ControllerIDs() }

func (e *Engine) majority(id int32) bool {
	n := 0
	for _, v := range e.voters() {
		if e.live(v) && e.reach(id, v) {
			n++
		}
	}
	return n > len(e.voters())/2
}

func (e *Engine) publish(kind cluster.EventKind, id, epoch int32, format string, args ...any) {
	e.events.Publish(cluster.Event{Kind: kind, Node: id, Epoch: epoch, Message: fmt.Sprintf(format, args...)})
}

func (e *Engine) setRole(n *node, role view.Role) {
	if n.role != role {
		e.publish(cluster.EventRoleChange, n.id, n.epoch, "%s -> %s", n.role, role)
		n.role = role
	}
}

// settle brings the model up to date with the clock and the faults.
func (e *Engine) settle(now time.Time) {
	loadDue := e.loadDue(now)
	if e.leader != view.NoLeader && (!e.live(e.leader) || !e.majority(e.leader)) {
		e.load.view.Failed += e.load.pending
		e.load.pending = 0
		old := e.nodes[e.leader]
		if e.live(old.id) {
			e.setRole(old, view.RoleResigned) // check-quorum
		}
		e.leader = view.NoLeader
		e.electAt = now.Add(e.opt.ElectionDelay)
	}
	if e.leader == view.NoLeader && !now.Before(e.electAt) {
		e.elect(now)
	}
	if e.leader == view.NoLeader {
		e.load.view.Skipped += loadDue
		e.load.view.NodeID = view.NoLeader
		for _, id := range e.order {
			if n := e.nodes[id]; e.live(id) && n.role != view.RoleResigned {
				if n.kind == view.KindController {
					e.setRole(n, view.RoleProspective)
				} else {
					e.setRole(n, view.RoleUnattached)
				}
			}
		}
		return
	}
	l := e.nodes[e.leader]
	for n := now.Sub(e.lastAppend) / e.opt.AppendEvery; n > 0; n-- {
		l.leo++
	}
	e.lastAppend = now
	l.leo += loadDue
	e.load.pending += loadDue
	if e.load.view.On() {
		e.load.view.NodeID = l.id
	}
	acks := 0
	for _, id := range e.order {
		n := e.nodes[id]
		if id == l.id || !e.live(id) || !e.reach(id, l.id) {
			if id != l.id && e.live(id) && n.kind == view.KindController && n.role != view.RoleResigned {
				e.setRole(n, view.RoleProspective)
			}
			continue
		}
		e.follow(n, l, now)
		if n.kind == view.KindController {
			acks++
		}
	}
	if acks+1 > len(e.voters())/2 {
		l.hwm = l.leo
		e.load.view.Committed += e.load.pending
		e.load.pending = 0
	}
	e.load.view.InFlight = e.load.pending
	for _, id := range e.order {
		if n := e.nodes[id]; id != l.id && e.live(id) && e.reach(id, l.id) {
			n.hwm = min(l.hwm, n.leo)
		}
	}
}

// follow makes n a follower of leader l, truncating or loading a snapshot
// as needed.
func (e *Engine) follow(n, l *node, now time.Time) {
	if n.epoch < l.epoch || n.leader != l.id {
		n.epoch, n.leader = l.epoch, l.id
		if n.leo > l.hwm && n.leo > l.leo {
			n.truncations++
			e.publish(cluster.EventTruncation, n.id, l.epoch, "truncated from %d to %d", n.leo, l.hwm)
			n.leo = l.hwm
		}
	}
	if n.leo < l.start && l.snapshot != nil {
		s := *l.snapshot
		n.snapshot, n.start, n.leo = &s, s.EndOffset, s.EndOffset
		n.snapshotsLoaded++
		e.publish(cluster.EventSnapshotLoaded, n.id, l.epoch, "loaded snapshot %d-%d", s.EndOffset, s.Epoch)
	}
	n.leo = l.leo
	n.lastFetch = now.UnixMilli()
	if n.kind == view.KindController {
		e.setRole(n, view.RoleFollower)
	} else {
		e.setRole(n, view.RoleObserver)
	}
}

func (e *Engine) elect(now time.Time) {
	var best *node
	for _, id := range e.voters() {
		n := e.nodes[id]
		if !e.live(id) || id == e.resignedBy || !e.majority(id) {
			continue
		}
		if best == nil || n.leo > best.leo {
			best = n
		}
	}
	e.resignedBy = view.NoLeader
	if best == nil {
		return
	}
	epoch := int32(0)
	for _, n := range e.nodes {
		epoch = max(epoch, n.epoch)
	}
	best.epoch, best.leader, best.voted = epoch+1, best.id, best.id
	best.leo++ // the LeaderChange control record
	e.leader = best.id
	e.lastAppend = now
	e.setRole(best, view.RoleLeader)
	e.publish(cluster.EventElection, best.id, best.epoch, "elected leader in epoch %d", best.epoch)
}

// loadDue returns the load records due since the last call.
func (e *Engine) loadDue(now time.Time) int64 {
	owed := e.load.owed + now.Sub(e.load.last).Seconds()*float64(e.load.view.RecordsPerSec)
	e.load.last = now
	n := int64(owed)
	e.load.owed = owed - float64(n)
	return n
}

// topicLoadViews lists the topic loads by topic; mu is held.
func (e *Engine) topicLoadViews() []view.TopicLoad {
	out := slices.Collect(maps.Values(e.topicLoads))
	slices.SortFunc(out, func(a, b view.TopicLoad) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}

// SetTopicLoad implements cluster.Engine: the model moves no records, so
// it keeps the settings and counts nothing.
func (e *Engine) SetTopicLoad(_ context.Context, topic string, recordsPerSec, recordBytes int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return err
	}
	if recordsPerSec == 0 {
		delete(e.topicLoads, topic)
		return nil
	}
	running := make([]view.TopicLoad, 0, len(e.topicLoads))
	for _, l := range e.topicLoads {
		running = append(running, l)
	}
	if err := cluster.CheckTopicLoads(running, topic, recordsPerSec, recordBytes); err != nil {
		return cluster.Errorf(cluster.ErrBadAction, "%v", err)
	}
	e.topicLoads[topic] = view.TopicLoad{Topic: topic, RecordsPerSec: recordsPerSec, RecordBytes: recordBytes}
	return nil
}

// SetLoad implements cluster.Engine.
func (e *Engine) SetLoad(_ context.Context, recordsPerSec, recordBytes int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return err
	}
	now := e.opt.Now()
	e.settle(now)
	e.load.view.RecordsPerSec, e.load.view.RecordBytes = recordsPerSec, recordBytes
	e.load.last, e.load.owed = now, 0
	if recordsPerSec == 0 {
		e.load.view.NodeID = view.NoLeader
	}
	return nil
}

// View implements cluster.Engine.
func (e *Engine) View() view.View {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opt.Now()
	if !e.closed {
		e.settle(now)
	}
	v := view.View{ClusterID: "kraftlab-test-cluster", Timestamp: now.UnixMilli(), Load: e.load.view, TopicLoads: e.topicLoadViews()}
	v.Trace = e.Trace(view.MaxViewTrace).Messages
	for _, id := range e.order {
		n := e.nodes[id]
		nv := view.Node{
			ID: id, Kind: n.kind, Listener: fmt.Sprintf("127.0.0.1:%d", 19000+int(id)), State: n.state,
			Epoch: n.epoch, LeaderID: n.leader, VotedID: n.voted,
			LogEndOffset: n.leo, HighWatermark: n.hwm, LogStartOffset: n.start, LatestSnapshot: n.snapshot,
			Truncations: n.truncations, SnapshotsLoaded: n.snapshotsLoaded, FetchDeadlineTimestamp: -1,
			DiskDelayMs: n.diskDelay.Milliseconds(),
			RPC:         map[string]view.RPCStats{"Fetch": {Requests: n.leo, RequestBytes: 100 * n.leo, Responses: n.leo, ResponseBytes: 120 * n.leo}},
		}
		if e.live(id) {
			nv.Role = n.role
		}
		if n.kind == view.KindBroker {
			nv.Broker = e.brokerView(n)
		}
		if n.kind == view.KindController && e.live(id) {
			nv.ControllerMetrics = e.controllerMetrics(id)
		}
		if id == e.leader {
			for _, rid := range e.order {
				if rid == id {
					continue
				}
				r := e.nodes[rid]
				nv.Replicas = append(nv.Replicas, view.Replica{
					NodeID: rid, LogEndOffset: r.leo, LastFetchTimestamp: r.lastFetch, LastCaughtUpTimestamp: r.lastFetch,
					ParkedFetch: e.live(rid) && e.reach(rid, id),
				})
			}
		}
		v.Nodes = append(v.Nodes, nv)
	}
	for _, a := range e.order {
		for _, b := range e.order {
			if a == b {
				continue
			}
			f := e.links[[2]int32{a, b}]
			v.Links = append(v.Links, view.Link{From: a, To: b, Down: f.Down, DelayMs: f.Delay.Milliseconds(), JitterMs: f.Jitter.Milliseconds(), Loss: f.Loss})
		}
	}
	v.Topics = e.topicViews()
	e.fillFetchers(&v)
	return v
}

func (e *Engine) check(id int32) (*node, error) {
	if e.closed {
		return nil, errors.New("engine closed")
	}
	if err := e.takeFailure(); err != nil {
		return nil, err
	}
	n, ok := e.nodes[id]
	if !ok {
		return nil, fmt.Errorf("no node %d", id)
	}
	return n, nil
}

// Kill implements cluster.Engine.
func (e *Engine) Kill(id int32) error { return e.down(id, view.StateKilled) }

// Stop implements cluster.Engine.
func (e *Engine) Stop(_ context.Context, id int32) error { return e.down(id, view.StateStopped) }

func (e *Engine) down(id int32, state view.State) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.check(id)
	if err != nil {
		return err
	}
	if state == view.StateStopped && id == e.leader {
		e.publish(cluster.EventEndQuorumEpoch, id, n.epoch, "sent EndQuorumEpoch")
		e.resignedBy = id
	}
	n.state, n.role = state, ""
	e.settle(e.opt.Now())
	return nil
}

// Start implements cluster.Engine.
func (e *Engine) Start(_ context.Context, id int32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.check(id)
	if err != nil {
		return err
	}
	n.state, n.role, n.leader = view.StateRunning, view.RoleUnattached, view.NoLeader
	e.settle(e.opt.Now())
	return nil
}

// AddController implements cluster.Engine: the fake quorum is static.
func (e *Engine) AddController(context.Context, int32, bool) (int32, string, error) {
	return 0, "", cluster.Errorf(cluster.ErrBadAction, "the fake engine's quorum is static")
}

// RemoveController implements cluster.Engine: the fake quorum is static.
func (e *Engine) RemoveController(context.Context, int32) error {
	return cluster.Errorf(cluster.ErrBadAction, "the fake engine's quorum is static")
}

// UpgradeKRaftVersion implements cluster.Engine: the fake quorum stays
// static.
func (e *Engine) UpgradeKRaftVersion(context.Context) error {
	return cluster.Errorf(cluster.ErrBadAction, "the fake engine's quorum stays static")
}

// Wipe implements cluster.Engine: the node restarts with an empty log.
func (e *Engine) Wipe(_ context.Context, id int32) (cluster.WipeReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.check(id)
	if err != nil {
		return cluster.WipeReport{}, err
	}
	w := cluster.WipeReport{LogStartOffset: n.start, LogEndOffset: n.leo, Epoch: n.epoch, VotedID: n.voted}
	if e.leader == id {
		e.leader, e.electAt = view.NoLeader, e.opt.Now()
	}
	n.leo, n.hwm, n.start, n.snapshot, n.epoch, n.voted = 0, 0, 0, nil, 0, -1
	n.state, n.role, n.leader = view.StateRunning, view.RoleUnattached, view.NoLeader
	e.settle(e.opt.Now())
	return w, nil
}

// Resign implements cluster.Engine.
func (e *Engine) Resign(_ context.Context, id int32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.check(id)
	if err != nil {
		return err
	}
	if id != e.leader {
		return fmt.Errorf("node %d is not the leader", id)
	}
	e.publish(cluster.EventEndQuorumEpoch, id, n.epoch, "sent EndQuorumEpoch")
	e.setRole(n, view.RoleResigned)
	e.resignedBy, e.leader = id, view.NoLeader
	now := e.opt.Now()
	e.electAt = now
	e.settle(now)
	return nil
}

// SetLinks implements cluster.Engine.
func (e *Engine) SetLinks(changes []cluster.LinkChange) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return err
	}
	for _, c := range changes {
		if c.Fault == (view.LinkFault{}) {
			delete(e.links, [2]int32{c.From, c.To})
		} else {
			e.links[[2]int32{c.From, c.To}] = c.Fault
		}
	}
	e.settle(e.opt.Now())
	return nil
}

// SetDiskDelay implements cluster.Engine. The model only reports the
// delay: its nodes write nothing.
func (e *Engine) SetDiskDelay(id int32, delay time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.check(id)
	if err != nil {
		return err
	}
	if err := view.ValidateDiskDelay(delay); err != nil {
		return cluster.Errorf(cluster.ErrBadAction, "%v", err)
	}
	n.diskDelay = delay
	return nil
}

// Snapshot implements cluster.Engine.
func (e *Engine) Snapshot(_ context.Context, id int32) (view.SnapshotID, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.check(id)
	if err != nil {
		return view.SnapshotID{}, err
	}
	s := view.SnapshotID{EndOffset: n.hwm, Epoch: n.epoch}
	n.snapshot, n.start = &s, s.EndOffset
	e.publish(cluster.EventSnapshotTaken, id, n.epoch, "snapshot %d-%d", s.EndOffset, s.Epoch)
	return s, nil
}

// Close implements cluster.Engine.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, n := range e.nodes {
		if n.state == view.StateRunning {
			n.state, n.role = view.StateStopped, ""
		}
	}
	return nil
}
