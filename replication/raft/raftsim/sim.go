// Package raftsim runs the quorum of package raft under a seeded
// simulation: a virtual clock, a simulated network (drops, delays,
// reordering, one-way and full partitions), hard kills that lose unflushed
// records, graceful shutdowns, restarts and snapshots, with the invariants
// of Kafka's RaftEventSimulationTest checked after every event. The same
// seed replays the same run, event for event.
package raftsim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/internal/eventq"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// Options shapes a simulated cluster.
type Options struct {
	Seed      uint64
	Voters    int // 1 to 5
	Observers int // 0 to 3
	// Config is the quorum configuration; NodeID, Voters and ClusterID are
	// filled in. The zero value means TestConfig.
	Config raft.Config
	// Replication is the quorum's replication mode, pull or push; it
	// overrides Config.Replication.
	Replication raft.Replication
	// AppendInterval is how often the leader's counter appends; zero means
	// 50ms, a negative value never.
	AppendInterval time.Duration
	// SnapshotPadding is how many bytes of padding a counter snapshot holds.
	SnapshotPadding int
	// WireCheck encodes and decodes every message with its Kafka version, as
	// the network would.
	WireCheck bool
	// TraceLines keeps the last lines of the event trace for error messages.
	TraceLines int
	// MaxFsync is the longest an fsync takes (uniform from zero); zero
	// means 2ms. A slow disk widens the window in which a crash loses
	// records.
	MaxFsync time.Duration
	// Dynamic makes a dynamic quorum (kraft.version 1): nodes 1 to Voters
	// are all controllers, nodes 1 to InitialVoters are formatted with that
	// voter set (raft.BootstrapVoters; one is Kafka's --standalone), and
	// the others start with empty logs and learn the voters from the log.
	// Config.Voters stays empty and Config.Bootstrap lists every node.
	// Voters then counts every controller, voter or not.
	Dynamic       bool
	InitialVoters int
	// Upgradable gives a static quorum's nodes directory ids and
	// listeners, as a dynamic quorum's have, so that they describe
	// themselves to the leader and the quorum can upgrade to
	// kraft.version 1 (RunUpgrade).
	Upgradable bool
	// TolerateUnsafe counts news a node refused as unsafe (raft.ErrUnsafe)
	// instead of failing the run: kraftlab ignores such news and goes on,
	// where Kafka would stop the node.
	TolerateUnsafe bool

	// The hooks below let a layer above the quorum run under the same
	// clock and network (package metasim does).

	// Listener, if set, makes each node incarnation's state machine in
	// place of the counter, which then hears nothing and is not checked;
	// set AppendInterval negative, as the counter has nothing to append.
	// Snapshot and Validate are the counter's and do not apply.
	Listener func(id int32, incarnation int) raft.Listener
	// AfterStep, if set, runs after every call into a running node (its
	// start, a message, a tick, a flush, Poke) and before what the node
	// sent goes on the network: the layer above acts on what its listener
	// heard, and may append to n.
	AfterStep func(id int32, n *raft.Node)
	// Endpoints are network addresses that are not quorum members (a
	// client): Send reaches them and the network's faults apply to them.
	Endpoints []int32
	// Check, if set, is an invariant of the layer above, checked after
	// every event with the quorum's.
	Check func() error
}

// TestConfig is the quorum configuration of Kafka's RaftEventSimulationTest.
func TestConfig() raft.Config {
	c := raft.DefaultConfig()
	c.ElectionTimeout = 1000 * time.Millisecond
	c.ElectionBackoffMax = 100 * time.Millisecond
	c.FetchTimeout = 3000 * time.Millisecond
	c.RetryBackoff = 50 * time.Millisecond
	c.RequestTimeout = 3000 * time.Millisecond
	c.FetchMaxWait = 100 * time.Millisecond
	c.AppendLinger = 0
	// Push heartbeats as often as the pull followers' fetches return.
	c.HeartbeatInterval = c.FetchMaxWait
	return c
}

// Start is the virtual time at which every simulation begins.
var Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const clusterID = "kraftlab-sim"

