package raft

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heldAck is an AppendEntries answer that acknowledges records not yet
// durable: it leaves once the log is flushed up to match, as a pull
// follower's next Fetch waits for the flush.
type heldAck struct {
	m     Message
	match int64
}

// releaseAcks sends the held answers whose records the log now holds
// durably.
func (n *Node) releaseAcks() {
	flushed := n.log.LastFlushedOffset()
	k := 0
	for _, a := range n.acks {
		if a.match <= flushed {
			n.outbox = append(n.outbox, a.m)
			continue
		}
		n.acks[k] = a
		k++
	}
	clear(n.acks[k:])
	n.acks = n.acks[:k]
}

// refuseHeldAcks answers the held answers as refusals when the node leaves
// its role, their records not yet durable: a connection answers its
// requests in order, so a request left unanswered would hold back every
// answer after it, and the leader would hear nothing on that connection
// again. NOT_LEADER_OR_FOLLOWER says the node stopped following while it
// wrote them; the leader backs off and carries on from where it was, and
// looks for the match again only if a later push is refused.
func (n *Node) refuseHeldAcks() {
	for _, a := range n.acks {
		if resp, ok := a.m.Response.(*pushrpc.AppendEntriesResponse); ok {
			resp.Success, resp.MatchOffset, resp.ErrorCode = false, -1, errNotLeaderOrFollower
		}
		n.outbox = append(n.outbox, a.m)
	}
	clear(n.acks)
	n.acks = n.acks[:0]
}

// pollPushFollower runs a push follower: it waits for its leader's
// pushes, and starts a pre-vote when none came for a fetch timeout
// (controller.quorum.fetch.timeout.ms, the push side's election timeout).
func (n *Node) pollPushFollower(now time.Time) (time.Time, error) {
	n.releaseAcks()
	if !n.voter {
		return n.pollPushObserver(now), nil
	}
	if n.shuttingDown {
		return time.Time{}, nil
	}
	if !now.Before(n.fetchDeadline) {
		n.logger.Info("no push from the leader", "leader", n.leader, "epoch", n.epoch)
		return now, n.becomeProspective(now)
	}
	return n.fetchDeadline, nil
}

// otherMode reports whether a request belongs to the other replication
// mode: a push node serves no Fetch, FetchSnapshot or BeginQuorumEpoch, a
// pull node none of push's RPCs.
func (n *Node) otherMode(req kmsg.Request) bool {
	switch req.(type) {
	case *kmsg.FetchRequest, *kmsg.FetchSnapshotRequest, *kmsg.BeginQuorumEpochRequest, *kmsg.UpdateRaftVoterRequest:
		return n.cfg.Replication == Push
	case *pushrpc.AppendEntriesRequest, *pushrpc.InstallSnapshotRequest, *pushrpc.ObserveQuorumRequest:
		return n.cfg.Replication != Push
	}
	return false
}

// refuseOtherMode answers a request of the other mode with INVALID_REQUEST:
// a quorum runs one mode, and a node of the other is misconfigured.
func (n *Node) refuseOtherMode(m Message) {
	n.logger.Warn("request of the other replication mode", "from", m.From, "api", pushrpc.NameForKey(m.Request.Key()), "mode", n.cfg.Replication)
	resp := m.Request.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		r.ErrorCode = errInvalidRequest
	case *kmsg.FetchSnapshotResponse:
		r.ErrorCode = errInvalidRequest
	case *kmsg.BeginQuorumEpochResponse:
		r.ErrorCode = errInvalidRequest
	case *kmsg.UpdateRaftVoterResponse:
		r.ErrorCode = errInvalidRequest
	case *pushrpc.AppendEntriesResponse:
		r.ErrorCode, r.LeaderID, r.LeaderEpoch, r.MatchOffset, r.DivergingEpoch = errInvalidRequest, n.leader, n.epoch, -1, pushrpc.EpochEndOffset{Epoch: -1, EndOffset: -1}
	case *pushrpc.InstallSnapshotResponse:
		r.ErrorCode, r.LeaderID, r.LeaderEpoch, r.Position = errInvalidRequest, n.leader, n.epoch, -1
	case *pushrpc.ObserveQuorumResponse:
		r.ErrorCode, r.LeaderID, r.LeaderEpoch = errInvalidRequest, n.leader, n.epoch
	}
	n.reply(m, resp)
}

