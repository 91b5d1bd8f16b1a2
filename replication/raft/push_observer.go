package raft

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pollPushObserver runs a push observer. The leader pushes to the voters
// it is configured with, but learns of an observer only when asked: the
// observer sends ObserveQuorum to its leader until a push or a yes comes,
// and to any voter while it knows no leader or its leader has gone quiet
// for a fetch timeout, as a pull observer fetches from any voter then.
func (n *Node) pollPushObserver(now time.Time) time.Time {
	if n.role == Follower && now.Before(n.fetchDeadline) {
		if n.observing {
			return n.fetchDeadline
		}
		return earliest(n.fetchDeadline, n.trySend(now, n.leader, n.observeRequest))
	}
	n.observing = false
	return n.sendToAnyVoter(now, n.observeRequest)
}

func (n *Node) observeRequest() kmsg.Request {
	return &pushrpc.ObserveQuorumRequest{
		ClusterID:    &n.cfg.ClusterID,
		ReplicaID:    n.id,
		LogEndOffset: n.log.LogEndOffset(),
		LastEpoch:    n.lastEpoch(),
	}
}

// handleObserveQuorumResponse follows the leader an answer names: a yes
// from the leader means it pushes from now on; another voter's naming of
// the leader sends the next ObserveQuorum there, giving the leader a fetch
// timeout to start pushing.
func (n *Node) handleObserveQuorumResponse(now time.Time, m Message, resp *pushrpc.ObserveQuorumResponse) (bool, error) {
	_, ok, err := n.handleCommonResponse(now, resp.ErrorCode, resp.LeaderID, resp.LeaderEpoch)
	if err != nil || n.role != Follower || resp.LeaderEpoch != n.epoch || resp.LeaderID != n.leader {
		return ok, err
	}
	if m.From == n.leader {
		if resp.ErrorCode != errNone {
			return false, nil
		}
		n.observing = true
	} else {
		n.observing = false
	}
	n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
	return true, nil
}

// handleObserveQuorumRequest registers an observer with the leader, which
// then pushes to it from where its log may match; any other node names
// the leader it knows.
func (n *Node) handleObserveQuorumRequest(now time.Time, m Message, req *pushrpc.ObserveQuorumRequest) {
	code := errNone
	switch {
	case !n.validClusterID(req.ClusterID):
		code = errInconsistentClusterID
	case req.ReplicaID < 0 || n.isVoter(req.ReplicaID) || req.LogEndOffset < 0 || req.LastEpoch < 0:
		// Voters are pushed to anyway; only an observer asks.
		code = errInvalidRequest
	case n.role != Leader:
		code = errNotLeaderOrFollower
	default:
		n.lead.observe(n, req, now)
	}
	n.reply(m, &pushrpc.ObserveQuorumResponse{ErrorCode: code, LeaderID: n.leader, LeaderEpoch: n.epoch})
}

// observe starts (or restarts) pushing to an observer from where its log
// may match the leader's, judged as a Fetch from its log end would be.
func (ls *leaderState) observe(n *Node, req *pushrpc.ObserveQuorumRequest, now time.Time) {
	r := ls.find(req.ReplicaID)
	if r == nil {
		r = ls.replica(n, req.ReplicaID, DirectoryID{}, now)
		n.logger.Info("observer joined", "observer", req.ReplicaID)
	}
	r.lastFetch = maxTime(r.lastFetch, now)
	if r.push == nil {
		r.push = newProgress(0)
	}
	next := min(req.LogEndOffset, n.log.LogEndOffset())
	switch kind, _, end := n.validateOffsetAndEpoch(req.LogEndOffset, req.LastEpoch); kind {
	case fetchDiverging:
		next = min(end, next)
	case fetchSnapshot:
		// From the start: below the log start, the snapshot goes first.
		next = 0
	}
	r.push.becomeProbe(next)
}
