package raft

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// Role is a node's state in the quorum (Kafka's EpochState kinds).
type Role int8

// The roles. Observers are only ever Unattached or Follower.
const (
	Unattached Role = iota
	Prospective
	Candidate
	Leader
	Follower
	Resigned
)

var roleNames = [...]string{"Unattached", "Prospective", "Candidate", "Leader", "Follower", "Resigned"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", r)
}

// maxEpoch is the largest epoch: one that cannot be incremented, so the
// node refuses it from the wire and from disk.
const maxEpoch = math.MaxInt32

// Errors returned by the node's entry points.
var (
	// ErrNotLeader is returned by Append and Resign on a node that does not
	// lead the given epoch.
	ErrNotLeader = errors.New("not the leader")
	// ErrReentrant is returned when a Listener calls back into its node.
	ErrReentrant = errors.New("node called from its own listener")
	// ErrUnsafe is wrapped by the error an entry point returns for news
	// that would break Raft's safety (a second leader in an epoch, a
	// leader that is no voter, a truncation below the high watermark or
	// the log start): the node ignored the news and can go on. Any other
	// error is a Log or QuorumStateStore failure, and the node should stop.
	ErrUnsafe = errors.New("ignored: it would break Raft's safety")
)

// Node is one member of the quorum as a deterministic state machine: it
// takes messages and the current time, and leaves messages to send in its
// outbox. It starts no goroutines, reads no clock and is not safe for
// concurrent use; a driver owns it (see the package documentation).
type Node struct {
	cfg   Config
	id    int32
	voter bool
	// history is the voter set and kraft.version the log holds; voterIDs
	// are the ids of the set in force (membership.go).
	history  voterHistory
	voterIDs []int32
	log      Log
	store    QuorumStateStore
	listener Listener
	rng      *rand.Rand
	logger   *slog.Logger

	// The election state: role, epoch, leader and vote (-1 for none).
	// persisted mirrors the store; epoch, leader and vote differ from it only
	// after a leader resigns (the leader is then forgotten in memory).
	role      Role
	epoch     int32
	leader    int32
	voted     int32
	votedDir  DirectoryID // the voted candidate's directory; zero matches any
	persisted electionState

	// hwm is the high watermark this node knows, -1 while unknown. A leader
	// publishes its own (leaderState.hwm), which starts unknown each epoch.
	hwm int64

	// Timers and role data; which ones are live depends on the role.
	electionDeadline  time.Time // Unattached, Prospective, Candidate, Resigned
	election          *election // Prospective, Candidate
	fetchDeadline     time.Time // Follower
	fetchedFromLeader bool      // Follower
	// updateVoterDeadline is when a voter follower next checks its entry
	// in the voter set (UpdateRaftVoter).
	updateVoterDeadline time.Time // Follower
	// updatedLeader: under kraft.version 0, the leader took this voter's
	// UpdateRaftVoter in this role (Kafka's hasUpdatedLeader).
	updatedLeader    bool // Follower
	fetchingSnapshot SnapshotWriter
	lead             *leaderState  // Leader
	resign           *resignedInfo // Resigned

	conns  map[int32]*connection
	nextID uint64
	outbox []Message

	shuttingDown bool

	// Push replication, on a follower: answers waiting for the flush of
	// what they acknowledge, and (an observer) whether the leader has
	// taken it on.
	acks      []heldAck
	observing bool

	// The listener's progress: the next offset it expects and the last
	// leader it was told of.
	listenerNext int64
	notified     LeaderAndEpoch
	// committed is commitUpTo's batches, reused: the listener may keep
	// none of them past its call.
	committed []storage.Batch

	// events are the changes not yet taken (TakeEvents); reported is the
	// state EventRoleChanged last reported, hwmEpoch the epoch whose first
	// high watermark was reported; now is the time of the current entry.
	events   []Event
	reported roleState
	hwmEpoch int32
	now      time.Time

	// metrics is what Metrics reports beside the state.
	metrics nodeMetrics

	busy     bool
	deadline time.Time
	// transitions counts role changes, so poll can run the new role at once.
	transitions int
}