// acceptPush runs what every push from a leader shares (AppendEntries and
// InstallSnapshot): the epoch check, following the leader it names, and
// resetting the timer that would start an election. It returns the error
// code to answer with, errNone when the push may be applied.
func (n *Node) acceptPush(now time.Time, api string, leader, epoch int32) (int16, error) {
	switch {
	case epoch >= maxEpoch:
		return errInvalidRequest, n.unsafe(false, "%s from node %d with epoch %d, which cannot be incremented", api, leader, epoch)
	case epoch < n.epoch:
		return errFencedLeaderEpoch, nil
	}
	if err := n.maybeTransition(now, leader, epoch); err != nil {
		return errInvalidRequest, err
	}
	if n.role == Prospective && n.leader == leader {
		// The leader it stopped hearing from is alive: the pre-vote is
		// moot (etcd's pre-candidate steps down on its leader's append).
		if err := n.loseProspective(now); err != nil {
			return errUnknownServerError, err
		}
	}
	if n.role != Follower || n.leader != leader {
		return errNotLeaderOrFollower, nil
	}
	n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
	n.fetchedFromLeader = true
	n.observing = true
	return errNone, nil
}

// handleAppendEntriesRequest applies a leader's push (Raft's AppendEntries
// receiver, etcd's handleAppendEntries): if the log holds the leader's
// record before BaseOffset, it keeps the records it already has, cuts a
// conflicting suffix (never below the high watermark) and appends the
// rest, takes the high watermark up to what matches, and answers once the
// records are durable; otherwise it refuses with a hint of where to probe.
func (n *Node) handleAppendEntriesRequest(now time.Time, m Message, req *pushrpc.AppendEntriesRequest) error {
	resp := &pushrpc.AppendEntriesResponse{MatchOffset: -1, DivergingEpoch: pushrpc.EpochEndOffset{Epoch: -1, EndOffset: -1}}
	answer := func(code int16) {
		resp.ErrorCode, resp.LeaderID, resp.LeaderEpoch = code, n.leader, n.epoch
		resp.LogEndOffset = n.log.LogEndOffset()
		n.reply(m, resp)
	}
	switch {
	case !n.validClusterID(req.ClusterID):
		answer(errInconsistentClusterID)
		return nil
	case req.LeaderID < 0 || req.BaseOffset < 0 || req.PrevEpoch < 0 || req.PrevEpoch > req.LeaderEpoch || req.HighWatermark < -1:
		answer(errInvalidRequest)
		return nil
	}
	code, err := n.acceptPush(now, "AppendEntries", req.LeaderID, req.LeaderEpoch)
	if code != errNone {
		answer(code)
		return err
	}
	if !n.matchesAt(req.BaseOffset, req.PrevEpoch) {
		resp.DivergingEpoch, err = n.hintAt(req.BaseOffset, req.PrevEpoch)
		answer(errNone)
		return err
	}
	matched, err := n.appendPushed(now, req)
	if err != nil {
		if errors.Is(err, ErrUnsafe) || errors.Is(err, errBadBatches) {
			answer(errInvalidRequest)
		}
		if errors.Is(err, errBadBatches) {
			n.logger.Warn("bad batches from leader", "from", m.From, "err", err)
			return nil
		}
		return err
	}
	if req.HighWatermark >= 0 {
		n.hwm = max(n.hwm, min(req.HighWatermark, matched))
		n.noteHighWatermark()
	}
	resp.Success, resp.MatchOffset = true, matched
	resp.ErrorCode, resp.LeaderID, resp.LeaderEpoch = errNone, n.leader, n.epoch
	resp.LogEndOffset = n.log.LogEndOffset()
	ack := Message{From: n.id, To: m.From, ID: m.ID, Response: resp}
	if matched > n.log.LastFlushedOffset() {
		n.acks = append(n.acks, heldAck{m: ack, match: matched})
	} else {
		n.outbox = append(n.outbox, ack)
	}
	return nil
}

// matchesAt reports whether the log holds the leader's record before off,
// of epoch prev (Raft's log check). Below the log start it does: the
// snapshot holds committed records, which every leader has.
func (n *Node) matchesAt(off int64, prev int32) bool {
	start := n.log.LogStartOffset()
	switch {
	case off < start:
		return true
	case off == start:
		s, ok := n.snapshotAtStart()
		return start == 0 || (ok && s.Epoch == prev)
	}
	e, end := n.endOffsetForEpoch(prev)
	return e == prev && end >= off
}