// Cluster is a simulated quorum.
type Cluster struct {
	opts   Options
	cfg    raft.Config
	now    time.Time
	rng    *rand.Rand
	events eventq.Queue[func()]
	nodes  []*simNode
	voters []int32
	net    network
	ledger *ledger

	trace      hash.Hash64
	traceLines []string
	events64   [8]byte
	processed  int

	inv invariants
	err error
	// unsafe counts the ErrUnsafe errors tolerated.
	unsafe int
	// target is the voter set a reconfiguration run drives to; while
	// churn, it alternates between the two sets of reconfig, and changes
	// counts the sets reached.
	target   []int32
	reconfig [2][]int32
	churn    bool
	changes  int
}

type simNode struct {
	id          int32
	voter       bool
	node        *raft.Node // nil while down
	log         *raft.MemoryLog
	store       *raft.MemoryQuorumStateStore
	counter     *Counter
	incarnation int
	tickAt      time.Time
	tickGen     uint64
	flushing    bool
	// stopAt is the deadline of a graceful shutdown in progress.
	stopAt time.Time
}

// New builds a cluster with every node running.
func New(opts Options) (*Cluster, error) {
	if opts.Voters < 1 || opts.Voters > 5 || opts.Observers < 0 || opts.Observers > 3 {
		return nil, fmt.Errorf("raftsim: %d voters and %d observers: want 1-5 and 0-3", opts.Voters, opts.Observers)
	}
	cfg := opts.Config
	if cfg.ElectionTimeout == 0 {
		cfg = TestConfig()
	}
	cfg.Replication = opts.Replication
	if opts.MaxFsync == 0 {
		opts.MaxFsync = 2 * time.Millisecond
	}
	if opts.AppendInterval == 0 {
		opts.AppendInterval = 50 * time.Millisecond
	}
	c := &Cluster{
		opts:   opts,
		now:    Start,
		rng:    rand.New(rand.NewPCG(opts.Seed, 0x6b7261667473696d)),
		ledger: newLedger(),
		trace:  fnv.New64a(),
		inv:    newInvariants(),
	}
	for i := 1; i <= opts.Voters; i++ {
		c.voters = append(c.voters, int32(i))
	}
	cfg.Voters = c.voters
	if opts.Dynamic {
		if opts.InitialVoters < 1 || opts.InitialVoters > opts.Voters {
			return nil, fmt.Errorf("raftsim: %d initial voters of %d controllers", opts.InitialVoters, opts.Voters)
		}
		cfg.Voters, cfg.Bootstrap = nil, c.voters
	}
	cfg.ClusterID = clusterID
	c.cfg = cfg
	ids := slices.Clone(c.voters)
	for i := 1; i <= opts.Observers; i++ {
		ids = append(ids, int32(100+i))
	}
	c.net = newNetwork(append(slices.Clone(ids), opts.Endpoints...))
	for _, id := range ids {
		sn := &simNode{id: id, voter: id <= int32(opts.Voters), log: raft.NewMemoryLog(), store: &raft.MemoryQuorumStateStore{}}
		if opts.Dynamic {
			// Membership is the log's: the invariants ask the nodes.
			sn.voter = false
			if id <= int32(opts.InitialVoters) {
				if err := raft.BootstrapVoters(sn.log, c.initialVoters(), c.now); err != nil {
					return nil, err
				}
			}
		}
		c.nodes = append(c.nodes, sn)
	}
	for _, sn := range c.nodes {
		if err := c.start(sn); err != nil {
			return nil, err
		}
	}
	if opts.AppendInterval > 0 {
		c.after(opts.AppendInterval, c.appendTick)
	}
	return c, nil
}

// Now is the virtual time.
func (c *Cluster) Now() time.Time { return c.now }

// Voters returns the voter ids (in a dynamic quorum, every controller's).
func (c *Cluster) Voters() []int32 { return slices.Clone(c.voters) }

// directoryID is a node's directory id: the simulation never wipes a
// dynamic quorum's nodes, so one per node id does.
func directoryID(id int32) raft.DirectoryID {
	return raft.DirectoryID{0: 0xd1, 1: byte(id >> 24), 2: byte(id >> 16), 3: byte(id >> 8), 4: byte(id), 15: 1}
}

// voter is the voter a dynamic quorum's node id stands for.
func voter(id int32) raft.Voter {
	return raft.Voter{ID: id, DirectoryID: directoryID(id), MinVersion: 0, MaxVersion: raft.KRaftVersion1,
		Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: uint16(9000 + id)}}}
}

