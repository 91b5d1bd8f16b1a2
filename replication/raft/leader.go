package raft

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkQuorumFactor is LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR: a leader
// resigns when a majority has not fetched within 1.5 fetch timeouts.
const checkQuorumFactor = 1.5

// observerSessionTimeout is LeaderState.OBSERVER_SESSION_TIMEOUT_MS: the
// leader forgets an observer that has not fetched for five minutes.
const observerSessionTimeout = 5 * time.Minute

// recordOverhead bounds the bytes a record adds to a batch beyond its value.
const recordOverhead = 32

// leaderState is what a leader keeps for its epoch (Kafka's LeaderState).
type leaderState struct {
	epochStartOffset int64
	// hwm is the epoch's high watermark, -1 until the first record of the
	// epoch commits.
	hwm int64
	// voters follow cfg.Voters' order, the leader included; observers are
	// added as they fetch.
	voters    []*replicaState
	observers []*replicaState

	// Check-quorum: the voters that fetched since the timer last restarted.
	fetchedVoters       []int32
	checkQuorumDeadline time.Time
	// beginQuorumDeadline is when voters that stopped fetching get another
	// BeginQuorumEpoch.
	beginQuorumDeadline time.Time

	// The accumulator: records appended but not yet written, and when the
	// linger ends.
	pending      [][]byte
	pendingBytes int
	drainAt      time.Time
	drainNow     bool // the pending records fill a batch: write them at the drain time

	parked          []*parkedFetch
	resignRequested bool
	// voterChange is the offset of the VotersRecord this leader appended
	// and has not seen committed, -1 for none.
	voterChange int64
	// learned is a static quorum's voter set as the voters described
	// themselves to this leader (UpdateRaftVoter), the leader's own entry
	// included: Kafka's volatile voters, what a kraft.version upgrade
	// writes. Nil under kraft.version 1.
	learned VoterSet

	// firstID is the last request id of the node before this epoch's
	// leadership: answers with lower ids belong to an earlier role.
	firstID uint64

	// roleWake is the push leader's next timer other than its pushes' (the
	// linger, check-quorum), as of its last poll: Outbox, which sends the
	// pushes, sets the deadline from it and theirs.
	roleWake time.Time
}

// replicaState is the leader's view of one replica (LeaderState.ReplicaState).
type replicaState struct {
	id    int32
	voter bool
	// dir is the directory id its fetches carry (Fetch v17+), zero if none.
	dir DirectoryID
	// endOffset is the replica's log end offset as its last fetch said; -1
	// until it fetches. For the leader itself, its flushed offset.
	endOffset          int64
	lastFetch          time.Time
	lastCaughtUp       time.Time
	lastFetchLeaderLEO int64
	// acked: the voter answered BeginQuorumEpoch or fetched recently.
	acked bool
	// push is the leader's progress with the replica's log in push
	// replication; nil in pull and for the leader itself.
	push *progress
}

type parkedFetch struct {
	m        Message
	req      *kmsg.FetchRequest
	replica  int32
	offset   int64
	deadline time.Time
}

func newLeaderState(n *Node, now time.Time) *leaderState {
	ls := &leaderState{
		epochStartOffset:    n.log.LogEndOffset(),
		hwm:                 -1,
		checkQuorumDeadline: now.Add(time.Duration(float64(n.cfg.FetchTimeout) * checkQuorumFactor)),
		beginQuorumDeadline: now.Add(n.cfg.FetchTimeout / 2),
		firstID:             n.nextID,
		voterChange:         -1,
	}
	for _, v := range n.voterIDs {
		r := &replicaState{id: v, voter: true, endOffset: -1, acked: v == n.id}
		if n.cfg.Replication == Push && v != n.id {
			// Raft's nextIndex starts at the leader's log end: the first
			// push carries the LeaderChange record and finds the match.
			r.push = newProgress(ls.epochStartOffset)
		}
		ls.voters = append(ls.voters, r)
	}
	ls.updateLocal(n)
	if n.history.kraftVersion() < KRaftVersion1 {
		ls.learned = n.history.last().clone()
		ls.learnSelf(n)
	}
	return ls
}

