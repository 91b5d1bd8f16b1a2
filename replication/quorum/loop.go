package quorum

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// publishInterval bounds how stale a running node's published Status may
// be; a role, epoch or leader change is published at once.
const publishInterval = 5 * time.Millisecond

// instance is one incarnation of a node, from Start to its stop, kill or
// failure. Everything but kill, killOnce, box and done belongs to its loop
// goroutine.
type instance struct {
	n      *Node
	id     int32
	cfg    *Config
	starts int

	raft *raft.Node
	log  *DiskLog
	sm   *stateMachine
	box  *mailbox

	clients map[int32]*wire.Client

	// pending are the inbound requests raft has not answered yet, by the
	// ID the loop gave them.
	pending map[uint64]*wire.Request
	nextID  uint64
	// voterWaits are the AddRaftVoter, RemoveRaftVoter and UpdateFeatures
	// (kraft.version upgrade) requests waiting for their VotersRecord to
	// commit.
	voterWaits []voterWait

	// Appends gathered from one batch of items, written as one.
	gathered    [][]byte
	waiting     []*Commit
	gatherEpoch int32
	// commits wait for the high watermark, in offset order; all belong to
	// commitEpoch.
	commits     []*Commit
	commitEpoch int32

	// flushing: a flush of the log runs on its own goroutine (group
	// commit under FlushAlways); flushed is closed when it returns.
	flushing bool
	flushed  chan struct{}
	// broken is a failure met outside raft's entry points (a flush, a
	// snapshot half made), for settle to stop the node with.
	broken error
	// snapErr is why the latest snapshot failed, nil once one is written.
	snapErr error

	// Graceful shutdown.
	stopping     bool
	stopDeadline time.Time
	stopNow      bool

	// What observe saw last, to publish the status on a change.
	last         raft.Status
	lastSnapshot time.Time
	published    time.Time
	unpublished  bool
	pubWritable  bool

	// poll measures the loop's waits for poll-idle-ratio-avg.
	poll pollMetrics

	// unhandled are the items a failure left in the batch being handled.
	unhandled []item

	kill     chan struct{}
	killOnce sync.Once
	done     chan struct{}
	failErr  error
	exitErr  error
}

func newInstance(n *Node, log *DiskLog) *instance {
	now := n.cfg.Clock.Now()
	in := &instance{
		n:            n,
		id:           n.id,
		cfg:          &n.cfg,
		log:          log,
		box:          newMailbox(),
		clients:      make(map[int32]*wire.Client),
		pending:      make(map[uint64]*wire.Request),
		lastSnapshot: now,
		kill:         make(chan struct{}),
		done:         make(chan struct{}),
	}
	in.sm = &stateMachine{id: n.id, onCommit: in.completeCommits, user: n.cfg.NewListener()}
	return in
}

func (in *instance) run() {
	defer in.exit()
	clk := in.cfg.Clock
	timer := clk.NewTimer(time.Hour)
	defer timer.Stop()
	// A pause publishes what it froze: views read the status while the
	// loop sleeps.
	defer clk.OnPause(func() {
		in.box.push(item{fn: func(in *instance, now time.Time, gone error) {
			if gone == nil && in.unpublished {
				in.publish(now, true)
			}
		}})
	})()
	for {
		now := clk.Now()
		if err := in.settle(now); err != nil && in.fail(now, err) {
			return
		}
		if in.stopping && (in.stopNow || in.raft.ShutdownComplete() || !now.Before(in.stopDeadline)) {
			return
		}
		timer.Reset(max(in.wakeAt(now).Sub(now), 0))
		waitStart := clk.Now()
		select {
		case <-in.kill:
			return
		case <-in.box.wake:
			now = clk.Now()
			in.poll.waited(waitStart, now)
			items := in.box.take()
			for i, it := range items {
				// Each item at its own time, as Kafka's raft client reads
				// the clock for each inbound message: a pass over many
				// (a push follower's queued AppendEntries, each a write
				// on a slow disk) can outlast the fetch timeout, and the
				// last one heard from the leader must not count as heard
				// at the pass's start.
				if i > 0 {
					now = clk.Now()
				}
				if err := in.check(in.handle(now, it)); err != nil && in.fail(now, err) {
					in.unhandled = items[i+1:]
					return
				}
			}
			now = clk.Now()
			if err := in.appendGathered(now); err != nil && in.fail(now, err) {
				return
			}
		case <-timer.C:
			now = clk.Now()
			in.poll.waited(waitStart, now)
			if err := in.check(in.raft.Tick(now)); err != nil && in.fail(now, err) {
				return
			}
		}
	}
}

