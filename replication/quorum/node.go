package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
)

// Node is one member of the metadata quorum, a voter or an observer, that
// can be started, stopped, killed and started again from its folder. Its
// methods are safe for concurrent use.
type Node struct {
	cfg Config
	id  int32
	log *slog.Logger

	// life serialises Start against itself; Stop and Kill only need the
	// running instance.
	life sync.Mutex

	mu     sync.Mutex
	inst   *instance // nil while not running
	starts int
	// listeners are the node's own, once its server is bound (SetListener).
	listeners []raft.Endpoint

	status atomic.Pointer[Status]
	// metrics are the running incarnation's, nil while not running.
	metrics atomic.Pointer[Metrics]

	// Counts kept across restarts.
	truncations     atomic.Int64
	snapshotsLoaded atomic.Int64
	snapshotsTaken  atomic.Int64
	unsafe          atomic.Int64
	lastUnsafe      atomic.Pointer[raft.Event]
}

// NewNode checks cfg and returns a node that is not started yet.
func NewNode(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}
	cfg.Raft.Voters = slices.Clone(cfg.Raft.Voters)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Raft.Logger == nil {
		cfg.Raft.Logger = cfg.Logger
	}
	n := &Node{cfg: cfg, id: cfg.Raft.NodeID, log: cfg.Logger.With("node", cfg.Raft.NodeID)}
	n.status.Store(&Status{
		Status: raft.Status{NodeID: n.id, Voter: slices.Contains(n.cfg.Raft.Voters, n.id) || cfg.BootstrapVoters.Contains(n.id), LeaderID: -1, VotedID: -1, HighWatermark: -1},
		State:  StateNew,
	})
	return n, nil
}

// ID is the node's id.
func (n *Node) ID() int32 { return n.id }

// voter reports whether the node may vote: a static voter, or any node of
// a dynamic quorum (no static voters), which an AddRaftVoter may make one
// while it runs. Such a node serves the voters' RPCs from its start, as a
// Kafka controller does.
func (n *Node) voter() bool {
	return slices.Contains(n.cfg.Raft.Voters, n.id) || (n.Dynamic() && !n.cfg.ObserverOnly)
}

// Dynamic reports whether the node belongs to a dynamic quorum
// (kraft.version 1): it has no static voters.
func (n *Node) Dynamic() bool { return len(n.cfg.Raft.Voters) == 0 }

// Register gives the node its place on its server's dispatcher. A voter
// serves the quorum's RPCs (VoterAPIs), as a Kafka controller's raft
// client does on its CONTROLLER listener; an observer is client-only, as a
// Kafka broker's is: it sends Fetch and FetchSnapshot and serves none of
// them. Under push replication a voter serves PushVoterAPIs instead, and
// an observer PushReplicaAPIs, which its leader sends. The server refuses
// the RPCs marked MembersOnly to connections that did not authenticate
// with the playground's secret (Config.Secret), so only members' requests
// reach raft. Requests that arrive while the node is not running stay
// unanswered until the server closes their connection.
func (n *Node) Register(mux *wire.Mux) error {
	h := wire.HandlerFunc(n.serve)
	for _, api := range servedAPIs(n.cfg.Raft.Replication, n.voter()) {
		if err := mux.Handle(api, h); err != nil {
			return fmt.Errorf("node %d: %w", n.id, err)
		}
	}
	return nil
}

// serve hands a request to the running incarnation's loop.
func (n *Node) serve(req *wire.Request) {
	if in := n.current(); in != nil {
		in.box.push(item{req: req})
	}
}