// replica returns the leader's state of the replica (id, dir), making an
// observer's for one it has not heard from. A voter's state answers only
// to the directory id the voter set names, as Kafka's LeaderState keys
// replicas by ReplicaKey: a voter that lost its disk fetches with a new
// directory id, as an observer, and its fetches count toward nothing.
func (ls *leaderState) replica(n *Node, id int32, dir DirectoryID, now time.Time) *replicaState {
	for _, r := range ls.voters {
		if r.id == id && n.votesAs(id, dir) {
			return r
		}
	}
	for _, r := range ls.observers {
		if r.id == id && r.dir == dir {
			return r
		}
	}
	r := &replicaState{id: id, dir: dir, endOffset: -1}
	ls.observers = append(ls.observers, r)
	slices.SortFunc(ls.observers, func(a, b *replicaState) int { return cmp.Compare(a.id, b.id) })
	return r
}

// updateLocal counts the leader's own flushed records toward the high
// watermark.
func (ls *leaderState) updateLocal(n *Node) {
	for _, r := range ls.voters {
		if r.id == n.id {
			r.endOffset = min(n.log.LastFlushedOffset(), n.log.LogEndOffset())
		}
	}
	ls.maybeUpdateHighWatermark(n)
}

// updateReplica records a fetch at offset from a replica: the fetch
// acknowledges everything before offset.
func (ls *leaderState) updateReplica(n *Node, id int32, dir DirectoryID, now time.Time, offset int64) {
	if id < 0 || id == n.id {
		return
	}
	r := ls.replica(n, id, dir, now)
	r.dir = dir
	leo := n.log.LogEndOffset()
	// Caught up: at the leader's end now, or at the end the leader had at
	// the replica's previous fetch (then as of that fetch).
	if offset >= leo {
		r.lastCaughtUp = maxTime(r.lastCaughtUp, now)
	} else if r.lastFetchLeaderLEO > 0 && offset >= r.lastFetchLeaderLEO {
		r.lastCaughtUp = maxTime(r.lastCaughtUp, r.lastFetch)
	}
	r.lastFetchLeaderLEO = leo
	r.lastFetch = maxTime(r.lastFetch, now)
	r.endOffset = offset
	r.acked = true
	if r.voter {
		ls.followingVoter(n, id, now)
		ls.maybeUpdateHighWatermark(n)
	}
}

// followingVoter feeds check-quorum with a Fetch or FetchSnapshot from a voter.
func (ls *leaderState) followingVoter(n *Node, id int32, now time.Time) {
	if !n.isVoter(id) || id == n.id {
		return
	}
	if !slices.Contains(ls.fetchedVoters, id) {
		ls.fetchedVoters = append(ls.fetchedVoters, id)
	}
	fetched := len(ls.fetchedVoters)
	if n.voter {
		// The leader counts itself, while it is a voter (a leader that
		// removed itself leads until the change commits).
		fetched++
	}
	if fetched >= n.majority() {
		ls.fetchedVoters = ls.fetchedVoters[:0]
		ls.checkQuorumDeadline = now.Add(time.Duration(float64(n.cfg.FetchTimeout) * checkQuorumFactor))
	}
}

// maybeUpdateHighWatermark moves the high watermark to the largest offset a
// majority of voters hold, once it passes the epoch's start: the leader must
// commit a record of its own epoch before it exposes earlier ones (Raft's
// commit rule). It never goes back.
func (ls *leaderState) maybeUpdateHighWatermark(n *Node) {
	if len(ls.voters) == 0 {
		return
	}
	offsets := make([]int64, len(ls.voters))
	for i, r := range ls.voters {
		offsets[i] = r.endOffset
	}
	slices.Sort(offsets)
	slices.Reverse(offsets)
	candidate := offsets[len(offsets)/2]
	if candidate > ls.epochStartOffset && candidate > ls.hwm {
		ls.hwm = candidate
		n.hwm = max(n.hwm, candidate)
		n.noteHighWatermark()
		n.leaderCommitted(candidate, n.now)
		ls.voterChangeCommitted(n)
		ls.commitMoved()
		// Every parked fetch knows an older high watermark: answer them
		// all (onUpdateLeaderHighWatermark, KIP-1166).
		ls.completeParked(n)
	}
}

// successors orders the other voters by how far they have fetched, most
// caught up first, for EndQuorumEpoch.
func (ls *leaderState) successors(n *Node) []int32 {
	var rs []*replicaState
	for _, r := range ls.voters {
		if r.id != n.id {
			rs = append(rs, r)
		}
	}
	slices.SortStableFunc(rs, func(a, b *replicaState) int { return cmp.Compare(b.endOffset, a.endOffset) })
	out := make([]int32, len(rs))
	for i, r := range rs {
		out[i] = r.id
	}
	return out
}

