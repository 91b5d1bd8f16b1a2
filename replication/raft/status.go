package raft

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Status is a snapshot of a node's state, for views like the TUI and
// `kraftlab status`.
type Status struct {
	NodeID int32
	Voter  bool
	// Voters are the ids of the voter set in force on this node: the
	// latest VotersRecord in its log, committed or not, or the static
	// voters.
	Voters []int32
	// KRaftVersion is the kraft.version the node's log finalized.
	KRaftVersion KRaftVersion
	Role         Role
	Epoch        int32
	LeaderID     int32 // -1 while unknown
	VotedID      int32 // -1 for none
	// HighWatermark is what the node publishes: for a leader, its epoch's
	// high watermark (-1 until the epoch's first commit); -1 for a resigned
	// leader; for others, the one they learned.
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
	FlushedOffset  int64
	// LatestSnapshot is valid when HasSnapshot.
	LatestSnapshot SnapshotID
	HasSnapshot    bool
	// AppliedOffset is the next offset the listener will be handed.
	AppliedOffset int64
	ShuttingDown  bool
	// FetchDeadline is when a following voter's fetch timer
	// (controller.quorum.fetch.timeout.ms) runs out unless a fetch from
	// its leader succeeds (or, under push, a push from it arrives) first:
	// it then starts an election. Zero on other nodes.
	FetchDeadline time.Time
	// Replicas is the leader's view of every voter and of the observers
	// that fetched in the last five minutes; nil on other nodes.
	Replicas []ReplicaStatus
}

// ReplicaStatus is the leader's view of one replica.
type ReplicaStatus struct {
	NodeID int32
	Voter  bool
	// DirectoryID is a voter's directory id in the voter set, an
	// observer's the one its fetches carry; zero in a static quorum.
	DirectoryID DirectoryID
	// LogEndOffset is the offset of its last fetch, -1 before any; under
	// push, how far its log is known to match the leader's.
	LogEndOffset int64
	// LastFetch is its last fetch, under push its last answer.
	LastFetch time.Time
	// LastCaughtUp is when it last held everything the leader had.
	LastCaughtUp time.Time
	// FetchParked: a Fetch from it waits in the leader's purgatory.
	FetchParked bool
	// Push is where a push leader stands with it: probing, replicating
	// or snapshotting; "" under pull.
	Push string
	// InFlight counts the push leader's requests to it not yet answered
	// (nor timed out), heartbeats included.
	InFlight int
}

// Status returns the node's current state.
func (n *Node) Status() Status {
	s := n.Summary()
	s.Replicas = n.Replicas()
	return s
}

// Summary is Status without Replicas, for callers that look at the node
// after every step and want the leader's per-replica view far less often:
// building that view allocates.
func (n *Node) Summary() Status {
	s := Status{
		NodeID:         n.id,
		Voter:          n.voter,
		Voters:         slices.Clone(n.voterIDs),
		KRaftVersion:   n.history.kraftVersion(),
		Role:           n.role,
		Epoch:          n.epoch,
		LeaderID:       n.leader,
		VotedID:        n.voted,
		HighWatermark:  n.highWatermark(),
		LogStartOffset: n.log.LogStartOffset(),
		LogEndOffset:   n.log.LogEndOffset(),
		FlushedOffset:  n.log.LastFlushedOffset(),
		AppliedOffset:  n.listenerNext,
		ShuttingDown:   n.shuttingDown,
	}
	s.LatestSnapshot, s.HasSnapshot = n.log.LatestSnapshot()
	if n.role == Follower && n.participates() {
		s.FetchDeadline = n.fetchDeadline
	}
	return s
}

// Replicas returns Status's Replicas in a new slice: the leader's view of
// every voter and of the observers that fetched in the last five minutes;
// nil on other nodes.
func (n *Node) Replicas() []ReplicaStatus {
	if n.role != Leader {
		return nil
	}
	out := make([]ReplicaStatus, 0, len(n.lead.voters)+len(n.lead.observers))
	voters := n.history.last()
	for _, rs := range [][]*replicaState{n.lead.voters, n.lead.observers} {
		for _, r := range rs {
			st := ReplicaStatus{
				NodeID:       r.id,
				Voter:        r.voter,
				DirectoryID:  r.dir,
				LogEndOffset: r.endOffset,
				LastFetch:    r.lastFetch,
				LastCaughtUp: r.lastCaughtUp,
			}
			if v, ok := voters.Voter(r.id); ok && r.voter {
				st.DirectoryID = v.DirectoryID
			}
			for _, p := range n.lead.parked {
				st.FetchParked = st.FetchParked || p.replica == r.id
			}
			if p := r.push; p != nil && r.id != n.id {
				st.Push, st.InFlight = p.state.String(), len(p.flights)
			}
			out = append(out, st)
		}
	}
	return out
}

// describeQuorum answers DescribeQuorum. The leader fills in every replica;
// another node answers a bare NOT_LEADER_OR_FOLLOWER, as Kafka's
// DescribeQuorumResponse.singletonErrorResponse does.
func (n *Node) describeQuorum(now time.Time, req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		p.ErrorCode = errUnknownTopicOrPartition
		t.Partitions = []kmsg.DescribeQuorumResponseTopicPartition{p}
		resp.Topics = []kmsg.DescribeQuorumResponseTopic{t}
		return resp
	}
	if n.role != Leader {
		p.ErrorCode = errNotLeaderOrFollower
		t.Partitions = []kmsg.DescribeQuorumResponseTopicPartition{p}
		resp.Topics = []kmsg.DescribeQuorumResponseTopic{t}
		return resp
	}
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = n.leader, n.epoch, n.highWatermark()
	state := func(id int32, leo int64, fetch, caughtUp time.Time) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset = id, leo
		if !fetch.IsZero() {
			r.LastFetchTimestamp = fetch.UnixMilli()
		}
		if !caughtUp.IsZero() {
			r.LastCaughtUpTimestamp = caughtUp.UnixMilli()
		}
		return r
	}
	// Directory ids (v2): a voter's from the voter set, an observer's
	// from its fetches; zero in a static quorum.
	voters := n.history.last()
	for _, r := range n.lead.voters {
		var rs kmsg.DescribeQuorumResponseTopicPartitionReplicaState
		if r.id == n.id {
			// The leader is always caught up with itself.
			rs = state(r.id, n.log.LogEndOffset(), now, now)
		} else {
			rs = state(r.id, r.endOffset, r.lastFetch, r.lastCaughtUp)
		}
		if v, ok := voters.Voter(r.id); ok {
			rs.ReplicaDirectoryID = v.DirectoryID
		}
		p.CurrentVoters = append(p.CurrentVoters, rs)
	}
	for _, r := range n.lead.observers {
		rs := state(r.id, r.endOffset, r.lastFetch, r.lastCaughtUp)
		rs.ReplicaDirectoryID = r.dir
		p.Observers = append(p.Observers, rs)
	}
	t.Partitions = []kmsg.DescribeQuorumResponseTopicPartition{p}
	resp.Topics = []kmsg.DescribeQuorumResponseTopic{t}
	return resp
}