// New starts a node from its persisted election state and log, at time now.
// A node that was leader comes back Resigned in its epoch; one whose log has
// a higher epoch than its quorum state comes back Unattached in that epoch.
// rng is the node's only source of randomness.
func New(cfg Config, log Log, store QuorumStateStore, listener Listener, rng *rand.Rand, now time.Time) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("raft config: %w", err)
	}
	if log == nil || store == nil || listener == nil || rng == nil {
		return nil, errors.New("raft: log, store, listener and rng are required")
	}
	n := &Node{
		cfg:      cfg,
		id:       cfg.NodeID,
		log:      log,
		store:    store,
		listener: listener,
		rng:      rng,
		logger:   cfg.Logger,
		leader:   -1,
		voted:    -1,
		hwm:      -1,
		conns:    make(map[int32]*connection),
		notified: LeaderAndEpoch{LeaderID: -1},
		hwmEpoch: -1,
		now:      now,
	}
	n.cfg.Voters = slices.Clone(cfg.Voters)
	n.cfg.Bootstrap = slices.Clone(cfg.Bootstrap)
	n.cfg.Listeners = slices.Clone(cfg.Listeners)
	n.history.static = StaticVoters(n.cfg.Voters)
	if n.logger == nil {
		n.logger = slog.New(slog.DiscardHandler)
	}
	n.logger = n.logger.With("node", n.id)
	if err := n.repairSnapshot(); err != nil {
		return nil, err
	}
	if err := n.loadVoterHistory(); err != nil {
		return nil, err
	}
	if err := n.recover(now); err != nil {
		return nil, err
	}
	// The state read from disk is the starting point, not a change.
	n.events = nil
	n.reported = roleState{n.role, n.epoch, n.leader, n.voted}
	if n.voter && len(n.voterIDs) == 1 {
		// The only voter elects itself at once (KafkaRaftClient.initialize).
		var err error
		if n.role == Candidate {
			err = n.becomeLeader(now)
		} else {
			err = n.becomeProspective(now)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := n.poll(now); err != nil {
		return nil, err
	}
	return n, nil
}

// repairSnapshot finishes what a crash may have interrupted: a snapshot
// frozen before the log start moved to it.
func (n *Node) repairSnapshot() error {
	s, ok := n.log.LatestSnapshot()
	if !ok || s.EndOffset == n.log.LogStartOffset() {
		return nil
	}
	var err error
	switch {
	case s.EndOffset > n.log.LogEndOffset():
		err = n.log.TruncateFullyAndStartAt(s.EndOffset)
	case s.EndOffset > n.log.LogStartOffset():
		err = n.log.AdvanceLogStart(s.EndOffset)
	}
	if err == nil {
		err = n.log.DeleteSnapshotsBefore(s)
	}
	if err != nil {
		return fmt.Errorf("raft: move the log start to snapshot %v: %w", s, err)
	}
	return nil
}

func sameVoters(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func (n *Node) recover(now time.Time) error {
	st, err := n.store.Read()
	if err != nil {
		return fmt.Errorf("raft: read quorum state: %w", err)
	}
	// A static quorum's voters never change, so its quorum state must
	// agree with them. A dynamic one's state may name a leader or a vote
	// of an older voter set: the log decides who votes now.
	static := !n.dynamic()
	if static && len(st.Voters) > 0 && !sameVoters(st.Voters, n.cfg.Voters) {
		return fmt.Errorf("raft: configured voters %v differ from the voters %v in the quorum state; check controller.quorum.voters", n.cfg.Voters, st.Voters)
	}
	switch {
	case st.Epoch >= maxEpoch:
		return fmt.Errorf("raft: quorum state epoch %d cannot be incremented: refusing to start", st.Epoch)
	case static && st.LeaderID >= 0 && !n.isVoter(st.LeaderID):
		return fmt.Errorf("raft: quorum state names leader %d, not one of the voters %v", st.LeaderID, n.cfg.Voters)
	case static && st.VotedID >= 0 && !n.isVoter(st.VotedID):
		return fmt.Errorf("raft: quorum state names a vote for %d, not one of the voters %v", st.VotedID, n.cfg.Voters)
	}
	n.persisted = electionState{st.Epoch, st.LeaderID, st.VotedID, DirectoryID(st.VotedDirectoryID)}
	n.epoch, n.leader, n.voted, n.votedDir = st.Epoch, st.LeaderID, st.VotedID, DirectoryID(st.VotedDirectoryID)
	if static && !n.voter && (st.VotedID >= 0 || st.LeaderID == n.id) {
		return fmt.Errorf("raft: quorum state %+v says node %d voted or led, but it is not a voter", st, n.id)
	}
	switch logEpoch := n.lastEpoch(); {
	case logEpoch >= maxEpoch:
		return fmt.Errorf("raft: the log's last epoch %d cannot be incremented: refusing to start", logEpoch)
	case st.Epoch < logEpoch:
		n.logger.Warn("quorum state epoch below the log's", "state", st.Epoch, "log", logEpoch)
		return n.becomeUnattached(now, logEpoch)
	case st.LeaderID == n.id:
		// Resigned in the same epoch: no second vote in it, and no reuse of
		// offsets whose unflushed records were lost.
		n.setRole(Resigned)
		n.leader = n.id
		n.electionDeadline = now.Add(n.randomElectionTimeout())
		n.resign = &resignedInfo{unacked: n.remoteVoters()}
	case st.VotedID == n.id && n.participates():
		n.setRole(Candidate)
		n.election = newElection(n, false)
		n.electionDeadline = now.Add(n.randomElectionTimeout())
		n.electionStarted(now)
	case st.LeaderID >= 0:
		n.setRole(Follower)
		n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
		n.updateVoterDeadline = n.fetchDeadline
	default:
		n.setRole(Unattached)
		n.electionDeadline = now.Add(n.randomElectionTimeout())
	}
	return nil
}

// enter guards the entry points against a listener calling back in.
func (n *Node) enter(now time.Time) error {
	if n.busy {
		return ErrReentrant
	}
	n.busy = true
	n.now = now
	return nil
}

func (n *Node) exit() { n.busy = false }

// Step hands the node an inbound request, or the response (or failure) of a
// request it sent.
func (n *Node) Step(now time.Time, m Message) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	var err error
	switch {
	case m.Request != nil:
		err = n.handleRequest(now, m)
	case m.Response != nil || m.Err != nil:
		err = n.handleResponse(now, m)
	default:
		err = errors.New("empty message")
	}
	if perr := n.poll(now); err == nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("raft node %d: %v: %w", n.id, m, err)
	}
	return nil
}

