package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/internal/zookeeper"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage"
)

// engine is the real cluster: one server per controller (a voter of the
// metadata quorum) and per broker (an observer of it, with its partitions
// and replica fetchers), each on its own listener on 127.0.0.1 and in its
// own folder under the data directory, all talking through one set of
// wire.Links.
type engine struct {
	cfg       cluster.Config
	events    *cluster.Events
	dir       string
	removeDir bool // the folder is a temporary one of ours
	clusterID string
	links     *wire.Links
	counters  *wire.Counters
	// clock is the playground's cluster clock: every node's timers read
	// it, and the links hold every message while it is paused.
	clock *clock.Clock
	group *server.Group
	// zk is the ZooKeeper of the ZooKeeper-era mode, nil in KRaft mode;
	// zkKilled says its last stop was a kill.
	zk       *zookeeper.Server
	zkKilled atomic.Bool
	zkLinks  *zkLinks
	// zkSample is ZooKeeper's last mntr, taken once a second until
	// zkStop closes.
	zkSample atomic.Pointer[zkSample]
	zkStop   chan struct{}
	zkWG     sync.WaitGroup
	// members are the nodes, replaced whole when a controller joins so
	// that views read them without a lock.
	members atomic.Pointer[members]
	// joinMu serialises controllers joining and leaving.
	joinMu sync.Mutex

	load *loadGen
	// ballots are the votes of the latest epochs, for telling lost
	// elections.
	ballots ballots

	topicLoadMu sync.Mutex            // guards topicLoads
	topicLoads  map[string]*topicLoad // by topic; a stopped one is removed

	closeOnce sync.Once
	closeErr  error
}

// Open starts a playground on the real engine, or with cfg.Sim under the
// seeded simulator (OpenSim).
func Open(ctx context.Context, cfg cluster.Config) (*cluster.Playground, error) {
	if cfg.Sim {
		return OpenSim(ctx, cfg)
	}
	return cluster.OpenWith(ctx, cfg, Start)
}

// Start builds and starts the engine for cfg (a cluster.StartFunc): every
// node starts and listens before it returns; electing a leader is the
// quorum's business.
func Start(ctx context.Context, cfg cluster.Config, events *cluster.Events) (cluster.Engine, error) {
	e := &engine{
		cfg:        cfg,
		events:     events,
		links:      wire.NewLinks(uint64(time.Now().UnixNano())),
		counters:   wire.NewCounters(),
		group:      server.NewGroup(),
		topicLoads: make(map[string]*topicLoad),
	}
	e.clock = e.group.Clock()
	if err := e.makeDir(); err != nil {
		return nil, err
	}
	ids := append(cfg.ControllerIDs(), cfg.BrokerIDs()...)
	var err error
	if e.clusterID, err = loadClusterID(e.dir, ids); err != nil {
		e.removeData()
		return nil, err
	}
	if e.zkMode() {
		if err := e.startZooKeeper(ctx); err != nil {
			e.removeData()
			return nil, err
		}
	}
	for _, id := range ids {
		n, err := e.newNode(id)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.addMember(n)
	}
	for _, n := range e.all() {
		if err := e.group.Start(ctx, n.srv); err != nil {
			e.Close()
			return nil, err
		}
	}
	e.load = newLoadGen(e)
	return e, nil
}

// makeDir picks the data folder: the one the user named (kept), or a
// fresh temporary one (removed on Close).
func (e *engine) makeDir() error {
	if e.cfg.DataDir != "" {
		if err := os.MkdirAll(e.cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("data folder: %w", err)
		}
		abs, err := filepath.Abs(e.cfg.DataDir)
		if err != nil {
			return fmt.Errorf("data folder: %w", err)
		}
		e.dir = abs
		return nil
	}
	dir, err := os.MkdirTemp("", "kraftlab-")
	if err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	e.dir, e.removeDir = dir, true
	return nil
}

func (e *engine) removeData() {
	if e.removeDir {
		os.RemoveAll(e.dir)
	}
}

func (e *engine) newNode(id int32) (*engineNode, error) {
	cfg, err := e.cfg.Settings.NodeConfig(id, e.cfg.ControllerIDs(), e.clusterID, e.dir)
	if err != nil {
		return nil, err
	}
	return e.newNodeFrom(id, cfg)
}

