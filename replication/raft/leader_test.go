package raft_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A leader that no majority fetches from resigns after 1.5 fetch timeouts
// (check-quorum), instead of leading alone forever.
func TestCheckQuorumLeaderResignsWithoutMajority(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.isolate(1)
	// The last fetches reached the leader at most FetchMaxWait (500ms) ago.
	h.advance(2400 * time.Millisecond)
	h.expectRole(1, raft.Leader, 1)
	h.advance(700 * time.Millisecond)
	h.expectRole(1, raft.Resigned, 1)
	if _, err := h.node(1).Append(h.now, 1, [][]byte{[]byte("x")}); err == nil {
		t.Fatal("a resigned leader accepted an append")
	}
}

// One fetching follower is enough to keep a leader of three in office.
func TestCheckQuorumMajorityKeepsLeader(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.isolate(3)
	h.advance(10 * time.Second)
	h.expectRole(1, raft.Leader, 1)
}

// The high watermark moves only once a majority holds a record of the
// leader's own epoch: records of earlier epochs on a majority are not enough
// (Raft's commit rule, LeaderState.maybeUpdateHighWatermark).
func TestHighWatermarkNeedsRecordOfOwnEpoch(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	h.winElection(1)
	// Epoch 1 starts at 0 with the LeaderChange record.
	if hw := fetchPart(t, h.request(1, 2, fetchRequest(2, 1, 0, 0, 0))).HighWatermark; hw != -1 {
		t.Fatalf("high watermark %d before any record of the epoch is acknowledged", hw)
	}
	if hw := fetchPart(t, h.request(1, 2, fetchRequest(2, 1, 1, 1, 0))).HighWatermark; hw != 1 {
		t.Fatalf("high watermark %d, want 1 once node 2 holds the LeaderChange record", hw)
	}
	h.append(1, "a", "b")
	h.advance(100 * time.Millisecond)
	leo := h.status(1).LogEndOffset // 3

	// Node 1 restarts: its next epoch starts at offset 3. Node 2 holds everything
	// of epoch 1, yet the high watermark stays unknown until it holds the
	// LeaderChange of epoch 2.
	h.nodes[1].n = nil
	h.start(1)
	h.expectRole(1, raft.Resigned, 1)
	// Resigned moves on to epoch 2 unattached, so the election is for 3.
	h.winElection(1)
	h.expectRole(1, raft.Leader, 3)
	if hw := fetchPart(t, h.request(1, 2, fetchRequest(2, 3, leo, 1, 0))).HighWatermark; hw != -1 {
		t.Fatalf("new leader's high watermark %d with only earlier epochs acknowledged", hw)
	}
	if hw := fetchPart(t, h.request(1, 2, fetchRequest(2, 3, leo+1, 3, 0))).HighWatermark; hw != leo+1 {
		t.Fatalf("high watermark %d, want %d", hw, leo+1)
	}
}

// Observers fetch like followers but never count toward the high watermark.
func TestObserversDoNotCountTowardHighWatermark(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, []int32{101, 102}, 2, 3, 101, 102)
	h.winElection(1)
	for _, o := range []int32{101, 102} {
		if hw := fetchPart(t, h.request(1, o, fetchRequest(o, 1, 1, 1, 0))).HighWatermark; hw != -1 {
			t.Fatalf("observer %d's fetch moved the high watermark to %d", o, hw)
		}
	}
	st := h.status(1)
	var observers []int32
	for _, r := range st.Replicas {
		if !r.Voter {
			observers = append(observers, r.NodeID)
		}
	}
	if !slices.Equal(observers, []int32{101, 102}) {
		t.Fatalf("leader tracks observers %v", observers)
	}
}

// A Fetch with nothing new waits in the leader's purgatory and is answered
// as soon as the leader appends, before the leader's flush; and the leader
// counts its own records toward the high watermark only once flushed.
func TestParkedFetchAnsweredOnAppendBeforeFlush(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	h.winElection(1)
	h.manualFlush = true
	// Node 3 is down; node 2 is caught up and its fetch parks.
	if resp := h.request(1, 2, fetchRequest(2, 1, 1, 1, 500)); resp != nil {
		t.Fatalf("caught-up fetch answered at once: %+v", resp)
	}
	if st := h.status(1); !st.Replicas[1].FetchParked {
		t.Fatalf("fetch not parked: %+v", st.Replicas)
	}
	h.append(1, "x")
	h.advance(h.config(1).AppendLinger) // the linger ends: one batch
	answers := h.take(to(2, kmsg.Fetch.Int16()))
	if len(answers) != 1 {
		t.Fatalf("%d answers to the parked fetch, want 1", len(answers))
	}
	p := fetchPart(t, answers[0].Response)
	st := h.status(1)
	if len(p.RecordBatches) == 0 || st.FlushedOffset != 1 || st.LogEndOffset != 2 {
		t.Fatalf("parked fetch answered with %d bytes; leader flushed %d of %d", len(p.RecordBatches), st.FlushedOffset, st.LogEndOffset)
	}
	// Node 2 acknowledges offset 2, but with node 3 down the majority is
	// node 2 and the leader, whose record is not yet durable.
	if hw := fetchPart(t, h.request(1, 2, fetchRequest(2, 1, 2, 1, 0))).HighWatermark; hw != 1 {
		t.Fatalf("high watermark %d counts the leader's unflushed record", hw)
	}
	h.flush(1)
	if hw := h.status(1).HighWatermark; hw != 2 {
		t.Fatalf("high watermark %d after the leader's flush, want 2", hw)
	}
}