// fail records the error the node stops on and reports whether the loop
// must end now. A leader whose disk failed does not simply vanish, as
// Kafka's halted process does: it resigns at once, sending EndQuorumEpoch,
// so that a voter that can still write takes over after an election
// timeout rather than a fetch timeout, and keeps answering (neither
// writing nor acknowledging anything) until that successor is known or a
// fetch timeout has passed. Any further error ends it.
func (in *instance) fail(now time.Time, err error) bool {
	if in.failErr != nil || in.stopping || in.raft.Summary().Role != raft.Leader || storage.FaultOf(err) == storage.NoFault {
		if in.failErr == nil {
			in.failErr = err
		}
		return true
	}
	in.failErr = err
	in.n.log.Warn("leader's disk failed: resigning before it stops", "err", err)
	in.startShutdown(now, now.Add(in.cfg.Raft.FetchTimeout))
	return in.stopNow
}

// check sorts raft's errors: news that would break Raft's safety was
// ignored by the node, which goes on (a buggy or foreign peer must not take
// it down); any other error is a disk failure that stops the node, as
// Kafka's raft thread stops.
func (in *instance) check(err error) error {
	if err != nil && errors.Is(err, raft.ErrUnsafe) {
		in.n.log.Warn("ignored a message", "err", err)
		return nil
	}
	return err
}

