package raft_test

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
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
