package cluster

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/server"
)

// Operator is a playground as its users operate it: the CLI and scenarios
// through the control API's client, the TUI either way. *Playground
// implements it in process, and control.Client over the control socket.
type Operator interface {
	// Status returns the current view.View.
	Status(ctx context.Context) (view.View, error)
	// Do performs one action.
	Do(ctx context.Context, a Action) (Result, error)
	// Events yields the events after sequence number after; with follow it
	// then waits for new ones until the playground shuts down or ctx ends.
	Events(ctx context.Context, after uint64, follow bool) iter.Seq2[Event, error]
	// Down shuts the playground down.
	Down(ctx context.Context) error
}

// ActionKind names an action.
type ActionKind string

// Actions, named like the CLI subcommands.
const (
	ActKill      ActionKind = "kill"
	ActStart     ActionKind = "start"
	ActStop      ActionKind = "stop"
	ActResign    ActionKind = "resign"
	ActPartition ActionKind = "partition"
	ActIsolate   ActionKind = "isolate"
	ActHeal      ActionKind = "heal"
	ActLink      ActionKind = "link"
	ActSnapshot  ActionKind = "snapshot"
	ActWipe      ActionKind = "wipe"
	ActLoad      ActionKind = "load"
	// ActDisk sets how much longer a node's disk takes for every write
	// and fsync (DelayMs; 0: a normal disk again).
	ActDisk ActionKind = "disk"
	// ActAddController grows a dynamic quorum by a new controller, or by
	// running observer controller Node (kafka-metadata-quorum
	// add-controller); ActRemoveController removes
	// Node from its voters (remove-controller).
	ActAddController    ActionKind = "add-controller"
	ActRemoveController ActionKind = "remove-controller"
	// ActUpgradeKRaftVersion upgrades a static quorum to kraft.version 1
	// (kafka-features upgrade --feature kraft.version=1).
	ActUpgradeKRaftVersion ActionKind = "upgrade-kraft-version"
)

// Action is one thing a user does to the playground.
type Action struct {
	Kind ActionKind `json:"action"`
	// Node is the node acted on; for partition, heal and link, one end.
	Node condition.NodeRef `json:"node,omitzero"`
	// Peer is the other end of partition, heal and link.
	Peer condition.NodeRef `json:"peer,omitzero"`
	// OneWay limits partition and link to the direction Node → Peer.
	OneWay bool `json:"oneway,omitempty"`
	// Delay, Jitter and Loss are link's settings; DelayMs is disk's too.
	DelayMs  int64   `json:"delayMs,omitempty"`
	JitterMs int64   `json:"jitterMs,omitempty"`
	Loss     float64 `json:"loss,omitempty"`
	// RecordsPerSec and RecordBytes are load's settings: the rate (0
	// stops the load) and the size of each record (0 means
	// DefaultLoadRecordBytes).
	RecordsPerSec int `json:"recordsPerSec,omitempty"`
	RecordBytes   int `json:"recordBytes,omitempty"`
	// Topic is the topic of create-topic and delete-topic; for
	// create-topic, Partitions and ReplicationFactor (-1 each: the
	// controller's num.partitions and default.replication.factor).
	Topic             string `json:"topic,omitempty"`
	Partitions        int32  `json:"partitions,omitempty"`
	ReplicationFactor int16  `json:"replicationFactor,omitempty"`
	// Configs are create-topic's topic configs (kafka-topics --config),
	// e.g. min.insync.replicas or unclean.leader.election.enable.
	Configs map[string]string `json:"configs,omitempty"`
	// TopicPartitions are elect-leaders' partitions (TOPIC-P), none for
	// every partition; Unclean asks for unclean elections instead of
	// preferred ones.
	TopicPartitions []string `json:"topicPartitions,omitempty"`
	Unclean         bool     `json:"unclean,omitempty"`
	// Reassign is what a reassign action of TopicPartitions does; to
	// move them, Replicas are the target replicas and Throttle, if
	// positive, the replication throttle in bytes a second.
	Reassign ReassignMode `json:"reassign,omitempty"`
	Replicas []int32      `json:"replicas,omitempty"`
	Throttle int64        `json:"throttle,omitempty"`
	// StartedBy says where a load action came from, for the views; ""
	// when unknown.
	StartedBy view.Origin `json:"startedBy,omitempty"`
	// Clock is what clock does; Slow is slow's factor and AdvanceMs
	// advance's duration.
	Clock     ClockOp `json:"clock,omitempty"`
	Slow      int     `json:"slow,omitempty"`
	AdvanceMs int64   `json:"advanceMs,omitempty"`
	// API, Direction and MessageID pick the held messages of messages,
	// step and drop (Node is the sender, Peer the receiver); All steps
	// every one.
	API       string                `json:"api,omitempty"`
	Direction view.MessageDirection `json:"direction,omitempty"`
	MessageID uint64                `json:"messageId,omitempty"`
	All       bool                  `json:"all,omitempty"`
	// Until makes step deliver the matching held messages one at a time,
	// oldest first, until this condition (as wait takes it) holds.
	Until string `json:"until,omitempty"`
	// Step and Branch are where rewind goes: the step of the branch (0:
	// the current one); with By instead, that many steps from where the
	// run stands on its branch (negative: back), as the screen's keys
	// step, without reading a view that may be a poll old.
	Step   int `json:"step,omitempty"`
	Branch int `json:"branch,omitempty"`
	By     int `json:"by,omitempty"`
	// Observer makes add-controller only start the new controller, as an
	// observer, and leave adding it to the voters to
	// kafka-metadata-quorum add-controller.
	Observer bool `json:"observer,omitempty"`
}

