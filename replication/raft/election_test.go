package raft_test

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A voter cut off from the quorum times out again and again, but each
// pre-vote fails, so it never raises the epoch; when the network heals the
// leader keeps its epoch and the voter simply follows again. Without
// pre-vote it would stand as a candidate in ever higher epochs and depose
// the leader on its return.
func TestPreVoteKeepsPartitionedVoterFromDisruptingLeader(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.expectRole(1, raft.Leader, 1)

	h.isolate(3)
	roles := map[raft.Role]bool{}
	for range 100 { // 20 seconds, ten fetch timeouts
		h.advance(200 * time.Millisecond)
		roles[h.status(3).Role] = true
	}
	if !roles[raft.Prospective] || roles[raft.Candidate] {
		t.Fatalf("isolated voter went through %v; want Prospective and never Candidate", roles)
	}
	h.expectRole(3, h.status(3).Role, 1)

	h.heal()
	h.advance(5 * time.Second)
	h.expectRole(1, raft.Leader, 1)
	h.expectRole(3, raft.Follower, 1)
	if st := h.status(3); st.LeaderID != 1 || st.LogEndOffset != h.status(1).LogEndOffset {
		t.Fatalf("node 3 after healing: %+v", st)
	}
}

// A follower that still hears from its leader refuses pre-votes (KIP-996's
// fix for the ping-pong scenario); once the leader announces it is leaving,
// it grants them.
func TestFollowerGrantsNoPreVoteWhileItHearsFromLeader(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	leo := h.status(3).LogEndOffset
	preVoteAt := func(voter int32, preVote bool) bool {
		req := kmsg.NewPtrVoteRequest()
		req.Version = raft.VoteVersion
		p := kmsg.NewVoteRequestTopicPartition()
		p.CandidateEpoch, p.CandidateID, p.PreVote = 1, 2, preVote
		p.LastOffsetEpoch, p.LastOffset = 1, leo
		tp := kmsg.NewVoteRequestTopic()
		tp.Topic = raft.MetadataTopic
		tp.Partitions = []kmsg.VoteRequestTopicPartition{p}
		req.Topics = []kmsg.VoteRequestTopic{tp}
		before := h.status(voter)
		resp := h.request(voter, 2, req).(*kmsg.VoteResponse)
		// A pre-vote changes nothing: no vote recorded, same epoch and role.
		if after := h.status(voter); preVote && (after.Epoch != before.Epoch || after.VotedID != before.VotedID || after.Role != before.Role) {
			t.Fatalf("pre-vote changed node %d from %+v to %+v", voter, before, after)
		}
		return resp.Topics[0].Partitions[0].VoteGranted
	}
	preVote := func() bool { return preVoteAt(3, true) }
	if preVote() {
		t.Fatal("a follower of a live leader granted a pre-vote")
	}
	// The leader shuts down: node 3 is second in line, so it waits, but it
	// no longer hears from a leader.
	if err := h.node(1).Shutdown(h.now); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.deliver(to(3, kmsg.EndQuorumEpoch.Int16()))
	h.expectRole(3, raft.Follower, 1)
	if !preVote() {
		t.Fatal("after EndQuorumEpoch the follower still refused an up-to-date pre-vote")
	}
	// The resigned leader grants the pre-vote too, so its successor never
	// waits on a follower that has not yet heard of the resignation; a
	// binding vote in its own epoch it still refuses.
	h.expectRole(1, raft.Resigned, 1)
	if !preVoteAt(1, true) {
		t.Fatal("the resigned leader refused an up-to-date pre-vote")
	}
	if preVoteAt(1, false) {
		t.Fatal("the resigned leader granted a binding vote in its own epoch")
	}
}

