package raft

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// connection is the node's view of its requests to one destination (Kafka's
// RequestManager.ConnectionState): at most one in flight, a request timeout,
// and a retry backoff after a failure.
type connection struct {
	inflight     uint64 // ID of the request in flight, 0 for none
	sentAt       time.Time
	backoffUntil time.Time
	preVote      bool // the request in flight is a pre-vote
}

func (n *Node) conn(id int32) *connection {
	c := n.conns[id]
	if c == nil {
		c = &connection{}
		n.conns[id] = c
	}
	return c
}

// ready reports whether a request may be sent to the destination now, and
// if not, when it may.
func (n *Node) ready(now time.Time, id int32) (bool, time.Time) {
	c := n.conns[id]
	if c == nil {
		return true, time.Time{}
	}
	if now.Before(c.backoffUntil) {
		return false, c.backoffUntil
	}
	if c.inflight != 0 {
		if timeout := c.sentAt.Add(n.cfg.RequestTimeout); now.Before(timeout) {
			return false, timeout
		}
	}
	return true, time.Time{}
}

// requestTimedOut reports whether the request in flight to id has timed out.
func (n *Node) requestTimedOut(now time.Time, id int32) bool {
	c := n.conns[id]
	return c != nil && c.inflight != 0 && !now.Before(c.sentAt.Add(n.cfg.RequestTimeout))
}

func (n *Node) backingOff(now time.Time, id int32) bool {
	c := n.conns[id]
	return c != nil && now.Before(c.backoffUntil)
}

// trySend sends the request build returns to the destination if the
// connection is ready, and returns when the node must look again.
func (n *Node) trySend(now time.Time, to int32, build func() kmsg.Request) time.Time {
	if ok, wait := n.ready(now, to); !ok {
		return wait
	}
	req := build()
	n.nextID++
	c := n.conn(to)
	c.inflight, c.sentAt = n.nextID, now
	c.preVote = false
	if v, ok := req.(*kmsg.VoteRequest); ok && len(v.Topics) == 1 && len(v.Topics[0].Partitions) == 1 {
		c.preVote = v.Topics[0].Partitions[0].PreVote
	}
	n.outbox = append(n.outbox, Message{From: n.id, To: to, ID: n.nextID, Request: req})
	return c.sentAt.Add(n.cfg.RequestTimeout)
}

// reply queues the response to an inbound request.
func (n *Node) reply(m Message, resp kmsg.Response) {
	n.outbox = append(n.outbox, Message{From: n.id, To: m.From, ID: m.ID, Response: resp})
}

func (n *Node) validClusterID(id *string) bool { return id == nil || *id == n.cfg.ClusterID }

// admit is the preamble every request handler shares: the request must name
// this cluster (or none) and exactly one partition, the metadata log's.
// Otherwise it is answered at once with resp, its top-level error code set
// through code to INCONSISTENT_CLUSTER_ID or INVALID_REQUEST, and admit
// returns false.
func (n *Node) admit(m Message, clusterID *string, onePartition bool, resp kmsg.Response, code *int16) bool {
	switch {
	case !n.validClusterID(clusterID):
		*code = errInconsistentClusterID
	case !onePartition:
		*code = errInvalidRequest
	default:
		return true
	}
	n.reply(m, resp)
	return false
}

// isMetadataPartition reports whether a request names the quorum's one
// partition.
func isMetadataPartition(topic string, partition int32) bool {
	return topic == MetadataTopic && partition == 0
}

