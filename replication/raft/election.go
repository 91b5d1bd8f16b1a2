package raft

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

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

// won reports whether a majority of the voter set granted. Only voters
// count: a node being removed (participates) campaigns without a vote of
// its own.
func (e *election) won(n *Node) bool {
	votes := 0
	for _, id := range e.granted {
		if n.isVoter(id) {
			votes++
		}
	}
	return votes >= n.majority()
}

// lost reports whether too many voters rejected for a majority to remain.
func (e *election) lost(n *Node) bool {
	return len(e.rejected) > len(n.voterIDs)-n.majority()
}

func (e *election) unrecorded(n *Node) []int32 {
	var out []int32
	for _, v := range n.voterIDs {
		if !slices.Contains(e.granted, v) && !slices.Contains(e.rejected, v) {
			out = append(out, v)
		}
	}
	return out
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
	if total-1 >= 63 || position-1 >= 63 {
		// A list this long would shift the bits away (Kafka's int shift
		// wraps instead); the far successors simply wait the most.
		return n.cfg.ElectionBackoffMax
	}
	base := n.cfg.ElectionBackoffMax >> (total - 1)
	return min(n.cfg.ElectionBackoffMax, base<<(position-1))
}

func (n *Node) pollUnattached(now time.Time) (time.Time, error) {
	if !n.voter && n.cfg.Replication == Push {
		return n.pollPushObserver(now), nil
	}
	if !n.participates() {
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
	if n.shuttingDown {
		// Finish the pre-vote under way, start none (KafkaRaftClient.pollProspective).
		return n.sendVoteRequests(now, time.Time{}), nil
	}
	if !now.Before(n.electionDeadline) || n.election.lost(n) {
		return now, n.loseProspective(now)
	}
	return n.sendVoteRequests(now, n.electionDeadline), nil
}

// pollCandidate runs an election (KafkaRaftClient.pollCandidate). A
// candidate whose vote was rejected stops asking and waits out its election
// timeout; then, as after any timeout, it goes back to Prospective. There is
// no backoff of its own (Kafka 4.1+).
func (n *Node) pollCandidate(now time.Time) (time.Time, error) {
	if n.shuttingDown {
		return n.sendVoteRequests(now, time.Time{}), nil
	}
	if !now.Before(n.electionDeadline) {
		n.logger.Info("election timed out", "epoch", n.epoch, "rejected", n.election.rejected)
		lost := n.election
		if err := n.becomeProspective(now); err != nil {
			return now, err
		}
		n.emitElectionLost(lost, n.epoch, n.electionDeadline)
		return now, nil
	}
	return n.sendVoteRequests(now, n.electionDeadline), nil
}

// sendVoteRequests asks the voters that have not answered, while the
// election can still be won (maybeSendVoteRequests).
func (n *Node) sendVoteRequests(now, wake time.Time) time.Time {
	if n.election.lost(n) {
		return wake
	}
	preVote := n.role == Prospective
	for _, v := range n.election.unrecorded(n) {
		wake = earliest(wake, n.trySend(now, v, func() kmsg.Request { return n.voteRequest(v, preVote) }))
	}
	return wake
}

func (n *Node) voteRequest(to int32, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = VoteVersion
	req.ClusterID = &n.cfg.ClusterID
	req.VoterID = to
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch = n.epoch
	p.CandidateID = n.id
	p.CandidateDirectoryID = n.cfg.DirectoryID
	p.VoterDirectoryID = n.voterDirectory(to)
	p.LastOffsetEpoch = n.lastEpoch()
	p.LastOffset = n.log.LogEndOffset()
	p.PreVote = preVote
	t := kmsg.NewVoteRequestTopic()
	t.Topic = MetadataTopic
	t.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{t}
	return req
}

// validateVoterOnly checks a Vote, BeginQuorumEpoch or EndQuorumEpoch sender
// (KafkaRaftClient.validateVoterOnlyRequest): an old epoch is fenced, a
// negative id invalid. Kafka (dynamic voters) goes on with any other sender;
// with a static voter set kraftlab also answers INVALID_REQUEST to a sender
// or a receiver outside it, and to an epoch that could not be incremented,
// and reports the refusal as EventUnsafe.
func (n *Node) validateVoterOnly(api string, remote, epoch int32) (int16, error) {
	switch {
	case epoch < n.epoch:
		return errFencedLeaderEpoch, nil
	case remote < 0:
		return errInvalidRequest, nil
	case epoch >= maxEpoch:
		return errInvalidRequest, n.unsafe(false, "%s from node %d with epoch %d, which cannot be incremented", api, remote, epoch)
	case n.dynamic():
		// Voter sets differ between replicas while a change spreads:
		// Kafka's dynamic quorum takes these from anyone, and so does a
		// replica that does not know yet that it votes.
	case !n.isVoter(remote):
		return errInvalidRequest, n.unsafe(false, "%s from node %d, not one of the voters %v", api, remote, n.voterIDs)
	case !n.voter:
		return errInvalidRequest, n.unsafe(false, "%s from node %d to node %d, which is not a voter", api, remote, n.id)
	}
	return errNone, nil
}

func (n *Node) handleVoteRequest(now time.Time, m Message, req *kmsg.VoteRequest) error {
	resp := req.ResponseKind().(*kmsg.VoteResponse)
	one := len(req.Topics) == 1 && len(req.Topics[0].Partitions) == 1 &&
		isMetadataPartition(req.Topics[0].Topic, req.Topics[0].Partitions[0].Partition)
	if !n.admit(m, req.ClusterID, one, resp, &resp.ErrorCode) {
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
	if code, err := n.validateVoterOnly("Vote", p.CandidateID, p.CandidateEpoch); code != errNone {
		answer(code, false)
		return err
	}
	if p.CandidateEpoch > n.epoch {
		if err := n.becomeUnattached(now, p.CandidateEpoch); err != nil {
			return err
		}
	}
	if !n.validVoterKey(req.Version, req.VoterID, p.VoterDirectoryID) {
		n.logger.Info("vote request for another replica", "from", p.CandidateID, "voter", req.VoterID, "directory", DirectoryID(p.VoterDirectoryID))
		answer(errInvalidVoterKey, false)
		return nil
	}
	ourEpoch := n.lastEpoch()
	upToDate := p.LastOffsetEpoch > ourEpoch ||
		(p.LastOffsetEpoch == ourEpoch && p.LastOffset >= n.log.LogEndOffset())
	candidateDir := DirectoryID(p.CandidateDirectoryID)
	if req.Version < 1 {
		candidateDir = DirectoryID{}
	}
	granted := n.canGrantVote(p.CandidateID, candidateDir, upToDate, preVote)
	if granted && !preVote && n.voted < 0 && (n.role == Unattached || n.role == Prospective) {
		if err := n.becomeUnattachedVoted(now, p.CandidateID, candidateDir); err != nil {
			return err
		}
	}
	if granted {
		n.emit(Event{Kind: EventVoteGranted, Candidate: p.CandidateID, CandidateEpoch: p.CandidateEpoch, PreVote: preVote})
	}
	n.logger.Debug("vote request", "candidate", p.CandidateID, "epoch", p.CandidateEpoch, "preVote", preVote, "granted", granted)
	answer(errNone, granted)
	return nil
}

// canGrantVote applies each role's rule (KIP-996): a pre-vote only needs an
// up-to-date log, except that a follower that has fetched from its leader in
// the epoch and a leader refuse it; a vote is granted once per epoch, never
// while a leader is known. The vote is for a replica, id and directory: a
// candidate of the voted id with another directory is another replica
// (ElectionState.isVotedCandidate), unless the vote named no directory.
func (n *Node) canGrantVote(candidate int32, dir DirectoryID, upToDate, preVote bool) bool {
	switch n.role {
	case Unattached, Prospective:
		switch {
		case preVote:
			return upToDate
		case n.voted >= 0:
			return n.voted == candidate && (n.votedDir.IsZero() || n.votedDir == dir)
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
		// A resigned leader steps aside for its successor (ResignedState).
		// Its followers keep refusing until their own fetch timers, which
		// EndQuorumEpoch shortened, fire.
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

// emitElectionLost reports an election of epoch that ended without a
// majority; next is Event.NextTry (zero: it follows the leader it knew,
// Event.Leader, until its fetch timeout runs out again).
func (n *Node) emitElectionLost(e *election, epoch int32, next time.Time) {
	n.emit(Event{Kind: EventElectionLost, PreVote: e.preVote, Granted: slices.Clone(e.granted), Rejected: slices.Clone(e.rejected),
		Voters: len(n.voterIDs), Majority: n.majority(), NextTry: next, Leader: n.leader})
	n.events[len(n.events)-1].Epoch = epoch
}
