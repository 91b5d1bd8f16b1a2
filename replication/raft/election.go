package raft

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// retryBackoffBase is KafkaRaftClient.RETRY_BACKOFF_BASE_MS, the unit of the
// binary exponential election backoff.
const retryBackoffBase = 100 * time.Millisecond

// election tallies a pre-vote or a vote (Kafka's EpochElection).
type election struct {
	preVote  bool
	granted  []int32
	rejected []int32
}

func newElection(n *Node, preVote bool) *election {
	return &election{preVote: preVote, granted: []int32{n.id}}
}

func (e *election) record(id int32, granted bool) {
	if slices.Contains(e.granted, id) || slices.Contains(e.rejected, id) {
		return
	}
	if granted {
		e.granted = append(e.granted, id)
	} else {
		e.rejected = append(e.rejected, id)
	}
}

func (e *election) won(n *Node) bool { return len(e.granted) >= n.majority() }

// lost reports whether too many voters rejected for a majority to remain.
func (e *election) lost(n *Node) bool {
	return len(e.rejected) > len(n.cfg.Voters)-n.majority()
}

func (e *election) unrecorded(n *Node) []int32 {
	var out []int32
	for _, v := range n.cfg.Voters {
		if !slices.Contains(e.granted, v) && !slices.Contains(e.rejected, v) {
			out = append(out, v)
		}
	}
	return out
}

// binaryExponentialBackoff is the pause after a lost election:
// min(100ms * random[0, 2^retries), controller.quorum.election.backoff.max.ms).
func (n *Node) binaryExponentialBackoff() time.Duration {
	shift := min(20, max(n.retries, 1)-1)
	d := retryBackoffBase * time.Duration(n.rng.IntN(2<<shift))
	return min(d, n.cfg.ElectionBackoffMax)
}

// strictExponentialBackoff is how long the successor at position waits after
// an EndQuorumEpoch: the first at once, the others the backoff maximum
// halved per position ahead of them.
func (n *Node) strictExponentialBackoff(position, total int) time.Duration {
	if position == 0 {
		return 0
	}
	if position < 0 || position >= total {
		return n.cfg.ElectionBackoffMax
	}
	base := n.cfg.ElectionBackoffMax >> (total - 1)
	return min(n.cfg.ElectionBackoffMax, base<<(position-1))
}

func (n *Node) pollUnattached(now time.Time) (time.Time, error) {
	if !n.voter {
		return n.fetchFromAnyVoter(now), nil
	}
	if n.shuttingDown {
		return time.Time{}, nil
	}
	if !now.Before(n.electionDeadline) {
		return now, n.becomeProspective(now)
	}
	return n.electionDeadline, nil
}

func (n *Node) pollProspective(now time.Time) (time.Time, error) {
	if !now.Before(n.electionDeadline) || n.election.lost(n) {
		return now, n.loseProspective(now)
	}
	wake := n.electionDeadline
	for _, v := range n.election.unrecorded(n) {
		wake = earliest(wake, n.trySend(now, v, func() kmsg.Request { return n.voteRequest(v, true) }))
	}
	return wake, nil
}

func (n *Node) pollCandidate(now time.Time) (time.Time, error) {
	if !n.backoffUntil.IsZero() {
		if n.shuttingDown {
			return time.Time{}, nil
		}
		if now.Before(n.backoffUntil) {
			return n.backoffUntil, nil
		}
		return now, n.becomeProspective(now)
	}
	if !now.Before(n.electionDeadline) || n.election.lost(n) {
		// Back off at once when the vote is lost rather than waiting out
		// the election timeout; the randomness breaks ties between
		// candidates, the exponent limits epoch churn.
		n.backoffUntil = now.Add(n.binaryExponentialBackoff())
		n.logger.Info("election lost, backing off", "epoch", n.epoch, "until", n.backoffUntil, "rejected", n.election.rejected)
		return n.backoffUntil, nil
	}
	wake := n.electionDeadline
	for _, v := range n.election.unrecorded(n) {
		wake = earliest(wake, n.trySend(now, v, func() kmsg.Request { return n.voteRequest(v, false) }))
	}
	return wake, nil
}

func (n *Node) voteRequest(to int32, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = VoteVersion
	req.ClusterID = &n.cfg.ClusterID
	req.VoterID = to
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch = n.epoch
	p.CandidateID = n.id
	p.LastOffsetEpoch = n.lastEpoch()
	p.LastOffset = n.log.LogEndOffset()
	p.PreVote = preVote
	t := kmsg.NewVoteRequestTopic()
	t.Topic = MetadataTopic
	t.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{t}
	return req
}