func (ls *leaderState) checkQuorumExpired(n *Node, now time.Time) bool {
	return len(n.voterIDs) > 1 && !now.Before(ls.checkQuorumDeadline)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (n *Node) pollLeader(now time.Time) (time.Time, error) {
	ls := n.lead
	if n.shuttingDown || ls.resignRequested || ls.checkQuorumExpired(n, now) {
		if ls.checkQuorumExpired(n, now) {
			n.logger.Warn("check-quorum failed: no fetch (pull) or answer (push) from a majority", "epoch", n.epoch)
		}
		if !n.voter && ls.resignRequested {
			// Its own removal committed: the listener gets it (and the
			// driver sees it applied, to answer RemoveRaftVoter) before the
			// resignation hides the leader's high watermark.
			if err := n.updateListener(); err != nil {
				return now, err
			}
		}
		n.becomeResigned(now)
		return now, nil
	}
	if ls.drainDue(n, now) {
		if err := ls.drain(n, now); err != nil {
			return now, err
		}
	}
	ls.expireParked(n, now)
	ls.expireObservers(now)
	if err := n.maybeUpdateSelf(now); err != nil {
		return now, err
	}
	if n.cfg.Replication == Push {
		// The pushes announce the leader: no BeginQuorumEpoch. Past its
		// linger a push leader has written what it gathered (drainDue).
		// It sends them when the driver takes its outbox (pushOutbox).
		ls.roleWake = ls.drainAt
		if !ls.drainAt.IsZero() && !now.Before(ls.drainAt) {
			// Gathering past the linger (drainDue).
			ls.roleWake = ls.drainAt.Add(drainDeferMax)
		}
		if len(n.voterIDs) > 1 {
			ls.roleWake = earliest(ls.roleWake, ls.checkQuorumDeadline)
		}
		return earliest(ls.roleWake, ls.pushTimers(n, now)), nil
	}

	if !now.Before(ls.beginQuorumDeadline) {
		// Voters that stopped fetching may have lost track of the leader
		// (a restart, a lost BeginQuorumEpoch): tell them again.
		for _, r := range ls.voters {
			if r.id != n.id && now.Sub(r.lastFetch) >= n.cfg.FetchTimeout/2 {
				r.acked = false
			}
		}
		ls.beginQuorumDeadline = now.Add(n.cfg.FetchTimeout / 2)
	}
	wake := ls.beginQuorumDeadline
	if !ls.drainAt.IsZero() {
		wake = earliest(wake, ls.drainAt)
		if !now.Before(ls.drainAt) {
			wake = earliest(wake, ls.drainAt.Add(drainDeferMax))
		}
	}
	if len(n.voterIDs) > 1 {
		wake = earliest(wake, ls.checkQuorumDeadline)
	}
	for _, p := range ls.parked {
		wake = earliest(wake, p.deadline)
	}
	for _, r := range ls.voters {
		if !r.acked {
			id := r.id
			wake = earliest(wake, n.trySend(now, id, func() kmsg.Request { return n.beginQuorumEpochRequest(id) }))
		}
	}
	return wake, nil
}

func (ls *leaderState) expireObservers(now time.Time) {
	ls.observers = slices.DeleteFunc(ls.observers, func(r *replicaState) bool {
		return now.Sub(r.lastFetch) >= observerSessionTimeout
	})
}

func (n *Node) beginQuorumEpochRequest(to int32) *kmsg.BeginQuorumEpochRequest {
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.Version = BeginQuorumEpochVersion
	req.ClusterID = &n.cfg.ClusterID
	req.VoterID = to
	for _, e := range n.cfg.Listeners {
		l := kmsg.NewBeginQuorumEpochRequestLeaderEndpoint()
		l.Name, l.Host, l.Port = e.Name, e.Host, e.Port
		req.LeaderEndpoints = append(req.LeaderEndpoints, l)
	}
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.VoterDirectoryID = n.voterDirectory(to)
	p.LeaderID = n.id
	p.LeaderEpoch = n.epoch
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = MetadataTopic
	t.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.BeginQuorumEpochRequestTopic{t}
	return req
}

// appendLeaderChange writes the LeaderChange control record that opens the
// epoch, so the high watermark can pass the epoch start without waiting for
// an append.
func (ls *leaderState) appendLeaderChange(n *Node, now time.Time, granting []int32) error {
	rec := storage.LeaderChangeRecord(n.id, n.voterIDs, granting)
	base, last, err := n.log.AppendControl([]storage.Record{rec}, n.epoch, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("append leader change record: %w", err)
	}
	n.leaderWrote(base, last, now)
	ls.onAppend(n, now)
	return nil
}

// onAppend runs after the leader's log end offset moved: parked fetches
// that wait for it complete now, before the flush.
func (ls *leaderState) onAppend(n *Node, now time.Time) {
	leo := n.servableEnd()
	ls.parked = slices.DeleteFunc(ls.parked, func(p *parkedFetch) bool {
		if p.offset < leo {
			n.reply(p.m, n.completeFetch(now, p))
			return true
		}
		return false
	})
}

// completeParked answers every parked fetch with what the log holds now.
func (ls *leaderState) completeParked(n *Node) {
	if len(ls.parked) == 0 {
		return
	}
	parked := ls.parked
	ls.parked = nil
	for _, p := range parked {
		n.reply(p.m, n.completeFetch(n.now, p))
	}
	clear(parked)
	ls.parked = parked[:0]
}

func (ls *leaderState) expireParked(n *Node, now time.Time) {
	ls.parked = slices.DeleteFunc(ls.parked, func(p *parkedFetch) bool {
		if !now.Before(p.deadline) {
			n.reply(p.m, n.completeFetch(now, p))
			return true
		}
		return false
	})
}

// failParked answers every parked fetch with NOT_LEADER_OR_FOLLOWER when the
// node stops leading, so followers go find the new leader at once.
func (ls *leaderState) failParked(n *Node) {
	for _, p := range ls.parked {
		resp := p.req.ResponseKind().(*kmsg.FetchResponse)
		fp := n.fetchErrorPartition(errNotLeaderOrFollower)
		resp.Topics = []kmsg.FetchResponseTopic{fetchResponseTopic(p.req, fp)}
		n.reply(p.m, resp)
	}
	ls.parked = nil
}

// Append hands records to the leader of epoch. They are written as one
// batch once controller.quorum.append.linger.ms has passed since the first
// of them and a fetch can take them (drainDue), or at once when they fill
// a batch, and offered to the listener once committed. It returns the offset the last record will have. The node
// keeps the slices until it writes them; the caller must not modify them.
func (n *Node) Append(now time.Time, epoch int32, records [][]byte) (int64, error) {
	if err := n.enter(now); err != nil {
		return 0, err
	}
	defer n.exit()
	if n.role != Leader || n.epoch != epoch || n.lead.resignRequested || n.shuttingDown {
		return 0, fmt.Errorf("append in epoch %d: %w (node %d is %v in epoch %d)", epoch, ErrNotLeader, n.id, n.role, n.epoch)
	}
	if len(records) == 0 {
		return 0, fmt.Errorf("append in epoch %d: no records", epoch)
	}
	ls := n.lead
	maxBatch := n.maxBatchBytes()
	for _, r := range records {
		if len(r)+recordOverhead+storage.BatchHeaderSize > maxBatch {
			return 0, fmt.Errorf("append a record of %d bytes: larger than a batch may be (%d bytes)", len(r), maxBatch)
		}
		ls.pendingBytes += len(r) + recordOverhead
	}
	ls.pending = append(ls.pending, records...)
	last := n.log.LogEndOffset() + int64(len(ls.pending)) - 1
	if ls.drainAt.IsZero() {
		ls.drainAt = now.Add(n.cfg.AppendLinger)
	}
	if ls.pendingBytes >= maxBatch {
		ls.drainAt, ls.drainNow = now, true
	}
	if err := n.poll(now); err != nil {
		return 0, fmt.Errorf("raft node %d: append: %w", n.id, err)
	}
	return last, nil
}

// drainDeferMax bounds how long past its linger the leader keeps gathering
// appends while no fetch waits for them (see drainDue).
const drainDeferMax = 2 * time.Millisecond

// drainDue reports whether the accumulated records are to be written now:
// once the linger has passed, if a fetch is parked to take them, they
// fill a batch, the leader is the only voter, or drainDeferMax has passed
// too. In a pull quorum records written while every follower's Fetch is
// in flight go out only with the next Fetch, so until one arrives
// (handleFetchRequest drains first) the leader may as well gather more:
// fewer, larger batches and no added wait. A push leader likewise gathers
// while every follower voter has records in flight, and writes once one
// of them has none (pushWaiting): the answer that emptied its window
// brought the leader here.
func (ls *leaderState) drainDue(n *Node, now time.Time) bool {
	if ls.drainAt.IsZero() || now.Before(ls.drainAt) {
		return false
	}
	return ls.drainNow || len(ls.parked) > 0 || (n.voter && len(n.voterIDs) == 1) ||
		(n.cfg.Replication == Push && ls.pushWaiting(n)) ||
		!now.Before(ls.drainAt.Add(drainDeferMax))
}

// pushWaiting reports whether a follower voter has no records in flight
// from the push leader: records written now go to it at once.
func (ls *leaderState) pushWaiting(n *Node) bool {
	for _, r := range ls.voters {
		if r.id != n.id && r.push != nil && r.push.windowed == 0 {
			return true
		}
	}
	return false
}

// drain writes the accumulated records as batches of at most FetchMaxBytes.
func (ls *leaderState) drain(n *Node, now time.Time) error {
	recs := make([]storage.Record, 0, len(ls.pending))
	size := storage.BatchHeaderSize
	var err error
	write := func() {
		if err == nil && len(recs) > 0 {
			var base, last int64
			if base, last, err = n.log.AppendAsLeader(recs, n.epoch, now.UnixMilli()); err == nil {
				n.leaderWrote(base, last, now)
			}
		}
		recs, size = recs[:0], storage.BatchHeaderSize
	}
	maxBatch := n.maxBatchBytes()
	for _, v := range ls.pending {
		if len(recs) > 0 && size+len(v)+recordOverhead > maxBatch {
			write()
		}
		recs = append(recs, storage.Record{Value: v})
		size += len(v) + recordOverhead
	}
	write()
	ls.pending, ls.pendingBytes, ls.drainAt, ls.drainNow = nil, 0, time.Time{}, false
	if err != nil {
		return fmt.Errorf("append as leader: %w", err)
	}
	ls.onAppend(n, now)
	return nil
}

func (n *Node) handleBeginQuorumEpochRequest(now time.Time, m Message, req *kmsg.BeginQuorumEpochRequest) error {
	resp := req.ResponseKind().(*kmsg.BeginQuorumEpochResponse)
	one := len(req.Topics) == 1 && len(req.Topics[0].Partitions) == 1 &&
		isMetadataPartition(req.Topics[0].Topic, req.Topics[0].Partitions[0].Partition)
	if !n.admit(m, req.ClusterID, one, resp, &resp.ErrorCode) {
		return nil
	}
	p := &req.Topics[0].Partitions[0]
	code, err := n.validateVoterOnly("BeginQuorumEpoch", p.LeaderID, p.LeaderEpoch)
	if code == errNone {
		mark := len(n.events)
		err = n.maybeTransition(now, p.LeaderID, p.LeaderEpoch)
		if err == nil && n.role == Follower && n.leader == p.LeaderID && n.epoch == p.LeaderEpoch {
			n.emitBefore(mark, Event{Kind: EventBeginQuorumEpochReceived, Leader: p.LeaderID})
		}
		if err == nil && !n.validVoterKey(req.Version, req.VoterID, p.VoterDirectoryID) {
			n.logger.Info("BeginQuorumEpoch for another replica", "from", p.LeaderID, "voter", req.VoterID, "directory", DirectoryID(p.VoterDirectoryID))
			code = errInvalidVoterKey
		}
	}
	rp := kmsg.NewBeginQuorumEpochResponseTopicPartition()
	rp.ErrorCode, rp.LeaderID, rp.LeaderEpoch = code, n.leader, n.epoch
	rt := kmsg.NewBeginQuorumEpochResponseTopic()
	rt.Topic = MetadataTopic
	rt.Partitions = []kmsg.BeginQuorumEpochResponseTopicPartition{rp}
	resp.Topics = []kmsg.BeginQuorumEpochResponseTopic{rt}
	n.reply(m, resp)
	return err
}

func (n *Node) handleBeginQuorumEpochResponse(now time.Time, m Message, resp *kmsg.BeginQuorumEpochResponse) (bool, error) {
	if resp.ErrorCode != errNone || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false, nil
	}
	p := &resp.Topics[0].Partitions[0]
	if handled, ok, err := n.handleCommonResponse(now, p.ErrorCode, p.LeaderID, p.LeaderEpoch); handled || err != nil {
		return ok, err
	}
	if p.ErrorCode != errNone {
		return false, nil
	}
	if n.role == Leader {
		for _, r := range n.lead.voters {
			if r.id == m.From {
				r.acked = true
			}
		}
	}
	return true, nil
}