func (n *Node) handleRequest(now time.Time, m Message) error {
	if n.otherMode(m.Request) {
		n.refuseOtherMode(m)
		return nil
	}
	switch req := m.Request.(type) {
	case *pushrpc.AppendEntriesRequest:
		return n.handleAppendEntriesRequest(now, m, req)
	case *pushrpc.InstallSnapshotRequest:
		return n.handleInstallSnapshotRequest(now, m, req)
	case *pushrpc.ObserveQuorumRequest:
		n.handleObserveQuorumRequest(now, m, req)
	case *kmsg.FetchRequest:
		return n.handleFetchRequest(now, m, req)
	case *kmsg.FetchSnapshotRequest:
		return n.handleFetchSnapshotRequest(now, m, req)
	case *kmsg.VoteRequest:
		return n.handleVoteRequest(now, m, req)
	case *kmsg.BeginQuorumEpochRequest:
		return n.handleBeginQuorumEpochRequest(now, m, req)
	case *kmsg.EndQuorumEpochRequest:
		return n.handleEndQuorumEpochRequest(now, m, req)
	case *kmsg.DescribeQuorumRequest:
		n.reply(m, n.describeQuorum(now, req))
	case *kmsg.UpdateRaftVoterRequest:
		return n.handleUpdateRaftVoterRequest(now, m, req)
	default:
		return fmt.Errorf("unsupported request %s", pushrpc.NameForKey(m.Request.Key()))
	}
	return nil
}

// handleResponse routes a response, or a failure, of a request the node sent.
// Responses to requests no longer in flight (timed out and replaced, or sent
// in an earlier role) are ignored.
func (n *Node) handleResponse(now time.Time, m Message) error {
	if n.isPushAnswer(m) {
		return n.handlePushAnswer(now, m)
	}
	c := n.conns[m.From]
	if c == nil || c.inflight == 0 || c.inflight != m.ID {
		return nil
	}
	c.inflight = 0
	if m.Err != nil {
		n.logger.Debug("request failed", "to", m.From, "err", m.Err)
		c.backoffUntil = now.Add(n.cfg.RetryBackoff)
		return nil
	}
	var ok bool
	var err error
	switch resp := m.Response.(type) {
	case *kmsg.FetchResponse:
		ok, err = n.handleFetchResponse(now, m, resp)
	case *kmsg.FetchSnapshotResponse:
		ok, err = n.handleFetchSnapshotResponse(now, m, resp)
	case *kmsg.VoteResponse:
		ok, err = n.handleVoteResponse(now, m, c, resp)
	case *kmsg.BeginQuorumEpochResponse:
		ok, err = n.handleBeginQuorumEpochResponse(now, m, resp)
	case *kmsg.EndQuorumEpochResponse:
		ok, err = n.handleEndQuorumEpochResponse(now, m, resp)
	case *pushrpc.ObserveQuorumResponse:
		ok, err = n.handleObserveQuorumResponse(now, m, resp)
	case *kmsg.UpdateRaftVoterResponse:
		ok, err = n.handleUpdateRaftVoterResponse(now, m, resp)
	default:
		return fmt.Errorf("unexpected response %s", pushrpc.NameForKey(m.Response.Key()))
	}
	if !ok {
		// c may belong to a role the handler left; then this is a no-op.
		c.backoffUntil = now.Add(n.cfg.RetryBackoff)
	}
	return err
}

// handleCommonResponse applies what every response says about epochs and
// leaders (KafkaRaftClient.maybeHandleCommonResponse). handled means the
// caller must stop; ok whether the exchange succeeded (false backs off).
func (n *Node) handleCommonResponse(now time.Time, code int16, leader, epoch int32) (handled, ok bool, err error) {
	switch {
	case epoch >= maxEpoch:
		return true, false, n.unsafe(false, "response from a peer naming epoch %d, which cannot be incremented", epoch)
	case code == errUnknownLeaderEpoch:
		// The peer is behind this node's epoch (an observer that left a
		// resigned leadership gets there first): asking it again at once
		// would only spin until it learns of the epoch, so back off.
		return true, false, nil
	case epoch < n.epoch:
		// We know a later epoch; the response is stale.
		return true, true, nil
	case epoch > n.epoch || code == errFencedLeaderEpoch || code == errNotLeaderOrFollower:
		before := n.transitions
		if err := n.maybeTransition(now, leader, epoch); err != nil {
			return true, false, err
		}
		// Without news, retrying at once would only spin: back off.
		return true, n.transitions != before, nil
	case epoch == n.epoch && leader >= 0 && leader != n.id && n.leader < 0:
		if err := n.maybeTransition(now, leader, epoch); err != nil {
			return true, false, err
		}
		// An observer learns the leader and takes the records of the same
		// response.
		return code != errNone, true, nil
	case code == errInvalidVoterKey:
		// The request was for another directory of that id (a voter that
		// lost its disk): nothing to learn, and asking again at once (a
		// leader re-sends BeginQuorumEpoch to a voter that has not
		// fetched) would get the same answer at once: back off.
		n.logger.Info("peer is not the voter the request was for", "error", ErrorName(code))
		return true, false, nil
	case code == errBrokerNotAvailable || code == errInconsistentVoterSet ||
		code == errInvalidRequest || code == errInconsistentClusterID:
		n.logger.Warn("peer refused request", "error", ErrorName(code))
		return true, false, nil
	}
	return false, false, nil
}