// wakeAt is when the loop must run even if nothing arrives.
func (in *instance) wakeAt(now time.Time) time.Time {
	wake := now.Add(time.Hour)
	if d := in.raft.NextDeadline(); !d.IsZero() && d.Before(wake) {
		wake = d
	}
	if in.unpublished {
		wake = minTime(wake, in.published.Add(publishInterval))
	}
	if in.stopping {
		wake = minTime(wake, in.stopDeadline)
	}
	if d := in.voterWaitDeadline(); !d.IsZero() {
		wake = minTime(wake, d)
	}
	if in.cfg.SnapshotMaxInterval > 0 && in.sm.bytesSinceSnapshot > 0 {
		wake = minTime(wake, in.lastSnapshot.Add(in.cfg.SnapshotMaxInterval))
	}
	return wake
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// handle does one item of the mailbox.
func (in *instance) handle(now time.Time, it item) error {
	switch {
	case it.req != nil && isVoterChange(it.req):
		in.changeVoters(now, it.req)
	case it.req != nil:
		in.nextID++
		in.pending[in.nextID] = it.req
		return in.raft.Step(now, raft.Message{From: -1, To: in.id, ID: in.nextID, Request: it.req.Body})
	case it.commit != nil:
		if err := in.appendable(it.epoch); err != nil {
			it.commit.finish(err)
			return nil
		}
		in.gathered = append(in.gathered, it.records...)
		in.waiting = append(in.waiting, it.commit)
		in.gatherEpoch = it.epoch
	case it.fn != nil:
		it.fn(in, now, nil)
	default:
		return in.raft.Step(now, raft.Message{From: it.peer, To: in.id, ID: it.id, Response: it.resp, Err: it.err})
	}
	return nil
}

// settle runs the node's own work (snapshots), sends what raft has
// to send and flushes what it needs flushed, until raft has nothing more;
// then it reports what changed.
func (in *instance) settle(now time.Time) error {
	if in.sm.err != nil {
		return in.sm.err
	}
	if err := in.broken; err != nil {
		in.broken = nil
		return err
	}
	in.maybeAutoSnapshot(now)
	for {
		if out := in.raft.Outbox(); len(out) > 0 {
			in.report(now)
			for _, m := range out {
				in.dispatch(now, m)
			}
		}
		if !in.raft.NeedsFlush() || in.flushing || in.failErr != nil {
			// A node handing over after a failure flushes nothing more:
			// whatever it would flush it will not acknowledge.
			break
		}
		if in.cfg.Flush != storage.FlushNever {
			in.startFlush()
			break
		}
		// Under FlushNever a flush only marks the data flushed: no I/O to
		// overlap, so it is done inline rather than handed off.
		if err := in.log.Flush(); err != nil {
			return fmt.Errorf("flush the log: %w", err)
		}
		if err := in.check(in.raft.Flushed(in.cfg.Clock.Now())); err != nil {
			return err
		}
	}
	if in.sm.err != nil {
		return in.sm.err
	}
	in.answerVoterWaits(now)
	in.observe(now)
	return nil
}

// startFlush fsyncs the log on another goroutine, so that the loop goes on
// serving Fetches and taking appends meanwhile; the appends that arrive
// during one fsync are made durable together by the next (group commit).
// raft learns of the flush when it is done: a leader counts its own log
// end toward the high watermark only up to the flushed offset, and a
// follower's next Fetch, which acknowledges its log, waits for it.
func (in *instance) startFlush() {
	in.flushing = true
	in.flushed = make(chan struct{})
	done := in.flushed
	go func() {
		defer close(done)
		err := in.log.Flush()
		in.box.push(item{fn: func(in *instance, now time.Time, gone error) {
			if gone == nil {
				in.flushDone(now, err)
			}
		}})
	}()
}

// flushDone tells raft a flush ended; the loop's settle starts the next
// one if records arrived meanwhile.
func (in *instance) flushDone(now time.Time, err error) {
	in.flushing = false
	if err != nil {
		in.broken = fmt.Errorf("flush the log: %w", err)
		return
	}
	if err := in.check(in.raft.Flushed(now)); err != nil {
		in.broken = err
	}
}

// dispatch sends one message of raft's outbox: a response goes back on the
// request's connection, a request to its destination.
func (in *instance) dispatch(now time.Time, m raft.Message) {
	if m.Response != nil {
		req, ok := in.pending[m.ID]
		if !ok {
			in.n.log.Error("raft answered a request it was not given", "id", m.ID, "api", pushrpc.NameForKey(m.Response.Key()))
			return
		}
		delete(in.pending, m.ID)
		if dq, ok := m.Response.(*kmsg.DescribeQuorumResponse); ok {
			in.addEndpoints(dq)
		}
		req.Respond(m.Response)
		return
	}
	if m.Request == nil {
		return
	}
	in.send(m)
}

// send sends a request to a peer; its outcome comes back through the
// mailbox. The timeout is only a backstop: raft times requests out
// itself, but a request lost on a faulty link must end somewhere (and the
// instance's exit closes its clients, which ends every request in flight).
func (in *instance) send(m raft.Message) {
	peer, id := m.To, m.ID
	c, err := in.client(peer)
	if err != nil {
		in.box.push(item{peer: peer, id: id, err: err})
		return
	}
	err = c.SendWithin(in.cfg.Raft.RequestTimeout, m.Request, func(resp kmsg.Response, err error) {
		in.box.push(item{peer: peer, id: id, resp: resp, err: err})
	})
	if err != nil {
		in.box.push(item{peer: peer, id: id, err: err})
	}
}

func (in *instance) client(peer int32) (*wire.Client, error) {
	if c := in.clients[peer]; c != nil {
		return c, nil
	}
	addr, ok := in.cfg.Peers(peer)
	if !ok || addr == "" {
		// A voter added while the node ran may be one only the voter set
		// knows the address of.
		addr, ok = in.voterAddr(peer)
	}
	if !ok || addr == "" {
		return nil, fmt.Errorf("node %d: no address known for node %d", in.id, peer)
	}
	c, err := wire.NewClient(wire.ClientConfig{
		From:        in.id,
		To:          peer,
		Addr:        addr,
		Links:       in.cfg.Links,
		Counters:    in.cfg.Counters,
		DialTimeout: in.cfg.Raft.RequestTimeout,
		SASL:        wire.MemberMechanism(in.cfg.Secret),
		Logger:      in.n.log,
		Clock:       in.cfg.Clock,
	})
	if err != nil {
		return nil, err
	}
	in.clients[peer] = c
	return c, nil
}

// appendable checks an append for epoch against the node's leadership.
func (in *instance) appendable(epoch int32) error {
	st := in.last
	switch {
	case in.stopping:
		return fmt.Errorf("append to node %d: it is shutting down: %w", in.id, ErrNotLeader)
	case !in.sm.writable || st.Role != raft.Leader:
		return fmt.Errorf("append to node %d (%v in epoch %d, leader %d): %w", in.id, st.Role, st.Epoch, st.LeaderID, ErrNotLeader)
	case epoch != in.sm.leader.Epoch:
		return fmt.Errorf("append to node %d for epoch %d: it leads epoch %d: %w", in.id, epoch, in.sm.leader.Epoch, ErrNotLeader)
	}
	return nil
}

// appendGathered writes the records of the appends taken from one batch of
// the mailbox as one raft.Append. It returns raft's error when the log
// could not take them (a full disk): the node stops on it.
func (in *instance) appendGathered(now time.Time) error {
	if len(in.waiting) == 0 {
		return nil
	}
	recs, waiting := in.gathered, in.waiting
	defer func() {
		clear(in.gathered)
		clear(in.waiting)
		in.gathered, in.waiting = in.gathered[:0], in.waiting[:0]
	}()
	fail := func(err error) {
		for _, c := range waiting {
			c.finish(err)
		}
	}
	// Every gathered append was checked against this epoch; a change of
	// leadership later in the same batch fails them all.
	epoch := in.gatherEpoch
	if err := in.appendable(epoch); err != nil {
		fail(err)
		return nil
	}
	last, err := in.raft.Append(now, epoch, recs)
	switch {
	case err == nil:
	case errors.Is(err, raft.ErrNotLeader):
		fail(fmt.Errorf("append to node %d: %w: %v", in.id, ErrNotLeader, err))
		return nil
	case storage.FaultOf(err) != storage.NoFault:
		// Never written: the node stops, and the appends fail as when a
		// leader loses its epoch.
		fail(fmt.Errorf("append to node %d: %w: %v", in.id, ErrNotLeader, err))
		return err
	default:
		fail(fmt.Errorf("append to node %d: %w", in.id, err))
		return nil
	}
	if len(in.commits) > 0 && in.commitEpoch != epoch {
		in.failCommits(ErrNotLeader)
	}
	in.commitEpoch = epoch
	off := last - int64(len(recs)) + 1
	for _, c := range waiting {
		c.first, c.last = off, off+int64(c.n)-1
		off += int64(c.n)
		in.commits = append(in.commits, c)
	}
	return nil
}

// completeCommits completes the appends below the applied offset next; the
// state machine calls it as it applies committed batches.
func (in *instance) completeCommits(next int64) {
	i := 0
	for i < len(in.commits) && in.commits[i].last < next {
		in.commits[i].finish(nil)
		in.commits[i] = nil
		i++
	}
	in.commits = in.commits[i:]
}

func (in *instance) failCommits(err error) {
	for _, c := range in.commits {
		c.finish(fmt.Errorf("node %d lost the leadership of epoch %d before the records committed: %w", in.id, in.commitEpoch, err))
	}
	in.commits = nil
}

// maybeAutoSnapshot snapshots the listener's state by size or age, with
// the policy of Kafka's SnapshotGenerator. Kafka's generator is a loader
// publisher that emits a snapshot of an image later; here the node asks its
// listener on the loop goroutine, where the listener's state is exactly the
// log below the offset it reports and no batch can arrive meanwhile.
func (in *instance) maybeAutoSnapshot(now time.Time) {
	if in.sm.bytesSinceSnapshot == 0 || in.stopping {
		return
	}
	bySize := in.cfg.SnapshotMaxNewBytes > 0 && in.sm.bytesSinceSnapshot >= in.cfg.SnapshotMaxNewBytes
	byAge := in.cfg.SnapshotMaxInterval > 0 && now.Sub(in.lastSnapshot) >= in.cfg.SnapshotMaxInterval
	if !bySize && !byAge {
		return
	}
	if _, err := in.snapshot(now); err != nil && storage.FaultOf(err) == storage.NoFault {
		// Not at a point a snapshot can be taken (nothing past the
		// latest one): the policy tries again later.
		in.n.log.Debug("automatic snapshot skipped", "err", err)
	}
}

// snapshot writes the listener's state at the offset it applied and moves
// the log start there. As Kafka's SnapshotGenerator, it restarts the
// policy's count whether or not the snapshot gets written: one the disk
// cannot take is reported (EventSnapshotFailed, Status.SnapshotError) and
// tried again when the policy next says so, while the node runs on from
// its log. A snapshot written whose log start could not follow stops the
// node; its next start finishes the move.
func (in *instance) snapshot(now time.Time) (raft.SnapshotID, error) {
	in.sm.bytesSinceSnapshot = 0
	in.lastSnapshot = now
	end, recs, err := in.sm.snapshotRecords()
	if err != nil {
		return raft.SnapshotID{}, err
	}
	before, _ := in.log.LatestSnapshot()
	err = in.raft.CreateSnapshot(now, end, recs)
	id, _ := in.log.LatestSnapshot()
	in.report(now) // the caller sees the snapshot counted at once
	switch {
	case err == nil:
		in.snapErr = nil
		return id, nil
	case id != before:
		in.broken = err
	case storage.FaultOf(err) != storage.NoFault:
		in.snapErr = err
		in.n.log.Warn("snapshot failed; the node runs on from its log", "err", err)
		in.emit(Event{Time: now, Kind: EventSnapshotFailed, Status: in.raft.Summary(), Err: err})
	}
	return raft.SnapshotID{}, err
}

// startShutdown begins a graceful stop.
func (in *instance) startShutdown(now time.Time, deadline time.Time) {
	if in.stopping {
		return
	}
	in.stopping = true
	in.stopDeadline = deadline
	in.sm.beginShutdown()
	if err := in.raft.Shutdown(now); err != nil {
		if in.failErr == nil {
			in.failErr = err
		}
		in.stopNow = true
	}
	in.publish(now, true)
}

// exit ends the incarnation: sockets, clients, the log (closed, or crashed
// when killed or failed), then the final status.
func (in *instance) exit() {
	killed := false
	select {
	case <-in.kill:
		killed = true
	default:
	}
	in.sm.beginShutdown()
	if in.flushing {
		// The log is closed or crashed below, after the fsync returns.
		<-in.flushed
	}
	for _, c := range in.clients {
		c.Close()
	}
	now := in.cfg.Clock.Now()
	err := ErrNotRunning
	if !killed && in.failErr == nil && in.stopping {
		err = fmt.Errorf("%w: node %d stopped", ErrNotRunning, in.id)
	}
	for _, it := range append(in.unhandled, in.box.close()...) {
		switch {
		case it.commit != nil:
			it.commit.finish(err)
		case it.fn != nil:
			it.fn(nil, now, err)
		}
	}
	for _, c := range in.waiting {
		c.finish(err)
	}
	in.failCommits(err)

	st := in.raft.Status()
	state := StateStopped
	switch {
	case killed:
		state = StateKilled
	case in.failErr != nil:
		state = StateFailed
		in.report(now)
		in.emit(Event{Time: now, Kind: EventFailed, Status: st, Err: in.failErr})
	}
	if state == StateStopped {
		if cerr := in.log.Close(); cerr != nil {
			in.exitErr = fmt.Errorf("stop node %d: %w", in.id, cerr)
		}
	} else {
		// What a crash keeps: the flushed part of the log.
		st.LogEndOffset = in.log.LastFlushedOffset()
		if cerr := in.log.Crash(); cerr != nil && in.failErr == nil {
			in.failErr = cerr
		}
	}
	if in.failErr != nil && in.exitErr == nil {
		in.exitErr = fmt.Errorf("node %d: %w", in.id, in.failErr)
	}
	in.last = st
	final := in.status(st)
	final.State = state
	final.HighWatermark = min(st.HighWatermark, st.LogEndOffset)
	final.Replicas, final.Writable = nil, false
	if in.failErr != nil {
		final.Fault, final.Err = describe(in.failErr)
	}
	n := in.n
	n.mu.Lock()
	n.status.Store(&final)
	n.metrics.Store(nil)
	if n.inst == in {
		n.inst = nil
	}
	n.mu.Unlock()
	close(in.done)
}