// newNodeFrom makes node id's server from cfg, with the engine's links,
// disk and event listeners.
func (e *engine) newNodeFrom(id int32, cfg server.Config) (*engineNode, error) {
	changes := &changeTracker{clock: e.clock}
	cfg.Raft.Links, cfg.Raft.Counters, cfg.Raft.OnEvent = e.links, e.counters, e.publish
	// The node's disk is its hardware: one for its life, whatever the
	// incarnation, under its metadata log and its partition logs alike.
	disk := storage.NewSlowDisk(cfg.Raft.Disk, e.clock)
	cfg.Raft.Disk = disk
	// The loader's events join the stream as the node's own.
	cfg.OnLoaderEvent = e.publishLoader
	cfg.OnControllerEvent = e.publishController(id)
	cfg.OnLifecycleEvent = e.publishLifecycle(id)
	cfg.OnReplicaEvent = e.publishReplica(id)
	cfg.OnRestart = e.publishRestart(id)
	cfg.Logger = e.cfg.Logger
	if e.zkMode() {
		e.zkNodeConfig(id, &cfg)
	}
	cfg.Publishers = func() []loader.Publisher {
		if cfg.Kind == server.Controller {
			return []loader.Publisher{changes.publisher()}
		}
		return []loader.Publisher{changes.publisher(), e.topicsApplied(id)}
	}
	srv, err := e.group.Add(cfg)
	if err != nil {
		return nil, err
	}
	kind := view.KindController
	if srv.Kind() == server.Broker {
		kind = view.KindBroker
	}
	return &engineNode{id: id, kind: kind, srv: srv, q: srv.Raft(), changes: changes, disk: disk}, nil
}

// members are the engine's nodes at one moment: never modified once
// stored.
type members struct {
	list []*engineNode // controllers first, by ID
	byID map[int32]*engineNode
}

// all are the nodes, controllers first, by ID.
func (e *engine) all() []*engineNode {
	if m := e.members.Load(); m != nil {
		return m.list
	}
	return nil
}

// lookup is node id, nil if there is none.
func (e *engine) lookup(id int32) *engineNode {
	if m := e.members.Load(); m != nil {
		return m.byID[id]
	}
	return nil
}

// addMember adds n to the nodes, after the controllers if it is one.
func (e *engine) addMember(n *engineNode) {
	old := e.members.Load()
	m := &members{byID: map[int32]*engineNode{}}
	if old != nil {
		m.list = append(m.list, old.list...)
	}
	at := len(m.list)
	if n.kind == view.KindController {
		at = 0
		for at < len(m.list) && m.list[at].kind == view.KindController && m.list[at].id < n.id {
			at++
		}
	}
	m.list = slices.Insert(m.list, at, n)
	for _, x := range m.list {
		m.byID[x.id] = x
	}
	e.members.Store(m)
}

func (e *engine) node(id int32) (*engineNode, error) {
	n := e.lookup(id)
	if n == nil {
		return nil, fmt.Errorf("%w %d", condition.ErrUnknownNode, id)
	}
	return n, nil
}

// Kill implements Engine.
func (e *engine) Kill(id int32) error {
	n, err := e.node(id)
	if err != nil {
		return err
	}
	if err := n.kill(); err != nil {
		return stateError(err)
	}
	return nil
}

// kill kills the node's server without waiting for its disk: a crash
// ends the writes waiting for a slow disk (they happen at once).
func (n *engineNode) kill() error {
	n.disk.Cut(true)
	defer n.disk.Cut(false)
	err := n.srv.Kill()
	if err == nil {
		n.killed.Store(true)
	}
	return err
}

// Start implements Engine.
func (e *engine) Start(ctx context.Context, id int32) error {
	n, err := e.node(id)
	if err != nil {
		return err
	}
	if n.srv.Running() {
		return cluster.Errorf(cluster.ErrNodeState, "node %d is already running", id)
	}
	if n.q != nil {
		if st := n.q.Status(); st.Running() {
			return cluster.Errorf(cluster.ErrNodeState, "node %d is already running", id)
		}
	}
	n.killed.Store(false)
	return e.group.Start(ctx, n.srv)
}

// Stop implements Engine.
func (e *engine) Stop(ctx context.Context, id int32) error {
	n, err := e.node(id)
	if err != nil {
		return err
	}
	// A slow disk makes a graceful stop slow, as it should; once ctx
	// gives up, its waits end as a crash's would.
	cutDone := make(chan struct{})
	stopCut := context.AfterFunc(ctx, func() { n.disk.Cut(true); close(cutDone) })
	err = n.srv.Stop(ctx)
	if !stopCut() {
		<-cutDone
	}
	n.disk.Cut(false)
	if err != nil {
		return stateError(err)
	}
	return nil
}

// SetDiskDelay implements Engine.
func (e *engine) SetDiskDelay(id int32, delay time.Duration) error {
	n, err := e.node(id)
	if err != nil {
		return err
	}
	// The playground checked the delay (doDisk); the
	// disk refuses one out of its range all the same.
	if err := n.disk.SetDelay(delay); err != nil {
		return cluster.Errorf(cluster.ErrBadAction, "%v", err)
	}
	return nil
}

// Resign implements Engine.
func (e *engine) Resign(ctx context.Context, id int32) error {
	n, err := e.node(id)
	if err != nil {
		return err
	}
	if n.q == nil {
		return cluster.Errorf(cluster.ErrBadAction, "node %d has no metadata quorum to resign from (zk mode)", id)
	}
	if err := n.q.Resign(ctx); err != nil {
		return stateError(err)
	}
	return nil
}