// A parked Fetch that nothing completes is answered, empty but with the
// current high watermark, when its MaxWaitMs runs out, not before.
func TestParkedFetchAnsweredAtMaxWait(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	h.winElection(1)
	if resp := h.request(1, 2, fetchRequest(2, 1, 1, 1, 300)); resp != nil {
		t.Fatal("caught-up fetch answered at once")
	}
	h.advance(299 * time.Millisecond)
	if got := h.take(to(2, kmsg.Fetch.Int16())); len(got) != 0 {
		t.Fatal("parked fetch answered before its max wait")
	}
	h.advance(time.Millisecond)
	got := h.take(to(2, kmsg.Fetch.Int16()))
	if len(got) != 1 {
		t.Fatalf("%d answers at max wait, want 1", len(got))
	}
	if p := fetchPart(t, got[0].Response); len(p.RecordBatches) != 0 || p.HighWatermark != 1 || p.ErrorCode != 0 {
		t.Fatalf("answer at max wait: %+v", p)
	}
}

// When the leader steps down, its parked fetches are answered at once with
// NOT_LEADER_OR_FOLLOWER, so followers go looking for the new leader.
func TestParkedFetchFailsWhenLeaderResigns(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	h.winElection(1)
	h.request(1, 2, fetchRequest(2, 1, 1, 1, 500))
	if err := h.node(1).Resign(h.now, 1); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	got := h.take(to(2, kmsg.Fetch.Int16()))
	if len(got) != 1 || fetchPart(t, got[0].Response).ErrorCode != 6 {
		t.Fatalf("parked fetch after resigning: %+v", got)
	}
}

// Fetch errors name the leader this node knows, so the fetcher finds it.
func TestFetchErrorsNameLeader(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	for _, tc := range []struct {
		name       string
		node       int32
		req        *kmsg.FetchRequest
		code       int16
		leaderKnow bool
	}{
		{"old epoch to the leader", 1, fetchRequest(101, 0, 0, 0, 0), 74, true},
		{"future epoch", 1, fetchRequest(101, 7, 0, 0, 0), 75, true},
		{"to a follower", 2, fetchRequest(101, 1, 0, 0, 0), 6, true},
		{"negative offset", 1, fetchRequest(101, 1, -1, 0, 0), 42, true},
		{"last epoch above current", 1, fetchRequest(101, 1, 1, 2, 0), 42, true},
	} {
		p := fetchPart(t, h.request(tc.node, 101, tc.req))
		if p.ErrorCode != tc.code || p.CurrentLeader.LeaderID != 1 || p.CurrentLeader.LeaderEpoch != 1 {
			t.Errorf("%s: error %d, current leader %+v; want error %d naming leader 1 of epoch 1", tc.name, p.ErrorCode, p.CurrentLeader, tc.code)
		}
	}
}

// DescribeQuorum on the leader lists every voter and observer with its log
// end offset and the times of its last fetch and catch-up.
func TestDescribeQuorum(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, []int32{101})
	h.elect(1)
	h.append(1, "a")
	h.advance(time.Second)
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = raft.DescribeQuorumVersion
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = raft.MetadataTopic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	p := h.request(1, -1, req).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch != 1 || p.HighWatermark != 2 {
		t.Fatalf("describe quorum: %+v", p)
	}
	if len(p.CurrentVoters) != 3 || len(p.Observers) != 1 || p.Observers[0].ReplicaID != 101 {
		t.Fatalf("voters %+v, observers %+v", p.CurrentVoters, p.Observers)
	}
	for _, r := range append(p.CurrentVoters, p.Observers...) {
		if r.LogEndOffset != 2 || r.LastFetchTimestamp <= 0 || r.LastCaughtUpTimestamp <= 0 || r.LastFetchTimestamp > h.now.UnixMilli() {
			t.Errorf("replica %+v", r)
		}
	}
	// A follower answers a bare NOT_LEADER_OR_FOLLOWER
	// (DescribeQuorumResponse.singletonErrorResponse): no leader, no voters.
	p = h.request(2, -1, req).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 6 || p.LeaderID != 0 || p.LeaderEpoch != 0 || p.HighWatermark != 0 || len(p.CurrentVoters) != 0 || len(p.Observers) != 0 {
		t.Fatalf("describe quorum on a follower: %+v", p)
	}
}