// The candidate's vote rules: one vote per epoch, only for a log at least as
// up to date, persisted before the answer goes out.
func TestVoteGrantedOncePerEpochToUpToDateLog(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	vote := func(candidate, epoch int32, lastEpoch int32, lastOffset int64) (bool, int16) {
		req := kmsg.NewPtrVoteRequest()
		req.Version = raft.VoteVersion
		p := kmsg.NewVoteRequestTopicPartition()
		p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch, p.LastOffset = epoch, candidate, lastEpoch, lastOffset
		tp := kmsg.NewVoteRequestTopic()
		tp.Topic = raft.MetadataTopic
		tp.Partitions = []kmsg.VoteRequestTopicPartition{p}
		req.Topics = []kmsg.VoteRequestTopic{tp}
		resp := h.request(2, candidate, req).(*kmsg.VoteResponse)
		rp := resp.Topics[0].Partitions[0]
		return rp.VoteGranted, rp.ErrorCode
	}
	if granted, code := vote(1, 1, 0, 0); !granted || code != 0 {
		t.Fatalf("first vote in epoch 1: granted=%v code=%d", granted, code)
	}
	if st, _ := h.nodes[2].store.Read(); st.VotedID != 1 || st.Epoch != 1 {
		t.Fatalf("vote not persisted: %+v", st)
	}
	if granted, _ := vote(3, 1, 0, 0); granted {
		t.Fatal("second vote in the same epoch granted")
	}
	if granted, _ := vote(1, 1, 0, 0); !granted {
		t.Fatal("the same candidate asking again was refused")
	}
	// A higher epoch resets the vote; the old epoch is then fenced.
	if granted, _ := vote(3, 2, 0, 0); !granted {
		t.Fatal("vote in a new epoch refused")
	}
	if _, code := vote(1, 1, 0, 0); code != 74 {
		t.Fatalf("vote in an old epoch: code %d, want FENCED_LEADER_EPOCH", code)
	}
	// Once node 2 has records of epoch 2, a candidate with less is refused.
	h.nodes[2].n = nil
	h.nodes[2].log = raft.NewMemoryLog()
	h.nodes[2].store = &raft.MemoryQuorumStateStore{}
	h.start(2)
	leaderBatch(t, h.nodes[2].log, 0, 2, "a", "b")
	h.nodes[2].n = nil
	h.start(2)
	if granted, _ := vote(3, 3, 1, 5); granted {
		t.Fatal("vote granted to a log with an older last epoch")
	}
	if granted, _ := vote(3, 3, 2, 1); granted {
		t.Fatal("vote granted to a shorter log in the same epoch")
	}
	if granted, _ := vote(3, 3, 2, 2); !granted {
		t.Fatal("vote refused to an equal log")
	}
}

// A vote or BeginQuorumEpoch from a node outside the voter set is refused
// with INCONSISTENT_VOTER_SET, and changes nothing.
func TestRequestsFromNonVotersRejected(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	req := kmsg.NewPtrVoteRequest()
	req.Version = raft.VoteVersion
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch, p.LastOffset = 5, 9, 1, 100
	tp := kmsg.NewVoteRequestTopic()
	tp.Topic = raft.MetadataTopic
	tp.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{tp}
	vr := h.request(2, 9, req).(*kmsg.VoteResponse)
	if c := vr.Topics[0].Partitions[0].ErrorCode; c != 94 {
		t.Fatalf("vote from a non-voter: code %d, want INCONSISTENT_VOTER_SET", c)
	}
	bq := kmsg.NewPtrBeginQuorumEpochRequest()
	bq.Version = raft.BeginQuorumEpochVersion
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.LeaderID, bp.LeaderEpoch = 9, 5
	bt := kmsg.NewBeginQuorumEpochRequestTopic()
	bt.Topic = raft.MetadataTopic
	bt.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{bp}
	bq.Topics = []kmsg.BeginQuorumEpochRequestTopic{bt}
	br := h.request(2, 9, bq).(*kmsg.BeginQuorumEpochResponse)
	if c := br.Topics[0].Partitions[0].ErrorCode; c != 94 {
		t.Fatalf("BeginQuorumEpoch from a non-voter: code %d, want INCONSISTENT_VOTER_SET", c)
	}
	h.expectRole(2, raft.Follower, 1)
}

// After a lost election a candidate backs off for a random time capped by
// controller.quorum.election.backoff.max.ms, at once when a majority
// rejects it, then tries a pre-vote again rather than a new epoch.
func TestCandidateBacksOffAtOnceWhenRejected(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	// Node 1 wins the pre-vote...
	for h.status(1).Role != raft.Candidate {
		h.advance(10 * time.Millisecond)
		for _, m := range h.take(isKind(kmsg.Vote.Int16())) {
			if m.Request != nil {
				h.answer(m, voteResponse(m, 0, -1, true))
			}
		}
	}
	h.expectRole(1, raft.Candidate, 1)
	// ...but both voters refuse the vote.
	votes := h.take(isKind(kmsg.Vote.Int16()))
	if len(votes) != 2 {
		t.Fatalf("candidate sent %d vote requests, want 2", len(votes))
	}
	for _, m := range votes {
		h.answer(m, voteResponse(m, 1, -1, false))
	}
	deadline := h.node(1).NextDeadline()
	if max := h.config(1).ElectionBackoffMax; deadline.Sub(h.now) > max {
		t.Fatalf("candidate waits %v after losing, more than the backoff max %v", deadline.Sub(h.now), max)
	}
	h.expectRole(1, raft.Candidate, 1)
	h.advance(deadline.Sub(h.now))
	h.expectRole(1, raft.Prospective, 1)
}
