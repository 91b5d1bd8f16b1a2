package raft_test

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
)

// A push follower answers an AppendEntries once its records are durable.
// If it leaves the Follower role first (its fetch timeout ran out while a
// slow disk held the flush), the held answer goes out as a refusal: a
// connection answers in order, and one request left unanswered would
// hold back every answer behind it for good.
func TestPushFollowerRefusesHeldAnswersWhenItStopsFollowing(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1)
	base := h.config
	h.config = func(id int32) raft.Config {
		c := base(id)
		c.Replication = raft.Push
		return c
	}
	h.start(2)
	h.manualFlush = true

	src := raft.NewMemoryLog()
	leaderBatch(t, src, 0, 1, "a", "b")
	data, err := src.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	cluster := "cluster"
	req := &pushrpc.AppendEntriesRequest{ClusterID: &cluster, LeaderID: 1, LeaderEpoch: 1, BaseOffset: 0, PrevEpoch: 0, HighWatermark: 0, Records: data}
	if resp := h.request(2, 1, req); resp != nil {
		t.Fatalf("answered %+v before its records were durable", resp)
	}
	h.expectRole(2, raft.Follower, 1)

	// No flush, and no other push: the fetch timeout runs out.
	h.now = h.now.Add(h.config(2).FetchTimeout + time.Millisecond)
	if err := h.node(2).Tick(h.now); err != nil {
		t.Fatal(err)
	}
	if st := h.status(2); st.Role != raft.Prospective {
		t.Fatalf("node 2 is %v, want Prospective after its fetch timeout", st.Role)
	}
	var answer *pushrpc.AppendEntriesResponse
	for _, m := range h.node(2).Outbox() {
		if m.ID == 1<<40 && m.To == 1 {
			answer, _ = m.Response.(*pushrpc.AppendEntriesResponse)
		}
	}
	if answer == nil {
		t.Fatal("the held answer was dropped with the Follower role: the request stays unanswered")
	}
	if answer.Success || answer.MatchOffset != -1 || answer.ErrorCode != 6 { // NOT_LEADER_OR_FOLLOWER
		t.Errorf("held answer went out as %+v, want a refusal (NOT_LEADER_OR_FOLLOWER, no match)", answer)
	}
}