// listeners are where a dynamic quorum's node listens in an incarnation:
// every other restart moves it to another port, so that it updates its
// entry in the voter set (UpdateRaftVoter). The network goes by node id;
// the listeners only describe.
func listeners(id int32, incarnation int) []raft.Endpoint {
	eps := voter(id).Endpoints
	if incarnation%2 == 0 {
		eps[0].Port += 10000
	}
	return eps
}

func (c *Cluster) initialVoters() raft.VoterSet {
	var s raft.VoterSet
	for id := int32(1); id <= int32(c.opts.InitialVoters); id++ {
		s = append(s, voter(id))
	}
	return s
}

// IDs returns every node id, voters first.
func (c *Cluster) IDs() []int32 {
	out := make([]int32, len(c.nodes))
	for i, sn := range c.nodes {
		out[i] = sn.id
	}
	return out
}

// Unsafe is how many ErrUnsafe errors the run tolerated (TolerateUnsafe).
func (c *Cluster) Unsafe() int { return c.unsafe }

// Events is the number of events processed.
func (c *Cluster) Events() int { return c.processed }

// TraceHash identifies the run's event trace: the same seed gives the same hash.
func (c *Cluster) TraceHash() uint64 { return c.trace.Sum64() }

// Trace returns the last lines of the event trace.
func (c *Cluster) Trace() []string { return slices.Clone(c.traceLines) }

func (c *Cluster) node(id int32) *simNode {
	for _, sn := range c.nodes {
		if sn.id == id {
			return sn
		}
	}
	return nil
}

// Running reports whether the node is up.
func (c *Cluster) Running(id int32) bool { sn := c.node(id); return sn != nil && sn.node != nil }

// Status returns a running node's status.
func (c *Cluster) Status(id int32) (raft.Status, bool) {
	sn := c.node(id)
	if sn == nil || sn.node == nil {
		return raft.Status{}, false
	}
	return sn.node.Status(), true
}

// Leader returns the running leader of the highest epoch.
func (c *Cluster) Leader() (id, epoch int32, ok bool) {
	for _, sn := range c.nodes {
		if sn.node == nil {
			continue
		}
		if st := sn.node.Status(); st.Role == raft.Leader && (!ok || st.Epoch > epoch) {
			id, epoch, ok = sn.id, st.Epoch, true
		}
	}
	return id, epoch, ok
}

// LeaderHighWatermark is the high watermark of the running leader of the
// highest epoch, -1 if none is known.
func (c *Cluster) LeaderHighWatermark() int64 {
	id, _, ok := c.Leader()
	if !ok {
		return -1
	}
	st, _ := c.Status(id)
	return st.HighWatermark
}

func (c *Cluster) record(format string, args ...any) {
	line := fmt.Sprintf("%9.3f "+format, append([]any{c.now.Sub(Start).Seconds()}, args...)...)
	c.trace.Write([]byte(line))
	c.keep(line)
}

// note adds a line to the kept trace only (not to its hash).
func (c *Cluster) note(format string, args ...any) {
	if c.opts.TraceLines > 0 {
		c.keep(fmt.Sprintf("%9.3f "+format, append([]any{c.now.Sub(Start).Seconds()}, args...)...))
	}
}

func (c *Cluster) keep(line string) {
	if c.opts.TraceLines > 0 {
		if len(c.traceLines) >= c.opts.TraceLines {
			c.traceLines = c.traceLines[1:]
		}
		c.traceLines = append(c.traceLines, line)
	}
}

// recordFast adds an event to the trace hash without formatting it.
func (c *Cluster) recordFast(kind byte, node int32, id uint64) {
	b := c.events64[:]
	binary.LittleEndian.PutUint64(b, uint64(c.now.UnixNano()))
	c.trace.Write(b)
	binary.LittleEndian.PutUint64(b, uint64(kind)<<56|uint64(uint32(node))<<24^id)
	c.trace.Write(b)
	if c.opts.TraceLines > 0 {
		c.note("%c node %d #%d", kind, node, id)
	}
}

func (c *Cluster) fail(err error) {
	if c.err == nil {
		c.err = fmt.Errorf("at %v (event %d): %w", c.now.Sub(Start), c.processed, err)
	}
}