// String spells the action as the CLI line that performs it.
func (a Action) String() string {
	if s, ok := a.topicString(); ok {
		return s
	}
	if a.Kind == ActReassign {
		return a.reassignString()
	}
	if a.Kind == ActMessages || a.Kind == ActStep || a.Kind == ActDrop {
		return a.messageString()
	}
	switch a.Kind {
	case ActAddController:
		s := "controllers add"
		if !a.Node.IsZero() {
			s += " " + a.Node.String()
		}
		if a.Observer {
			s += " --observer"
		}
		return s
	case ActRemoveController:
		return "controllers remove " + a.Node.String()
	case ActUpgradeKRaftVersion:
		return "controllers upgrade"
	case ActRun:
		return fmt.Sprintf("wait %s --timeout %v", a.Until, ms(a.AdvanceMs))
	case ActRewind:
		if a.By != 0 {
			return fmt.Sprintf("rewind --by %d", a.By)
		}
		if a.Branch > 0 {
			return fmt.Sprintf("rewind %d --branch %d", a.Step, a.Branch)
		}
		return fmt.Sprintf("rewind %d", a.Step)
	case ActHistory:
		return "history --log"
	}
	s := string(a.Kind)
	for _, r := range []condition.NodeRef{a.Node, a.Peer} {
		if !r.IsZero() {
			s += " " + r.String()
		}
	}
	if a.OneWay {
		s += " --oneway"
	}
	switch {
	case a.Kind == ActLink:
		s += fmt.Sprintf(" --delay %v --jitter %v --loss %g%%", ms(a.DelayMs), ms(a.JitterMs), a.Loss*100)
	case a.Kind == ActDisk:
		s += fmt.Sprintf(" --delay %v", ms(a.DelayMs))
	case a.Kind == ActLoad && a.RecordsPerSec == 0:
		s += " stop"
	case a.Kind == ActLoad:
		s += fmt.Sprintf(" %d --size %d", a.RecordsPerSec, a.loadBytes())
	case a.Kind == ActClock:
		s += a.clockString()
	}
	if a.Kind == ActLoad && a.Topic != "" {
		s += " --topic " + a.Topic
	}
	return s
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// loadBytes is the load's record size, its default if unset.
func (a Action) loadBytes() int {
	if a.RecordBytes == 0 {
		return DefaultLoadRecordBytes
	}
	return a.RecordBytes
}

// Result says what an action did.
type Result struct {
	Action ActionKind `json:"action,omitempty"`
	// Nodes are the node IDs the action resolved to.
	Nodes    []int32          `json:"nodes,omitempty"`
	Message  string           `json:"message"`
	Snapshot *view.SnapshotID `json:"snapshot,omitempty"`
	// Messages are the held messages messages listed, step delivered or
	// drop lost.
	Messages []view.Message `json:"messages,omitempty"`
	// Held says whether run's condition held, and RanMs how much
	// simulated time it ran.
	Held  bool  `json:"held,omitempty"`
	RanMs int64 `json:"ranMs,omitempty"`
	// Log is history's event log.
	Log []Event `json:"log,omitempty"`
}

// More errors an action can wrap.
var (
	// ErrNodeState: the node is not in a state the action applies to.
	ErrNodeState = errors.New("wrong node state")
	// ErrBadAction: the action's arguments are invalid.
	ErrBadAction = errors.New("bad action")
	// ErrClosed: the playground is shut down.
	ErrClosed = errors.New("the playground is shut down")
	// ErrRefused: the cluster refused the request, with Kafka's error
	// (a topic that exists, too few brokers for a replication factor…).
	ErrRefused = errors.New("refused by the cluster")
	// ErrNoHeldMessage: step or drop found no held message that matches;
	// it is an ErrNodeState.
	ErrNoHeldMessage = Errorf(ErrNodeState, "no held message matches")
)

// kindError carries a message and matches its kind with errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// Errorf returns an error of kind (one of the Err values above) whose
// message is the formatted text alone: errors.Is matches the kind, and a
// user reads only the text.
func Errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Playground is a running Engine with what users need around it: node
// references resolved against the current view, actions checked and
// serialised, the baseline recorded, and every action on the event stream.
type Playground struct {
	cfg    Config
	engine Engine
	events *Events

	act sync.Mutex // one action at a time
	// timeAct serialises the time actions instead: while the cluster
	// clock is paused, an action that waits for the cluster's answer (a
	// topic creation forwarded to the controller) holds act until its
	// messages are stepped or the clock resumes, so those must not wait
	// for act.
	timeAct  sync.Mutex
	baseline atomic.Pointer[view.Baseline]
	closed   atomic.Bool
	now      func() time.Time
	// settings are cfg.Settings by key, as views show them.
	settings map[string]string
	// loadBy says who started each running load.
	loadBy loadOrigins
}

// OpenWith starts a playground with the engine start returns.
func OpenWith(ctx context.Context, cfg Config, start StartFunc) (*Playground, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	events := NewEvents(DefaultEventCapacity)
	e, err := start(ctx, cfg, events)
	if err != nil {
		events.Close()
		return nil, fmt.Errorf("start playground: %w", err)
	}
	p := &Playground{cfg: cfg, engine: e, events: events, now: time.Now, settings: settingsByKey(cfg.Settings)}
	if s, ok := e.(Simulator); ok {
		// Every time a simulated playground shows is simulated time.
		p.now = s.Now
		events.SetClock(s.Now)
	}
	return p, nil
}

// settingsByKey spells every setting as --set takes it.
func settingsByKey(s server.Settings) map[string]string {
	out := make(map[string]string)
	for _, k := range SettingKeys() {
		if v, err := s.Get(k.Key); err == nil {
			out[k.Key] = v
		}
	}
	return out
}

// Config returns the configuration the playground started with.
func (p *Playground) Config() Config { return p.cfg }

// EventStream returns the playground's event stream.
func (p *Playground) EventStream() *Events { return p.events }

// View returns the current, derived view.
func (p *Playground) View() view.View {
	v := p.engine.View()
	v.Profile = string(p.cfg.Profile)
	v.DataDir = p.cfg.DataDir
	v.Settings = maps.Clone(p.settings)
	v.Derive(p.now(), p.baseline.Load())
	p.loadBy.fill(&v)
	return v
}

// Status implements Operator.
func (p *Playground) Status(context.Context) (view.View, error) {
	if p.closed.Load() {
		return view.View{}, ErrClosed
	}
	return p.View(), nil
}

// Events implements Operator.
func (p *Playground) Events(ctx context.Context, after uint64, follow bool) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if !follow {
			for _, ev := range p.events.Since(after) {
				if !yield(ev, nil) {
					return
				}
			}
			return
		}
		sub := p.events.Subscribe(after)
		for {
			ev, err := sub.Next(ctx)
			if errors.Is(err, ErrEventsClosed) {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Down implements Operator: it closes the playground.
func (p *Playground) Down(context.Context) error { return p.Close() }

// Close stops the engine and ends the event stream. It is safe to call
// more than once.
func (p *Playground) Close() error {
	p.act.Lock()
	defer p.act.Unlock()
	if p.closed.Swap(true) {
		return nil
	}
	p.events.Publish(Event{Kind: EventDown, Message: "the playground is shutting down"})
	err := p.engine.Close()
	p.events.Close()
	if err != nil {
		return fmt.Errorf("close engine: %w", err)
	}
	return nil
}

// Do performs an action: it resolves its node references against the
// current view, checks that it applies, records the baseline for kill,
// stop, isolate and resign, calls the engine and publishes an event.
func (p *Playground) Do(ctx context.Context, a Action) (Result, error) {
	lock := &p.act
	if a.Kind.controlsTime() {
		lock = &p.timeAct
	}
	lock.Lock()
	defer lock.Unlock()
	if p.closed.Load() {
		return Result{}, ErrClosed
	}
	res, err := p.do(ctx, a)
	if s, ok := p.engine.(Simulator); ok {
		line := ""
		if err == nil {
			line = replayLine(a, res)
		}
		s.NameStep(line)
		s.KeepBaseline(p.baseline.Load())
	}
	if err != nil {
		p.events.Publish(Event{Kind: EventActionError, Message: fmt.Sprintf("%s: %v", a, err)})
		return Result{}, err
	}
	res.Action = a.Kind
	return res, nil
}

func (p *Playground) do(ctx context.Context, a Action) (Result, error) {
	v := p.View()
	switch a.Kind {
	case ActKill, ActStart, ActStop, ActIsolate, ActSnapshot, ActWipe:
		if !a.Peer.IsZero() || a.OneWay {
			return Result{}, Errorf(ErrBadAction, "%s takes one node", a.Kind)
		}
		if a.Node.IsZooKeeper() {
			return p.doZooKeeper(ctx, &v, a.Kind)
		}
		id, err := a.Node.Resolve(&v)
		if err != nil {
			return Result{}, err
		}
		return p.doNode(ctx, &v, a.Kind, id)
	case ActResign:
		if !a.Node.IsZero() && !a.Node.IsLeader() {
			return Result{}, Errorf(ErrBadAction, "resign acts on the leader only")
		}
		id, err := condition.LeaderRef().Resolve(&v)
		if err != nil {
			return Result{}, err
		}
		epoch := v.LeaderEpoch
		restore := p.recordBaseline(&v, string(ActResign), id)
		if err := p.engine.Resign(ctx, id); err != nil {
			restore()
			return Result{}, fmt.Errorf("resign node %d: %w", id, err)
		}
		msg := fmt.Sprintf("node %d resigned the leadership of epoch %d", id, epoch)
		p.publish(EventResign, id, msg)
		return Result{Nodes: []int32{id}, Message: msg}, nil
	case ActPartition, ActHeal, ActLink:
		return p.doLink(&v, a)
	case ActLoad:
		return p.doLoad(ctx, &v, a)
	case ActDisk:
		return p.doDisk(&v, a)
	case ActAddController, ActRemoveController:
		return p.doVoters(ctx, &v, a)
	case ActUpgradeKRaftVersion:
		return p.upgradeKRaftVersion(ctx)
	case ActCreateTopic, ActDeleteTopic:
		return p.doTopic(ctx, a)
	case ActElectLeaders:
		return p.doElect(ctx, a)
	case ActReassign:
		return p.doReassign(ctx, &v, a)
	case ActClock:
		if s, ok := p.engine.(Simulator); ok {
			return p.doSimClock(s, a)
		}
		return p.doClock(a)
	case ActRun:
		return p.doRun(a)
	case ActRewind:
		return p.doRewind(a)
	case ActHistory:
		return p.doHistory()
	case ActMark:
		return p.doMark(&v, a)
	case ActMessages, ActStep, ActDrop:
		return p.doMessages(&v, a)
	}
	return Result{}, Errorf(ErrBadAction, "unknown action %q", a.Kind)
}

// ZooKeeperEngine is an engine with zk mode's ZooKeeper server, which
// kill, stop and start act on as on a node.
type ZooKeeperEngine interface {
	// ZooKeeperAction kills, stops or starts the ZooKeeper server.
	ZooKeeperAction(ctx context.Context, kind ActionKind) error
	// SetZooKeeperLink cuts (down) or restores broker id's link to
	// ZooKeeper.
	SetZooKeeperLink(id int32, down bool) error
}

// doZooKeeperLink partitions a broker from ZooKeeper, or heals that
// link: partition/heal BROKER zk.
func (p *Playground) doZooKeeperLink(v *view.View, a Action) (Result, error) {
	z, ok := p.engine.(ZooKeeperEngine)
	if !ok || v.ZooKeeper == nil {
		return Result{}, Errorf(ErrBadAction, "no ZooKeeper in this playground: up --mode zk runs one")
	}
	broker := a.Node
	if broker.IsZooKeeper() {
		broker = a.Peer
	}
	if broker.IsZero() || broker.IsZooKeeper() || (a.Kind != ActPartition && a.Kind != ActHeal) || a.OneWay {
		return Result{}, Errorf(ErrBadAction, "between a broker and ZooKeeper only partition BROKER zk and heal BROKER zk work, both ways")
	}
	id, err := broker.Resolve(v)
	if err != nil {
		return Result{}, err
	}
	down := a.Kind == ActPartition
	if err := z.SetZooKeeperLink(id, down); err != nil {
		return Result{}, fmt.Errorf("%s %d zk: %w", a.Kind, id, err)
	}
	res := Result{Nodes: []int32{id}}
	if down {
		res.Message = fmt.Sprintf("cut broker %d off from ZooKeeper: it serves on, but its session expires after zookeeper.session.timeout.ms unless healed first, and with it its registration", id)
		p.publish(EventLinkChange, id, res.Message)
	} else {
		res.Message = fmt.Sprintf("healed broker %d's link to ZooKeeper: it reconnects to its session, or registers again in a new one if that expired", id)
		p.publish(EventHeal, id, res.Message)
	}
	return res, nil
}

// doZooKeeper kills, stops or starts zk mode's ZooKeeper.
func (p *Playground) doZooKeeper(ctx context.Context, v *view.View, kind ActionKind) (Result, error) {
	z, ok := p.engine.(ZooKeeperEngine)
	if !ok || v.ZooKeeper == nil {
		return Result{}, Errorf(ErrBadAction, "no ZooKeeper in this playground: up --mode zk runs one")
	}
	running := v.ZooKeeper.State == view.StateRunning
	switch {
	case kind != ActKill && kind != ActStop && kind != ActStart:
		return Result{}, Errorf(ErrBadAction, "%s does not act on ZooKeeper: kill, stop and start do", kind)
	case kind == ActStart && running:
		return Result{}, Errorf(ErrNodeState, "ZooKeeper is already running")
	case kind != ActStart && !running:
		return Result{}, Errorf(ErrNodeState, "ZooKeeper is %s, not running", v.ZooKeeper.State)
	}
	if err := z.ZooKeeperAction(ctx, kind); err != nil {
		return Result{}, fmt.Errorf("%s ZooKeeper: %w", kind, err)
	}
	var res Result
	switch kind {
	case ActKill:
		res.Message = "killed ZooKeeper: the brokers' sessions wait for it (a session expires only on a running ZooKeeper), and the controller's writes wait with them"
		p.publish(EventKill, 0, res.Message)
	case ActStop:
		res.Message = "stopped ZooKeeper: the brokers' sessions wait for it, and the controller's writes wait with them"
		p.publish(EventStop, 0, res.Message)
	default:
		res.Message = "started ZooKeeper: the brokers reconnect to their sessions, each with a fresh session timeout"
		p.publish(EventStart, 0, res.Message)
	}
	return res, nil
}

func (p *Playground) doNode(ctx context.Context, v *view.View, kind ActionKind, id int32) (Result, error) {
	n, _ := v.Node(id)
	res := Result{Nodes: []int32{id}}
	switch kind {
	case ActKill, ActStop, ActSnapshot:
		if !n.Live() {
			return Result{}, Errorf(ErrNodeState, "node %d is %s, not running", id, n.State)
		}
	case ActStart:
		if n.Live() {
			return Result{}, Errorf(ErrNodeState, "node %d is already running", id)
		}
	}
	switch kind {
	case ActKill:
		who := describeRole(v, n)
		restore := p.recordBaseline(v, string(kind), id)
		if err := p.engine.Kill(id); err != nil {
			restore()
			return Result{}, fmt.Errorf("kill node %d: %w", id, err)
		}
		res.Message = fmt.Sprintf("killed node %d (%s)", id, who)
		p.publish(EventKill, id, res.Message)
	case ActStop:
		who := describeRole(v, n)
		restore := p.recordBaseline(v, string(kind), id)
		if err := p.engine.Stop(ctx, id); err != nil {
			restore()
			return Result{}, fmt.Errorf("stop node %d: %w", id, err)
		}
		res.Message = fmt.Sprintf("stopped node %d gracefully (%s)", id, who)
		p.publish(EventStop, id, res.Message)
	case ActStart:
		if err := p.engine.Start(ctx, id); err != nil {
			return Result{}, fmt.Errorf("start node %d: %w", id, err)
		}
		res.Message = fmt.Sprintf("started node %d", id)
		p.publish(EventStart, id, res.Message)
	case ActWipe:
		who := describeRole(v, n)
		restore := p.recordBaseline(v, string(ActWipe), id)
		w, err := p.engine.Wipe(ctx, id)
		if err != nil {
			restore()
			return Result{}, fmt.Errorf("wipe node %d: %w", id, err)
		}
		lost := fmt.Sprintf("its log [%d, %d) and its quorum state (epoch %d", w.LogStartOffset, w.LogEndOffset, w.Epoch)
		if w.VotedID >= 0 {
			lost += fmt.Sprintf(", its vote for node %d", w.VotedID)
		}
		res.Message = fmt.Sprintf("wiped node %d (%s): it lost %s) and restarted empty", id, who, lost)
		switch {
		case w.Dynamic && w.OldDirectoryID != "":
			res.Message += fmt.Sprintf("; its folder has a new directory id %s, the voter set names %s, so it is an observer now and the quorum counts it nowhere: remove the old entry (controllers remove %d), then add it back once it caught up (controllers add %d)", w.NewDirectoryID, w.OldDirectoryID, id, id)
		case w.Dynamic:
			res.Message += fmt.Sprintf("; its folder has a new directory id %s", w.NewDirectoryID)
		case n.Kind == view.KindController:
			res.Message += "; with static voters nothing tells the others it is not the voter it was, so it may vote again in an epoch it voted in and help elect a leader that lacks committed records (a dynamic quorum's directory ids, KIP-853, guard against this)"
		}
		p.publish(EventWipe, id, res.Message)
	case ActSnapshot:
		sid, err := p.engine.Snapshot(ctx, id)
		if err != nil {
			return Result{}, fmt.Errorf("snapshot node %d: %w", id, err)
		}
		res.Snapshot = &sid
		res.Message = fmt.Sprintf("node %d took a snapshot ending at offset %d (epoch %d); its log now starts there", id, sid.EndOffset, sid.Epoch)
		p.publish(EventSnapshot, id, res.Message)
	case ActIsolate:
		var changes []LinkChange
		for _, peer := range v.Nodes {
			if peer.ID == id {
				continue
			}
			for _, l := range []view.Link{v.Link(id, peer.ID), v.Link(peer.ID, id)} {
				f := l.Fault()
				f.Down = true
				changes = append(changes, LinkChange{From: l.From, To: l.To, Fault: f})
			}
		}
		if len(changes) == 0 {
			return Result{}, Errorf(ErrNodeState, "node %d has no other node to be cut off from", id)
		}
		restore := p.recordBaseline(v, string(kind), id)
		if err := p.engine.SetLinks(changes); err != nil {
			restore()
			return Result{}, fmt.Errorf("isolate node %d: %w", id, err)
		}
		res.Message = fmt.Sprintf("isolated node %d (%s): every link to and from it is down", id, describeRole(v, n))
		p.publish(EventLinkChange, id, res.Message)
	}
	return res, nil
}

func (p *Playground) doLink(v *view.View, a Action) (Result, error) {
	if a.Kind == ActHeal && a.Node.IsZero() && a.Peer.IsZero() {
		var changes []LinkChange
		for _, l := range v.Links {
			if l.Fault() != (view.LinkFault{}) {
				changes = append(changes, LinkChange{From: l.From, To: l.To})
			}
		}
		if err := p.engine.SetLinks(changes); err != nil {
			return Result{}, fmt.Errorf("heal: %w", err)
		}
		msg := fmt.Sprintf("healed every link (%d had faults)", len(changes))
		p.publish(EventHeal, 0, msg)
		return Result{Message: msg}, nil
	}
	if a.Kind == ActHeal && a.Peer.IsZero() && !a.Node.IsZero() {
		return p.healNode(v, a)
	}
	if a.Node.IsZooKeeper() || a.Peer.IsZooKeeper() {
		return p.doZooKeeperLink(v, a)
	}
	if a.Node.IsZero() || a.Peer.IsZero() {
		return Result{}, Errorf(ErrBadAction, "%s needs two nodes", a.Kind)
	}
	from, err := a.Node.Resolve(v)
	if err != nil {
		return Result{}, err
	}
	to, err := a.Peer.Resolve(v)
	if err != nil {
		return Result{}, err
	}
	if from == to {
		return Result{}, Errorf(ErrBadAction, "%s needs two different nodes, got %d twice", a.Kind, from)
	}
	if a.OneWay && a.Kind == ActHeal {
		return Result{}, Errorf(ErrBadAction, "heal restores both directions; it has no --oneway")
	}
	fault := view.LinkFault{Delay: ms(a.DelayMs), Jitter: ms(a.JitterMs), Loss: a.Loss}
	if a.Kind == ActLink {
		if err := fault.Validate(); err != nil {
			return Result{}, Errorf(ErrBadAction, "link: %v", err)
		}
	}
	links := []view.Link{v.Link(from, to)}
	if !a.OneWay {
		links = append(links, v.Link(to, from))
	}
	changes := make([]LinkChange, len(links))
	for i, l := range links {
		f := l.Fault()
		switch a.Kind {
		case ActPartition:
			f.Down = true
		case ActHeal:
			f = view.LinkFault{}
		case ActLink:
			f.Delay, f.Jitter, f.Loss = fault.Delay, fault.Jitter, fault.Loss
		}
		changes[i] = LinkChange{From: l.From, To: l.To, Fault: f}
	}
	if err := p.engine.SetLinks(changes); err != nil {
		return Result{}, fmt.Errorf("%s %d %d: %w", a.Kind, from, to, err)
	}
	arrow := "<->"
	if a.OneWay {
		arrow = "->"
	}
	res := Result{Nodes: []int32{from, to}}
	kind := EventLinkChange
	switch a.Kind {
	case ActPartition:
		res.Message = fmt.Sprintf("partitioned %d %s %d", from, arrow, to)
		if a.OneWay {
			res.Message += fmt.Sprintf(" (one way: what %d sends %d is dropped)", from, to)
		}
	case ActHeal:
		kind = EventHeal
		res.Message = fmt.Sprintf("healed %d %s %d", from, arrow, to)
	case ActLink:
		res.Message = fmt.Sprintf("link %d %s %d: delay %v + up to %v jitter, loss %g%%", from, arrow, to, fault.Delay, fault.Jitter, fault.Loss*100)
	}
	p.publish(kind, from, res.Message)
	return res, nil
}

// healNode removes every fault from the links to and from one node: what
// isolate did, and every partition, delay and loss that names it.
func (p *Playground) healNode(v *view.View, a Action) (Result, error) {
	if a.OneWay {
		return Result{}, Errorf(ErrBadAction, "heal restores both directions; it has no --oneway")
	}
	id, err := a.Node.Resolve(v)
	if err != nil {
		return Result{}, err
	}
	var changes []LinkChange
	for _, l := range v.Links {
		if (l.From == id || l.To == id) && l.Fault() != (view.LinkFault{}) {
			changes = append(changes, LinkChange{From: l.From, To: l.To})
		}
	}
	if err := p.engine.SetLinks(changes); err != nil {
		return Result{}, fmt.Errorf("heal %d: %w", id, err)
	}
	msg := fmt.Sprintf("healed every link of node %d (%d had faults)", id, len(changes))
	p.publish(EventHeal, id, msg)
	return Result{Nodes: []int32{id}, Message: msg}, nil
}

// doLoad starts, changes or stops the background load.
func (p *Playground) doLoad(ctx context.Context, v *view.View, a Action) (Result, error) {
	if !a.Node.IsZero() || !a.Peer.IsZero() || a.OneWay {
		return Result{}, Errorf(ErrBadAction, "load takes no node: it follows the leader")
	}
	if !a.StartedBy.Valid() {
		return Result{}, Errorf(ErrBadAction, "load: unknown origin %q", a.StartedBy)
	}
	size := a.loadBytes()
	if err := ValidateLoad(a.RecordsPerSec, size); err != nil {
		return Result{}, Errorf(ErrBadAction, "%v", err)
	}
	if a.Topic != "" {
		return p.doTopicLoad(ctx, v, a, size)
	}
	was := v.Load
	if err := p.engine.SetLoad(ctx, a.RecordsPerSec, size); err != nil {
		return Result{}, fmt.Errorf("load: %w", err)
	}
	p.loadBy.set("", a.RecordsPerSec, a.StartedBy)
	var msg string
	switch {
	case a.RecordsPerSec == 0 && !was.On():
		msg = fmt.Sprintf("load is already off (%d records committed so far)", was.Committed)
	case a.RecordsPerSec == 0:
		msg = fmt.Sprintf("load stopped (%d records committed so far)", was.Committed)
	case !was.On():
		msg = fmt.Sprintf("load started: %s, appended on the leader", view.LoadRate(a.RecordsPerSec, size))
	default:
		msg = fmt.Sprintf("load changed: %s (was %s)", view.LoadRate(a.RecordsPerSec, size), view.LoadRate(was.RecordsPerSec, was.RecordBytes))
	}
	p.publish(EventLoad, 0, msg+byWhom(a.StartedBy))
	return Result{Message: msg}, nil
}

// doTopicLoad starts, changes or stops the load of one topic; the other
// topics' loads run on.
func (p *Playground) doTopicLoad(ctx context.Context, v *view.View, a Action, size int) (Result, error) {
	was, _ := v.TopicLoad(a.Topic)
	if err := p.engine.SetTopicLoad(ctx, a.Topic, a.RecordsPerSec, size); err != nil {
		return Result{}, fmt.Errorf("load --topic %s: %w", a.Topic, err)
	}
	p.loadBy.set(a.Topic, a.RecordsPerSec, a.StartedBy)
	var msg string
	switch {
	case a.RecordsPerSec == 0 && !was.On():
		msg = fmt.Sprintf("topic load of %s is already off", a.Topic)
	case a.RecordsPerSec == 0:
		msg = fmt.Sprintf("topic load of %s stopped (%d records acknowledged by its leaders)", a.Topic, was.Acked)
	case !was.On():
		msg = fmt.Sprintf("topic load started: %s, produced to topic %s through the brokers (acks=all, idempotent)", view.LoadRate(a.RecordsPerSec, size), a.Topic)
	default:
		msg = fmt.Sprintf("topic load of %s changed: %s (was %s)", a.Topic, view.LoadRate(a.RecordsPerSec, size), view.LoadRate(was.RecordsPerSec, was.RecordBytes))
	}
	p.publish(EventLoad, 0, msg+byWhom(a.StartedBy))
	return Result{Message: msg}, nil
}

// byWhom says in the event log who asked for a load change.
func byWhom(o view.Origin) string {
	if o == "" {
		return ""
	}
	return " (from " + o.Words() + ")"
}

// recordBaseline stores the baseline for an action about to run and
// returns a function that puts the previous one back if the action fails.
func (p *Playground) recordBaseline(v *view.View, action string, id int32) (restore func()) {
	b := &view.Baseline{
		Action:        action,
		NodeID:        id,
		LeaderID:      v.LeaderID,
		LeaderEpoch:   lastLeaderEpoch(v),
		HighWatermark: v.HighWatermark,
		Timestamp:     v.Timestamp,
	}
	prev := p.baseline.Swap(b)
	return func() { p.baseline.Store(prev) }
}

// lastLeaderEpoch is the highest epoch in which any node knew a leader: the
// epoch a new leader must exceed.
func lastLeaderEpoch(v *view.View) int32 {
	e := v.LeaderEpoch
	for _, n := range v.Nodes {
		if n.LeaderID != view.NoLeader && n.Epoch > e {
			e = n.Epoch
		}
	}
	return e
}

func describeRole(v *view.View, n *view.Node) string {
	switch {
	case v.ZooKeeper != nil && n.Role == view.RoleZkController:
		return fmt.Sprintf("the controller, holding /controller at controller epoch %d", v.ZooKeeper.ControllerEpoch)
	case v.ZooKeeper != nil && n.Role != "":
		return "a broker"
	case n.ID == v.LeaderID:
		return fmt.Sprintf("the leader of epoch %d", n.Epoch)
	case n.Role == "":
		return string(n.State)
	}
	return fmt.Sprintf("%s in epoch %d", n.Role, n.Epoch)
}

func (p *Playground) publish(kind EventKind, node int32, msg string) {
	p.events.Publish(Event{Kind: kind, Node: node, Message: msg})
}

// Compile-time check.
var _ Operator = (*Playground)(nil)