// Tick runs the node's timers. The driver calls it at NextDeadline (calling
// it earlier or more often is harmless).
func (n *Node) Tick(now time.Time) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	if err := n.poll(now); err != nil {
		return fmt.Errorf("raft node %d: tick: %w", n.id, err)
	}
	return nil
}

// NextDeadline is when the driver must call Tick next, if no message
// arrives before; the zero time means no timer is pending.
func (n *Node) NextDeadline() time.Time { return n.deadline }

// Outbox drains the messages the node wants sent: requests to peers and
// responses to requests it was given. The driver may send them before
// flushing the log (see NeedsFlush). A push leader builds its
// AppendEntries here, as of the time of its last entry point: one per
// replica carries all the records and high watermark news of the entry
// points since the last Outbox, so a driver that takes several messages
// and appends before it sends gets fewer, larger requests.
func (n *Node) Outbox() []Message {
	n.pushOutbox()
	out := n.outbox
	n.outbox = nil
	return out
}

// NeedsFlush reports whether the log holds unflushed records. The driver
// then calls Log.Flush, possibly while the outbox is on the wire, and
// Flushed. Until then a voter does not fetch (its next Fetch would
// acknowledge the records), a push replica holds the answer that would,
// and a leader does not count them toward the high watermark.
func (n *Node) NeedsFlush() bool { return n.log.LastFlushedOffset() < n.log.LogEndOffset() }

// Flushed tells the node that the driver flushed the log.
func (n *Node) Flushed(now time.Time) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	if n.role == Leader {
		n.lead.updateLocal(n)
		if n.role == Leader {
			// A VotersRecord may have become servable (servableEnd).
			n.lead.onAppend(n, now)
		}
	}
	if err := n.poll(now); err != nil {
		return fmt.Errorf("raft node %d: after flush: %w", n.id, err)
	}
	return nil
}