// start creates a node's raft.Node from its persisted state.
func (c *Cluster) start(sn *simNode) error {
	cfg := c.cfg
	cfg.NodeID = sn.id
	sn.incarnation++
	if c.opts.Dynamic || c.opts.Upgradable {
		cfg.DirectoryID = directoryID(sn.id)
		cfg.Listeners = listeners(sn.id, sn.incarnation)
	}
	sn.counter = newCounter(sn.id, c.ledger)
	rng := rand.New(rand.NewPCG(c.opts.Seed^uint64(sn.id)<<32, uint64(sn.incarnation)))
	var l raft.Listener = sn.counter
	if c.opts.Listener != nil {
		l = c.opts.Listener(sn.id, sn.incarnation)
	}
	n, err := raft.New(cfg, sn.log, sn.store, l, rng, c.now)
	if err != nil {
		return fmt.Errorf("start node %d: %w", sn.id, err)
	}
	sn.node = n
	sn.flushing = false
	sn.tickAt = time.Time{}
	sn.stopAt = time.Time{}
	c.record("start node %d (incarnation %d)", sn.id, sn.incarnation)
	c.afterNode(sn)
	return nil
}

// afterNode drains what a node produced: its messages go on the network,
// a flush is scheduled if its log needs one, and its next tick is set.
func (c *Cluster) afterNode(sn *simNode) {
	n := sn.node
	if n == nil {
		return
	}
	if sn.counter.err != nil {
		c.fail(sn.counter.err)
	}
	if c.opts.AfterStep != nil {
		c.opts.AfterStep(sn.id, n)
	}
	for _, m := range n.Outbox() {
		c.net.send(c, m)
	}
	if n.NeedsFlush() && !sn.flushing {
		sn.flushing = true
		inc := sn.incarnation
		// A crash before the fsync ends loses the records.
		c.after(time.Duration(c.rng.Int64N(int64(c.opts.MaxFsync))), func() {
			if sn.node == nil || sn.incarnation != inc {
				return
			}
			sn.flushing = false
			if err := sn.log.Flush(); err != nil {
				c.fail(err)
				return
			}
			c.recordFast('F', sn.id, uint64(sn.log.LastFlushedOffset()))
			c.nodeErr(sn, sn.node.Flushed(c.now))
		})
	}
	if d := n.NextDeadline(); !d.IsZero() && (d != sn.tickAt) {
		sn.tickAt = d
		sn.tickGen++
		gen, inc := sn.tickGen, sn.incarnation
		c.at(d, func() {
			if sn.node == nil || sn.incarnation != inc || sn.tickGen != gen {
				return
			}
			sn.tickAt = time.Time{}
			c.recordFast('T', sn.id, 0)
			c.nodeErr(sn, sn.node.Tick(c.now))
		})
	}
}

func (c *Cluster) nodeErr(sn *simNode, err error) {
	if err != nil && c.opts.TolerateUnsafe && errors.Is(err, raft.ErrUnsafe) {
		c.unsafe++
		c.record("node %d refused news: %v", sn.id, err)
		err = nil
	}
	if err != nil {
		c.fail(err)
	}
	c.afterNode(sn)
}

// appendTick makes the leader's counter append 1-3 records.
func (c *Cluster) appendTick() {
	for _, sn := range c.nodes {
		if sn.node == nil || !sn.counter.writable || !sn.stopAt.IsZero() {
			continue
		}
		// Append in the epoch the counter was told it leads: if the node has
		// lost and won again since, the append fails until it hears.
		k := 1 + c.rng.IntN(3)
		if _, err := sn.node.Append(c.now, sn.counter.leader.Epoch, sn.counter.nextRecords(k)); err == nil {
			sn.counter.pending += int64(k)
			c.recordFast('A', sn.id, uint64(k))
		}
		c.afterNode(sn)
	}
	c.after(c.opts.AppendInterval, c.appendTick)
}

// Kill stops a node at once, as a crash: its unflushed records are lost.
func (c *Cluster) Kill(id int32) {
	sn := c.node(id)
	if sn == nil || sn.node == nil {
		return
	}
	c.record("kill node %d", id)
	sn.node = nil
	sn.log.Crash()
}

// KillAndDeletePersistentState kills a node and wipes its folder: an empty
// log, no quorum-state file, no snapshot (Kafka's
// Cluster.killAndDeletePersistentState). Restart brings it back empty.
func (c *Cluster) KillAndDeletePersistentState(id int32) {
	sn := c.node(id)
	if sn == nil {
		return
	}
	c.Kill(id)
	c.record("wipe node %d", id)
	sn.log = raft.NewMemoryLog()
	sn.store = &raft.MemoryQuorumStateStore{}
	c.inv.forget(id)
	if sn.voter {
		c.inv.dataLost = true
	}
}