// Snapshot implements Engine.
func (e *engine) Snapshot(ctx context.Context, id int32) (view.SnapshotID, error) {
	n, err := e.node(id)
	if err != nil {
		return view.SnapshotID{}, err
	}
	if n.q == nil {
		return view.SnapshotID{}, cluster.Errorf(cluster.ErrBadAction, "node %d has no metadata log to snapshot (zk mode)", id)
	}
	s, err := n.q.Snapshot(ctx)
	if err != nil {
		return view.SnapshotID{}, stateError(err)
	}
	return s, nil
}

// Wipe implements Engine.
func (e *engine) Wipe(ctx context.Context, id int32) (cluster.WipeReport, error) {
	n, err := e.node(id)
	if err != nil {
		return cluster.WipeReport{}, err
	}
	// Killed running or not: a node that stopped on a disk fault must not
	// start again by itself while its folder is removed.
	if err := n.kill(); err != nil && !errors.Is(err, quorum.ErrNotRunning) {
		return cluster.WipeReport{}, stateError(err)
	}
	if n.q == nil {
		return cluster.WipeReport{}, cluster.Errorf(cluster.ErrBadAction, "wipe is for KRaft nodes (zk mode)")
	}
	st := n.q.Status()
	w := cluster.WipeReport{LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset, Epoch: st.Epoch, VotedID: st.VotedID}
	dir := server.NodeDir(e.dir, id)
	old, _ := server.ReadMetaProperties(dir)
	if err := os.RemoveAll(dir); err != nil {
		return w, fmt.Errorf("remove node %d's folder: %w", id, err)
	}
	// A replaced disk is formatted again for the same cluster and node, as
	// kafka-storage format would; the node then starts empty. A controller
	// of a dynamic quorum gets a new directory id, as kafka-storage format
	// --no-initial-controllers gives it: the voter set names its old one,
	// so it comes back as an observer.
	if err := writeMetaProperties(e.dir, id, e.clusterID); err != nil {
		return w, err
	}
	if n.kind == view.KindController && st.KRaftVersion >= raft.KRaftVersion1 {
		w.Dynamic = true
		if st.Voter {
			w.OldDirectoryID = old.DirectoryID.String()
		}
		if m, err := server.ReadMetaProperties(dir); err == nil {
			w.NewDirectoryID = m.DirectoryID.String()
		}
	}
	return w, e.group.Start(ctx, n.srv)
}

// stateError marks a node's refusal for its state (not running, not the
// leader) as ErrNodeState, keeping its message.
func stateError(err error) error {
	if errors.Is(err, quorum.ErrNotRunning) || errors.Is(err, quorum.ErrNotLeader) {
		return cluster.Errorf(cluster.ErrNodeState, "%v", err)
	}
	return err
}

// SetLinks implements Engine. Every change is checked before any applies.
func (e *engine) SetLinks(changes []cluster.LinkChange) error {
	for _, c := range changes {
		if _, err := e.node(c.From); err != nil {
			return err
		}
		if _, err := e.node(c.To); err != nil {
			return err
		}
		if c.From == c.To {
			return cluster.Errorf(cluster.ErrBadAction, "link %d -> %d: a node has no link to itself", c.From, c.To)
		}
		if err := c.Fault.Validate(); err != nil {
			return cluster.Errorf(cluster.ErrBadAction, "link %d -> %d: %v", c.From, c.To, err)
		}
	}
	for _, c := range changes {
		id := wire.LinkID{From: c.From, To: c.To}
		if c.Fault == (view.LinkFault{}) {
			e.links.Heal(id)
			continue
		}
		s := wire.LinkState{Down: c.Fault.Down, Delay: c.Fault.Delay, Jitter: c.Fault.Jitter, Loss: c.Fault.Loss}
		if err := e.links.Set(id, s); err != nil {
			return cluster.Errorf(cluster.ErrBadAction, "%v", err)
		}
	}
	return nil
}

// Close implements Engine: it stops the load, kills every node at once
// (what each one acknowledged is already flushed under its flush policy)
// and removes a temporary data folder.
func (e *engine) Close() error {
	e.closeOnce.Do(func() {
		// Nothing that closes may wait for a paused clock.
		e.clock.Resume()
		e.closeTopicLoads()
		if e.load != nil {
			e.load.close()
		}
		// Every node, running or not: a kill also ends the restarts of one
		// that stopped on a disk fault. No write waits for a slow disk any
		// more.
		for _, n := range e.all() {
			n.disk.Cut(true)
		}
		e.group.KillAll()
		if e.zk != nil {
			close(e.zkStop)
			e.zkWG.Wait()
			if err := e.zk.Stop(); err != nil {
				e.closeErr = fmt.Errorf("stop zookeeper: %w", err)
			}
		}
		if e.removeDir {
			if err := os.RemoveAll(e.dir); err != nil {
				e.closeErr = fmt.Errorf("remove the data folder: %w", err)
			}
		}
	})
	return e.closeErr
}