// Done returns a channel closed when the running incarnation ends (a stop,
// a kill or a failure), or a closed one if the node is not running: the
// node's server closes its listener then.
func (n *Node) Done() <-chan struct{} {
	if in := n.current(); in != nil {
		return in.done
	}
	return closedChan
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Dir is the folder of the node's metadata log.
func (n *Node) Dir() string { return filepath.Join(n.cfg.Dir, LogDirName) }

// Status returns the node's latest published status. It never waits for
// the node's loop: a running node publishes a fresh copy within a few
// milliseconds of any change.
func (n *Node) Status() Status { return *n.status.Load() }

func (n *Node) current() *instance {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.inst
}

// Start opens the node's folder, recovering what a crash left there, and
// starts its loop. It fails if the node runs. The node's server opens its
// listener after Start, so that no request arrives before the loop runs.
func (n *Node) Start(ctx context.Context) error {
	n.life.Lock()
	defer n.life.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if n.current() != nil {
		return errors.New("it is already running")
	}
	in, err := n.open()
	if err != nil {
		st := n.Status()
		st.State = StateFailed
		st.Fault, st.Err = describe(err)
		n.status.Store(&st)
		return err
	}
	n.mu.Lock()
	n.inst = in
	n.starts++
	in.starts = n.starts
	n.mu.Unlock()
	in.publish(n.cfg.Clock.Now(), true)
	in.emitRecovery()
	go in.run()
	return nil
}

// open builds a new incarnation: log, quorum state, raft node.
func (n *Node) open() (*instance, error) {
	dir := n.Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := OpenDiskLog(dir, n.cfg.storageOptions())
	if err != nil {
		return nil, err
	}
	rc := n.cfg.Raft
	if n.cfg.DirectoryID != nil {
		if rc.DirectoryID, err = n.cfg.DirectoryID(); err != nil {
			log.Close()
			return nil, fmt.Errorf("node %d's directory id: %w", n.id, err)
		}
	}
	in := newInstance(n, log)
	now := n.cfg.Clock.Now()
	if err := n.bootstrap(log, rc.DirectoryID, now); err != nil {
		in.sm.beginShutdown()
		log.Close()
		return nil, err
	}
	seed := uint64(now.UnixNano())
	n.mu.Lock()
	if n.listeners != nil {
		rc.Listeners = n.listeners
	}
	n.mu.Unlock()
	rn, err := raft.New(rc, log, storage.NewQuorumStateFileOn(dir, n.cfg.Disk), in.sm, rand.New(rand.NewPCG(seed, uint64(n.id))), now)
	if err != nil {
		in.sm.beginShutdown() // the listener's incarnation ends unstarted
		log.Close()
		return nil, err
	}
	in.raft = rn
	in.last = rn.Status()
	return in, nil
}

// bootstrap writes the initial voter set into a new log (BootstrapVoters),
// unless they name this node with another directory id than its folder's
// (dir): that folder was formatted again after the cluster started.
func (n *Node) bootstrap(log *DiskLog, dir raft.DirectoryID, now time.Time) error {
	if len(n.cfg.BootstrapVoters) == 0 || log.LogEndOffset() != 0 || log.LogStartOffset() != 0 {
		return nil
	}
	if v, ok := n.cfg.BootstrapVoters.Voter(n.id); ok && !v.DirectoryID.IsZero() && !dir.IsZero() && v.DirectoryID != dir {
		n.log.Info("not writing the initial voter set: the folder was formatted again", "voter", fmt.Sprintf("%x", v.DirectoryID), "folder", fmt.Sprintf("%x", dir))
		return nil
	}
	if _, ok := log.LatestSnapshot(); ok {
		return nil
	}
	return raft.BootstrapVoters(log, n.cfg.BootstrapVoters, now)
}

// Stop shuts the node down gracefully: a leader resigns with
// EndQuorumEpoch, naming its most caught-up followers as successors, and
// the node keeps serving until another leader is known, ctx ends or
// Config.ShutdownTimeout passes; then it flushes its log and closes.
func (n *Node) Stop(ctx context.Context) error {
	in := n.current()
	if in == nil {
		return ErrNotRunning
	}
	deadline := n.cfg.Clock.Now().Add(n.cfg.ShutdownTimeout)
	if d, ok := ctx.Deadline(); ok && time.Until(d) < n.cfg.ShutdownTimeout {
		deadline = n.cfg.Clock.Now().Add(time.Until(d)) // ctx's is a wall deadline
	}
	in.box.push(item{fn: func(in *instance, now time.Time, err error) {
		if err == nil {
			in.startShutdown(now, deadline)
		}
	}})
	select {
	case <-in.done:
	case <-ctx.Done():
		in.box.push(item{fn: func(in *instance, _ time.Time, err error) {
			if err == nil {
				in.stopNow = true
			}
		}})
		<-in.done
	}
	return in.exitErr
}

// Kill stops the node at once, as a crash: its loop stops, its requests
// in flight fail and its log loses what was not flushed. It returns once
// the node is down; its folder stays for Start. Its server closes the
// listener first, so that nothing is answered after the crash.
func (n *Node) Kill() error {
	in := n.current()
	if in == nil {
		return ErrNotRunning
	}
	in.killOnce.Do(func() { close(in.kill) })
	<-in.done
	return nil
}

// call runs fn on the node's loop and waits for its result or ctx.
func call[T any](ctx context.Context, n *Node, fn func(in *instance, now time.Time) (T, error)) (T, error) {
	var zero T
	in := n.current()
	if in == nil {
		return zero, fmt.Errorf("node %d: %w", n.id, ErrNotRunning)
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	ok := in.box.push(item{fn: func(in *instance, now time.Time, err error) {
		if err != nil {
			ch <- result{err: err}
			return
		}
		v, err := fn(in, now)
		// The caller sees the outcome in Status at once.
		in.publish(now, true)
		ch <- result{v, err}
	}})
	if !ok {
		return zero, fmt.Errorf("node %d: %w", n.id, ErrNotRunning)
	}
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Resign makes the node, if it leads, resign its epoch without stopping:
// it sends EndQuorumEpoch and moves to Resigned; it may be elected again.
func (n *Node) Resign(ctx context.Context) error {
	_, err := call(ctx, n, func(in *instance, now time.Time) (struct{}, error) {
		st := in.raft.Status()
		if st.Role != raft.Leader {
			return struct{}{}, fmt.Errorf("resign: node %d is %v in epoch %d: %w", n.id, st.Role, st.Epoch, ErrNotLeader)
		}
		return struct{}{}, in.raft.Resign(now, st.Epoch)
	})
	return err
}

// Snapshot writes a snapshot of the node's listener state at the offset
// the listener applied (a batch boundary at or below the high watermark)
// and moves its log start there.
func (n *Node) Snapshot(ctx context.Context) (raft.SnapshotID, error) {
	return call(ctx, n, func(in *instance, now time.Time) (raft.SnapshotID, error) {
		return in.snapshot(now)
	})
}

// ReadLog returns whole batches of the node's log from the one holding
// offset, up to about maxBytes, and the node's high watermark: the batches
// below it are committed.
func (n *Node) ReadLog(ctx context.Context, offset int64, maxBytes int) ([]byte, int64, error) {
	type read struct {
		data []byte
		hwm  int64
	}
	r, err := call(ctx, n, func(in *instance, now time.Time) (read, error) {
		data, err := in.log.Read(offset, maxBytes)
		return read{data, in.raft.Status().HighWatermark}, err
	})
	return r.data, r.hwm, err
}

// Append hands records to the node for its leadership of epoch (Kafka's
// RaftClient.scheduleAppend): the node must lead that epoch and have
// applied what came before it, as its listener learnt from
// HandleLeaderChange. They are written after
// controller.quorum.append.linger.ms in one batch with other appends, and
// the Commit completes once the high watermark passes them. It fails with
// ErrNotLeader if the node does not lead epoch, or loses the leadership
// first. The node keeps the records until they are written: the caller
// must not modify them.
func (n *Node) Append(epoch int32, records [][]byte) *Commit {
	if len(records) == 0 {
		return failedCommit(errors.New("append: no records"))
	}
	in := n.current()
	if in == nil {
		return failedCommit(fmt.Errorf("append to node %d: %w", n.id, ErrNotRunning))
	}
	c := newCommit(len(records))
	if !in.box.push(item{records: records, commit: c, epoch: epoch}) {
		c.finish(fmt.Errorf("append to node %d: %w", n.id, ErrNotRunning))
	}
	return c
}