// CheckStableLeadership adds Kafka's StableLeadership invariant: from the
// first persisted leader on, no node persists another leader or epoch. It
// suits runs whose faults must not move leadership.
func (c *Cluster) CheckStableLeadership() { c.inv.stable = true }

// Restart starts a stopped node again.
func (c *Cluster) Restart(id int32) {
	sn := c.node(id)
	if sn == nil || sn.node != nil {
		return
	}
	if err := c.start(sn); err != nil {
		c.fail(err)
	}
}

// Shutdown stops a node gracefully: a leader hands over first. The node
// stops once its shutdown completes, or after five seconds.
func (c *Cluster) Shutdown(id int32) {
	sn := c.node(id)
	if sn == nil || sn.node == nil || !sn.stopAt.IsZero() {
		return
	}
	c.record("shutdown node %d", id)
	sn.stopAt = c.now.Add(5 * time.Second)
	c.nodeErr(sn, sn.node.Shutdown(c.now))
	c.watchShutdown(sn, sn.incarnation)
}

func (c *Cluster) watchShutdown(sn *simNode, inc int) {
	if sn.node == nil || sn.incarnation != inc {
		return
	}
	if sn.node.ShutdownComplete() || !c.now.Before(sn.stopAt) {
		// A graceful stop flushes the log, so nothing is lost.
		if err := sn.log.Flush(); err != nil {
			c.fail(err)
		}
		c.record("stopped node %d", sn.id)
		sn.node = nil
		return
	}
	c.after(10*time.Millisecond, func() { c.watchShutdown(sn, inc) })
}

// Resign makes a leader step down in its epoch without stopping.
func (c *Cluster) Resign(id int32) {
	sn := c.node(id)
	if sn == nil || sn.node == nil {
		return
	}
	st := sn.node.Status()
	if st.Role != raft.Leader {
		return
	}
	c.record("resign node %d", id)
	c.nodeErr(sn, sn.node.Resign(c.now, st.Epoch))
}

// Snapshot makes a node snapshot its counter at the offset it applied, if
// that moves past its log start.
func (c *Cluster) Snapshot(id int32) bool {
	sn := c.node(id)
	if sn == nil || sn.node == nil {
		return false
	}
	st := sn.node.Status()
	end := sn.counter.next
	if end <= st.LogStartOffset || end > st.HighWatermark || end != st.AppliedOffset {
		return false
	}
	c.record("snapshot node %d at %d", id, end)
	err := sn.node.CreateSnapshot(c.now, end, sn.counter.snapshotRecords(c.opts.SnapshotPadding))
	c.nodeErr(sn, err)
	return err == nil
}

// RunFor processes events for d of virtual time, stopping at the first
// violation.
func (c *Cluster) RunFor(d time.Duration) error {
	return c.runUntil(c.now.Add(d), nil)
}

// RunUntil processes events until cond holds (checked after every event) or
// limit passes; it fails if cond never held.
func (c *Cluster) RunUntil(cond func() bool, limit time.Duration) error {
	end := c.now.Add(limit)
	if err := c.runUntil(end, cond); err != nil {
		return err
	}
	if !cond() {
		return fmt.Errorf("condition not reached within %v (at %v)", limit, c.now.Sub(Start))
	}
	return nil
}

func (c *Cluster) runUntil(end time.Time, cond func() bool) error {
	for c.err == nil {
		if cond != nil && cond() {
			return nil
		}
		if at, ok := c.events.Next(); !ok || at.After(end) {
			c.now = end
			return c.err
		}
		at, fn := c.events.Pop()
		c.now = at
		c.processed++
		fn()
		if c.err == nil {
			c.inv.check(c)
		}
		if c.err == nil && c.opts.Check != nil {
			if err := c.opts.Check(); err != nil {
				c.fail(err)
			}
		}
	}
	return c.err
}

// after schedules fn after d; at schedules it at t.
func (c *Cluster) after(d time.Duration, fn func()) { c.at(c.now.Add(d), fn) }

func (c *Cluster) at(t time.Time, fn func()) {
	if t.Before(c.now) {
		t = c.now
	}
	c.events.Push(t, fn)
}