// Shutdown starts a graceful shutdown: a leader resigns, sending
// EndQuorumEpoch with its followers as preferred successors, most caught up
// first; no role starts a new election. The driver keeps the node running
// until ShutdownComplete (or its own timeout), then flushes the log and stops.
func (n *Node) Shutdown(now time.Time) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	n.shuttingDown = true
	return n.poll(now)
}

// ShutdownComplete reports whether a shutting-down node may stop: it is an
// observer, the only voter, or another leader has been elected.
func (n *Node) ShutdownComplete() bool {
	return n.shuttingDown && (!n.participates() || len(n.voterIDs) == 1 || (n.leader >= 0 && n.leader != n.id))
}

// Resign makes the leader of epoch step down as on shutdown, but the node
// stays a voter and may be elected again later.
func (n *Node) Resign(now time.Time, epoch int32) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	if n.role != Leader || n.epoch != epoch {
		return fmt.Errorf("resign epoch %d: %w (node %d is %v in epoch %d)", epoch, ErrNotLeader, n.id, n.role, n.epoch)
	}
	n.lead.resignRequested = true
	return n.poll(now)
}

// poll runs the current role's timers and sends what it can, the way
// KafkaRaftClient.poll does, then feeds the listener.
func (n *Node) poll(now time.Time) error {
	var wake time.Time
	for range 16 {
		before := n.transitions
		var err error
		wake, err = n.pollRole(now)
		if err != nil {
			return err
		}
		if n.transitions == before {
			break
		}
	}
	if err := n.updateListener(); err != nil {
		return err
	}
	if !wake.IsZero() && !wake.After(now) {
		// A timer that is due but acted on nothing would make the driver
		// spin; look again shortly instead.
		n.logger.Debug("deadline not in the future", "role", n.role, "deadline", wake)
		wake = now.Add(time.Millisecond)
	}
	n.deadline = wake
	return nil
}

func (n *Node) pollRole(now time.Time) (time.Time, error) {
	switch n.role {
	case Leader:
		return n.pollLeader(now)
	case Candidate:
		return n.pollCandidate(now)
	case Prospective:
		return n.pollProspective(now)
	case Follower:
		return n.pollFollower(now)
	case Resigned:
		return n.pollResigned(now)
	default:
		return n.pollUnattached(now)
	}
}

// earliest returns the earlier of two deadlines; the zero time means none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func (n *Node) majority() int { return len(n.voterIDs)/2 + 1 }

func (n *Node) remoteVoters() []int32 {
	out := make([]int32, 0, len(n.voterIDs))
	for _, v := range n.voterIDs {
		if v != n.id {
			out = append(out, v)
		}
	}
	return out
}

func (n *Node) randomElectionTimeout() time.Duration {
	ms := int64(n.cfg.ElectionTimeout / time.Millisecond)
	return n.cfg.ElectionTimeout + time.Duration(n.rng.Int64N(ms))*time.Millisecond
}

// lastEpoch is the epoch of the log's last record, or of the snapshot it
// starts from when it holds none (Kafka's lastFetchedEpoch).
func (n *Node) lastEpoch() int32 {
	if e := n.log.LastEpoch(); e >= 0 {
		return e
	}
	if s, ok := n.snapshotAtStart(); ok {
		return s.Epoch
	}
	return 0
}

// snapshotAtStart returns the snapshot the log starts from, if any.
func (n *Node) snapshotAtStart() (SnapshotID, bool) {
	s, ok := n.log.LatestSnapshot()
	if !ok || s.EndOffset != n.log.LogStartOffset() {
		return SnapshotID{}, false
	}
	return s, true
}

// highWatermark is the high watermark the node publishes: a leader's of its
// epoch, none for a resigned leader (ResignedState.highWatermark is
// empty), the one it learned for the others. n.hwm, the highest it knew,
// still guards truncation.
func (n *Node) highWatermark() int64 {
	switch n.role {
	case Leader:
		return n.lead.hwm
	case Resigned:
		return -1
	}
	return n.hwm
}
