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

// A follower that has fetched from its leader refuses pre-votes (KIP-996's
// fix for the ping-pong scenario), and an EndQuorumEpoch does not change
// that: it only shortens the follower's fetch timer (Kafka's
// FollowerState.overrideFetchTimeout). Only the resigned leader grants them,
// and once the shortened timer fires the follower stands itself.
func TestFollowerGrantsNoPreVoteAfterEndQuorumEpoch(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	leo := h.status(3).LogEndOffset
	preVoteAt := func(voter int32, preVote bool) bool {
		before := h.status(voter)
		resp := h.request(voter, 2, voteReq(2, 1, 1, leo, preVote)).(*kmsg.VoteResponse)
		// A pre-vote changes nothing: no vote recorded, same epoch and role.
		if after := h.status(voter); preVote && (after.Epoch != before.Epoch || after.VotedID != before.VotedID || after.Role != before.Role) {
			t.Fatalf("pre-vote changed node %d from %+v to %+v", voter, before, after)
		}
		return resp.Topics[0].Partitions[0].VoteGranted
	}
	if preVoteAt(3, true) {
		t.Fatal("a follower of a live leader granted a pre-vote")
	}
	// The leader shuts down: node 3 is second in line, so it waits.
	if err := h.node(1).Shutdown(h.now); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.deliver(to(3, kmsg.EndQuorumEpoch.Int16()))
	h.expectRole(3, raft.Follower, 1)
	if preVoteAt(3, true) {
		t.Fatal("after EndQuorumEpoch the follower granted a pre-vote while its fetch timer runs")
	}
	h.expectRole(1, raft.Resigned, 1)
	if !preVoteAt(1, true) {
		t.Fatal("the resigned leader refused an up-to-date pre-vote")
	}
	if preVoteAt(1, false) {
		t.Fatal("the resigned leader granted a binding vote in its own epoch")
	}
	// Second of two successors: ElectionBackoffMax >> 1 = 500ms.
	if d := h.node(3).NextDeadline().Sub(h.now); d != 500*time.Millisecond {
		t.Fatalf("node 3's next deadline in %v, want the strict exponential backoff 500ms", d)
	}
}

// A graceful handover stays fast: the first successor stands at once and
// the resigned leader's pre-vote makes its majority of three.
func TestGracefulHandoverIsFast(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	if err := h.node(1).Shutdown(h.now); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.advance(10 * time.Millisecond)
	st2, st3 := h.status(2), h.status(3)
	if !(st2.Role == raft.Leader || st3.Role == raft.Leader) {
		t.Fatalf("no new leader 10ms after a graceful shutdown: %+v %+v", st2, st3)
	}
	if !h.node(1).ShutdownComplete() {
		t.Fatal("the old leader may not stop yet")
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