// hintAt is where the leader should probe after a refusal at off (etcd's
// findConflictByTerm on the follower): the largest offset at most off
// whose record before it has an epoch at most prev, and that epoch. Every
// offset past it holds a later epoch than prev, so cannot match.
func (n *Node) hintAt(off int64, prev int32) (pushrpc.EpochEndOffset, error) {
	e, end := n.endOffsetForEpoch(prev)
	if end <= off {
		return pushrpc.EpochEndOffset{Epoch: e, EndOffset: end}, nil
	}
	epoch, ok := n.epochBefore(off)
	if !ok {
		return pushrpc.EpochEndOffset{}, fmt.Errorf("read the epoch before offset %d", off)
	}
	return pushrpc.EpochEndOffset{Epoch: epoch, EndOffset: off}, nil
}

// errBadBatches marks pushed records this node cannot take: it answers
// INVALID_REQUEST and keeps its log.
var errBadBatches = errors.New("bad batches")

// appendPushed takes the records of a push whose base matches: it skips
// those the log holds (same offset, same epoch), truncates at the first
// that conflicts and appends from there. It returns how far the log now
// matches the leader's.
func (n *Node) appendPushed(now time.Time, req *pushrpc.AppendEntriesRequest) (int64, error) {
	data := req.Records
	start, leo := n.log.LogStartOffset(), n.log.LogEndOffset()
	matched, from, pos := req.BaseOffset, -1, 0
	for pos < len(data) {
		base, last, epoch, size, err := storage.PeekBatch(data[pos:])
		switch {
		case errors.Is(err, storage.ErrShortBatch):
			// A partial batch at the end is not matched; the leader sends
			// it again.
			data = data[:pos]
		case err != nil:
			return 0, fmt.Errorf("%w: %v", errBadBatches, err)
		case base != matched || last < base:
			return 0, fmt.Errorf("%w: batch [%d, %d] where offset %d was due", errBadBatches, base, last, matched)
		case epoch > req.LeaderEpoch:
			return 0, n.unsafe(false, "leader %d pushed a batch of epoch %d, above its epoch %d", req.LeaderID, epoch, req.LeaderEpoch)
		}
		if err != nil {
			break
		}
		if from < 0 {
			switch {
			case last < start:
				// Inside the snapshot.
			case base < start:
				return 0, fmt.Errorf("%w: batch [%d, %d] straddles the log start %d", errBadBatches, base, last, start)
			case last < leo && n.holds(epoch, last):
			case base < leo:
				if err := n.truncateConflict(base, leo); err != nil {
					return 0, err
				}
				from = pos
			default:
				from = pos
			}
		}
		matched = last + 1
		pos += size
	}
	if from < 0 {
		return matched, nil
	}
	before := n.log.LogEndOffset()
	if err := n.log.AppendAsFollower(data[from:pos]); err != nil {
		if storage.FaultOf(err) != storage.NoFault {
			return 0, fmt.Errorf("append pushed batches: %w", err)
		}
		return 0, fmt.Errorf("%w: %v", errBadBatches, err)
	}
	if err := n.votersAppended(data[from:pos]); err != nil {
		return 0, err
	}
	if n.fetchingSnapshot != nil {
		// The leader streams records again: the snapshot it was sending
		// is not needed.
		_ = n.fetchingSnapshot.Abort()
		n.fetchingSnapshot = nil
	}
	n.followerAppended(n.log.LogEndOffset()-before, now)
	return matched, nil
}

// holds reports whether the log holds the record at off in epoch: epochs
// start at one offset for everyone, so it is then the leader's record.
func (n *Node) holds(epoch int32, off int64) bool {
	e, end := n.log.EndOffsetForEpoch(epoch)
	return e == epoch && end > off
}

// truncateConflict cuts the log at off, where it conflicts with the
// leader's, never below the high watermark.
func (n *Node) truncateConflict(off, leo int64) error {
	if off < n.hwm {
		return n.unsafe(true, "leader %d pushed records conflicting at offset %d, below the high watermark %d", n.leader, off, n.hwm)
	}
	n.logger.Info("truncating conflicting records", "to", off, "from", leo)
	if err := n.log.TruncateTo(off); err != nil {
		return fmt.Errorf("truncate to %d: %w", off, err)
	}
	n.votersTruncated(off)
	n.emit(Event{Kind: EventTruncated, Leader: n.leader, FromOffset: leo, ToOffset: off})
	return nil
}
