package raft

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// resignedInfo is what a resigned leader keeps: the successors it names and
// the voters that have not yet acknowledged its EndQuorumEpoch.
type resignedInfo struct {
	successors []int32
	unacked    []int32
	// reported: EventEndQuorumEpochSent is out.
	reported bool
}

func (n *Node) pollResigned(now time.Time) (time.Time, error) {
	var wake time.Time
	if !n.resign.reported && len(n.resign.unacked) > 0 {
		n.resign.reported = true
		n.emit(Event{Kind: EventEndQuorumEpochSent, Leader: n.id, Successors: slices.Clone(n.resign.successors)})
	}
	for _, v := range n.resign.unacked {
		wake = earliest(wake, n.trySend(now, v, func() kmsg.Request { return n.endQuorumEpochRequest() }))
	}
	if n.shuttingDown {
		return wake, nil
	}
	if !now.Before(n.electionDeadline) {
		// No successor showed up: take part in elections again, in the next
		// epoch, so that no Fetch answer names this node leader of its own
		// epoch again (pollResigned). The expired timer carries over: the
		// node is Prospective on its next poll.
		epoch, err := n.nextEpoch()
		if err != nil {
			return wake, err
		}
		n.logger.Info("unattached after resigning", "epoch", epoch)
		return now, n.becomeUnattached(now, epoch)
	}
	return earliest(wake, n.electionDeadline), nil
}

func (n *Node) endQuorumEpochRequest() *kmsg.EndQuorumEpochRequest {
	req := kmsg.NewPtrEndQuorumEpochRequest()
	req.Version = EndQuorumEpochVersion
	req.ClusterID = &n.cfg.ClusterID
	p := kmsg.NewEndQuorumEpochRequestTopicPartition()
	p.LeaderID = n.id
	p.LeaderEpoch = n.epoch
	for _, s := range n.resign.successors {
		c := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
		c.CandidateID = s
		c.CandidateDirectoryID = n.voterDirectory(s)
		p.PreferredCandidates = append(p.PreferredCandidates, c)
	}
	p.PreferredSuccessors = slices.Clone(n.resign.successors)
	t := kmsg.NewEndQuorumEpochRequestTopic()
	t.Topic = MetadataTopic
	t.Partitions = []kmsg.EndQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.EndQuorumEpochRequestTopic{t}
	return req
}

func (n *Node) handleEndQuorumEpochRequest(now time.Time, m Message, req *kmsg.EndQuorumEpochRequest) error {
	resp := req.ResponseKind().(*kmsg.EndQuorumEpochResponse)
	one := len(req.Topics) == 1 && len(req.Topics[0].Partitions) == 1 &&
		isMetadataPartition(req.Topics[0].Topic, req.Topics[0].Partitions[0].Partition)
	if !n.admit(m, req.ClusterID, one, resp, &resp.ErrorCode) {
		return nil
	}
	p := &req.Topics[0].Partitions[0]
	code, err := n.validateVoterOnly("EndQuorumEpoch", p.LeaderID, p.LeaderEpoch)
	if code == errNone {
		mark := len(n.events)
		err = n.maybeTransition(now, p.LeaderID, p.LeaderEpoch)
		if err == nil && n.role == Follower && n.leader == p.LeaderID {
			successors := p.PreferredSuccessors
			position := slices.Index(successors, n.id)
			if req.Version >= 1 {
				// Candidates are named by id and directory id: a node of
				// that id with another directory is not the one meant.
				successors = make([]int32, 0, len(p.PreferredCandidates))
				position = -1
				for i, c := range p.PreferredCandidates {
					successors = append(successors, c.CandidateID)
					if position < 0 && n.validVoterKey(req.Version, c.CandidateID, c.CandidateDirectoryID) && c.CandidateID == n.id {
						position = i
					}
				}
			}
			n.emitBefore(mark, Event{Kind: EventEndQuorumEpochReceived, Leader: p.LeaderID, Successors: slices.Clone(successors)})
			if position < 0 {
				position = len(successors)
			}
			// The most caught-up successor stands at once, the others later
			// by their position, so the best one most likely wins. Only the
			// fetch timer changes (FollowerState.overrideFetchTimeout): a
			// follower that fetched from the leader still refuses pre-votes
			// until the timer fires; the resigned leader grants them.
			n.fetchDeadline = now.Add(n.strictExponentialBackoff(position, len(successors)))
			n.logger.Info("leader resigned", "leader", p.LeaderID, "epoch", p.LeaderEpoch, "position", position)
		}
	}
	rp := kmsg.NewEndQuorumEpochResponseTopicPartition()
	rp.ErrorCode, rp.LeaderID, rp.LeaderEpoch = code, n.leader, n.epoch
	rt := kmsg.NewEndQuorumEpochResponseTopic()
	rt.Topic = MetadataTopic
	rt.Partitions = []kmsg.EndQuorumEpochResponseTopicPartition{rp}
	resp.Topics = []kmsg.EndQuorumEpochResponseTopic{rt}
	n.reply(m, resp)
	return err
}

func (n *Node) handleEndQuorumEpochResponse(now time.Time, m Message, resp *kmsg.EndQuorumEpochResponse) (bool, error) {
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
	if n.role == Resigned {
		n.resign.unacked = slices.DeleteFunc(n.resign.unacked, func(id int32) bool { return id == m.From })
	}
	return true, nil
}