// validateVoterOnly checks a Vote, BeginQuorumEpoch or EndQuorumEpoch sender.
func (n *Node) validateVoterOnly(remote, epoch int32) int16 {
	switch {
	case epoch < n.epoch:
		return errFencedLeaderEpoch
	case remote < 0:
		return errInvalidRequest
	case !n.voter || !n.cfg.isVoter(remote):
		return errInconsistentVoterSet
	}
	return errNone
}

func (n *Node) handleVoteRequest(now time.Time, m Message, req *kmsg.VoteRequest) error {
	resp := req.ResponseKind().(*kmsg.VoteResponse)
	if !n.validClusterID(req.ClusterID) {
		resp.ErrorCode = errInconsistentClusterID
		n.reply(m, resp)
		return nil
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = errInvalidRequest
		n.reply(m, resp)
		return nil
	}
	p := &req.Topics[0].Partitions[0]
	preVote := req.Version >= 2 && p.PreVote
	answer := func(code int16, granted bool) {
		rp := kmsg.NewVoteResponseTopicPartition()
		rp.ErrorCode = code
		rp.LeaderID = n.leader
		rp.LeaderEpoch = n.epoch
		rp.VoteGranted = granted
		rt := kmsg.NewVoteResponseTopic()
		rt.Topic = MetadataTopic
		rt.Partitions = []kmsg.VoteResponseTopicPartition{rp}
		resp.Topics = []kmsg.VoteResponseTopic{rt}
		n.reply(m, resp)
	}
	// A pre-vote does not bump the epoch, so its last epoch may equal it.
	illegalEpoch := p.LastOffsetEpoch >= p.CandidateEpoch
	if preVote {
		illegalEpoch = p.LastOffsetEpoch > p.CandidateEpoch
	}
	if p.LastOffset < 0 || p.LastOffsetEpoch < 0 || illegalEpoch {
		answer(errInvalidRequest, false)
		return nil
	}
	if code := n.validateVoterOnly(p.CandidateID, p.CandidateEpoch); code != errNone {
		answer(code, false)
		return nil
	}
	if p.CandidateEpoch > n.epoch {
		if err := n.becomeUnattached(now, p.CandidateEpoch); err != nil {
			return err
		}
	}
	ourEpoch := n.lastEpoch()
	upToDate := p.LastOffsetEpoch > ourEpoch ||
		(p.LastOffsetEpoch == ourEpoch && p.LastOffset >= n.log.LogEndOffset())
	granted := n.canGrantVote(p.CandidateID, upToDate, preVote)
	if granted && !preVote && n.voted < 0 {
		if err := n.becomeUnattachedVoted(now, p.CandidateID); err != nil {
			return err
		}
	}
	n.logger.Debug("vote request", "candidate", p.CandidateID, "epoch", p.CandidateEpoch, "preVote", preVote, "granted", granted)
	answer(errNone, granted)
	return nil
}

// canGrantVote applies each role's rule (KIP-996): a pre-vote only needs an
// up-to-date log, except that a follower still hearing from its leader and a
// leader refuse it; a vote is granted once per epoch, never while a leader
// is known.
func (n *Node) canGrantVote(candidate int32, upToDate, preVote bool) bool {
	switch n.role {
	case Unattached, Prospective:
		switch {
		case preVote:
			return upToDate
		case n.voted >= 0:
			return n.voted == candidate
		case n.leader >= 0:
			return false
		default:
			return upToDate
		}
	case Candidate:
		return preVote && upToDate
	case Follower:
		return preVote && !n.fetchedFromLeader && upToDate
	case Resigned:
		// A resigned leader steps aside for its successor: refusing the
		// pre-vote would let one slow EndQuorumEpoch cost the handover an
		// election backoff (Kafka's ResignedState grants it too).
		return preVote && upToDate
	default: // Leader
		return false
	}
}

func (n *Node) handleVoteResponse(now time.Time, m Message, c *connection, resp *kmsg.VoteResponse) (bool, error) {
	if resp.ErrorCode != errNone {
		n.logger.Warn("vote response error", "from", m.From, "error", ErrorName(resp.ErrorCode))
		return false, nil
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false, nil
	}
	p := &resp.Topics[0].Partitions[0]
	if handled, ok, err := n.handleCommonResponse(now, p.ErrorCode, p.LeaderID, p.LeaderEpoch); handled || err != nil {
		return ok, err
	}
	if p.ErrorCode != errNone {
		n.logger.Warn("vote response error", "from", m.From, "error", ErrorName(p.ErrorCode))
		return false, nil
	}
	switch {
	case n.role == Prospective && c.preVote:
		n.election.record(m.From, p.VoteGranted)
		if n.election.won(n) {
			return true, n.becomeCandidate(now)
		}
	case n.role == Candidate && !c.preVote:
		n.election.record(m.From, p.VoteGranted)
		if n.election.won(n) {
			return true, n.becomeLeader(now)
		}
	}
	return true, nil
}