// maybeTransition follows what a request or response says about the leader
// of an epoch: a higher epoch moves the node there, a leader of the current
// epoch it did not know makes it a follower.
func (n *Node) maybeTransition(now time.Time, leader, epoch int32) error {
	if epoch >= maxEpoch {
		return n.unsafe(false, "told of epoch %d, which cannot be incremented", epoch)
	}
	if leader >= 0 && !n.dynamic() && !n.isVoter(leader) {
		return n.unsafe(false, "told that node %d leads epoch %d, but it is not one of the voters %v", leader, epoch, n.voterIDs)
	}
	if !n.consistentLeader(epoch, leader) {
		// Kafka's maybeTransition throws IllegalStateException here.
		return n.unsafe(true, "told that node %d leads epoch %d, but node %d (%v) knows leader %d (persisted %d)",
			leader, epoch, n.id, n.role, n.leader, n.persisted.leader)
	}
	switch {
	case epoch > n.epoch && leader >= 0:
		return n.becomeFollower(now, epoch, leader)
	case epoch > n.epoch:
		return n.becomeUnattached(now, epoch)
	case epoch == n.epoch && leader >= 0 && leader != n.id && n.leader < 0:
		return n.becomeFollower(now, epoch, leader)
	}
	return nil
}

// consistentLeader checks news of a leader against what the node knows:
// two leaders in one epoch would break Raft's safety.
func (n *Node) consistentLeader(epoch, leader int32) bool {
	if leader < 0 || epoch < n.epoch {
		return true
	}
	if epoch > n.epoch {
		return leader != n.id
	}
	known := n.leader
	if n.persisted.epoch == epoch && n.persisted.leader >= 0 {
		known = n.persisted.leader
	}
	return known < 0 || known == leader
}

// fetchFromAnyVoter sends a Fetch to a random ready voter, for a node
// looking for the leader (maybeSendFetchToAnyBootstrap: with a static voter
// set the bootstrap servers are the voters).
func (n *Node) fetchFromAnyVoter(now time.Time) time.Time {
	if n.participates() && n.NeedsFlush() {
		// A voter's Fetch acknowledges its log; not before it is durable.
		return time.Time{}
	}
	return n.sendToAnyVoter(now, func() kmsg.Request { return n.fetchRequest() })
}

// sendToAnyVoter sends the request build returns to a random ready voter,
// one such request at a time (RequestManager.findReadyVoter).
func (n *Node) sendToAnyVoter(now time.Time, build func() kmsg.Request) time.Time {
	var candidates []int32
	var wake time.Time
	for _, v := range n.fetchTargets() {
		if v == n.id {
			continue
		}
		ok, wait := n.ready(now, v)
		if ok {
			candidates = append(candidates, v)
			continue
		}
		if c := n.conns[v]; c.inflight != 0 && now.Before(c.sentAt.Add(n.cfg.RequestTimeout)) {
			return wait
		}
		wake = earliest(wake, wait)
	}
	if len(candidates) == 0 {
		return wake
	}
	to := candidates[n.rng.IntN(len(candidates))]
	return n.trySend(now, to, build)
}
