package raft_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func leaderOf(h *harness, ids ...int32) (int32, bool) {
	for _, id := range ids {
		if h.nodes[id].n != nil && h.status(id).Role == raft.Leader {
			return id, true
		}
	}
	return 0, false
}

// A leader cut off from the quorum keeps appending records nobody gets;
// the others elect a new leader and go on. When the old leader returns, its
// Fetch (offset, last epoch 1) is answered with a DivergingEpoch, and it
// truncates its uncommitted tail before taking the new leader's records.
func TestStaleLeaderTruncatesDivergingTail(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.append(1, "committed")
	h.advance(time.Second)

	h.isolate(1)
	h.append(1, "stale-1", "stale-2")
	h.advance(100 * time.Millisecond)
	stale := h.status(1)
	if stale.LogEndOffset != stale.HighWatermark+2 {
		t.Fatalf("isolated leader should hold two uncommitted records: %+v", stale)
	}
	h.advance(5 * time.Second)
	leader, ok := leaderOf(h, 2, 3)
	if !ok {
		t.Fatal("the majority elected no leader")
	}
	h.expectRole(leader, raft.Leader, 2)
	h.append(leader, "new-1", "new-2", "new-3")
	h.advance(time.Second)
	if st := h.status(leader); st.HighWatermark <= stale.HighWatermark {
		t.Fatalf("majority did not commit: %+v", st)
	}

	h.heal()
	h.advance(5 * time.Second)
	h.expectRole(1, raft.Follower, 2)
	if got, want := logString(h.nodes[1].log), logString(h.nodes[leader].log); got != want {
		t.Fatalf("old leader's log %s, leader's %s", got, want)
	}
	for off, v := range h.nodes[1].l.values {
		if strings.HasPrefix(v, "stale") {
			t.Fatalf("uncommitted record %q at %d reached the listener", v, off)
		}
	}
	if got, want := fmt.Sprint(h.nodes[1].l.values), fmt.Sprint(h.nodes[leader].l.values); got != want {
		t.Fatalf("old leader applied %s, leader %s", got, want)
	}

}

// A follower never truncates below its high watermark: a leader asking for
// that is a safety violation, reported as an error with the log left alone.
func TestDivergenceBelowHighWatermarkIsAnError(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	bq := kmsg.NewPtrBeginQuorumEpochRequest()
	bq.Version = raft.BeginQuorumEpochVersion
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.LeaderID, bp.LeaderEpoch = 1, 1
	bt := kmsg.NewBeginQuorumEpochRequestTopic()
	bt.Topic = raft.MetadataTopic
	bt.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{bp}
	bq.Topics = []kmsg.BeginQuorumEpochRequestTopic{bt}
	h.request(2, 1, bq)
	h.expectRole(2, raft.Follower, 1)

	// A second leader of the same epoch is news to ignore, not a failure.
	second := kmsg.NewPtrBeginQuorumEpochRequest()
	second.Version = raft.BeginQuorumEpochVersion
	bp.LeaderID = 3
	bt.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{bp}
	second.Topics = []kmsg.BeginQuorumEpochRequestTopic{bt}
	err := h.node(2).Step(h.now, raft.Message{From: 3, To: 2, ID: 1 << 41, Request: second})
	if !errors.Is(err, raft.ErrUnsafe) {
		t.Fatalf("a second leader of epoch 1: err %v", err)
	}
	h.expectRole(2, raft.Follower, 1)
	h.collect(2) // the refusal goes to node 3

	fetch := h.take(to(1, kmsg.Fetch.Int16()))[0]
	resp := fetch.Request.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
	p := kmsg.NewFetchResponseTopicPartition()
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 1
	p.HighWatermark = 3
	p.RecordBatches = storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: 1}, []storage.Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
	rt := kmsg.NewFetchResponseTopic()
	rt.TopicID = raft.MetadataTopicID
	rt.Partitions = []kmsg.FetchResponseTopicPartition{p}
	resp.Topics = []kmsg.FetchResponseTopic{rt}
	h.answer(fetch, resp)
	if st := h.status(2); st.HighWatermark != 3 || st.LogEndOffset != 3 {
		t.Fatalf("follower after first fetch: %+v", st)
	}

	fetch = h.take(to(1, kmsg.Fetch.Int16()))[0]
	resp = fetch.Request.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
	p = kmsg.NewFetchResponseTopicPartition()
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 1
	p.HighWatermark = 3
	p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 1, 1
	rt.Partitions = []kmsg.FetchResponseTopicPartition{p}
	resp.Topics = []kmsg.FetchResponseTopic{rt}
	err = h.node(2).Step(h.now, raft.Message{From: 1, To: 2, ID: fetch.ID, Response: resp})
	if !errors.Is(err, raft.ErrUnsafe) || !strings.Contains(err.Error(), "below the high watermark") {
		t.Fatalf("truncation below the high watermark: err %v", err)
	}
	if st := h.status(2); st.LogEndOffset != 3 {
		t.Fatalf("log truncated to %d anyway", st.LogEndOffset)
	}
}

// A follower whose log ends before the leader's log start gets the
// snapshot id in its Fetch answer, downloads the snapshot with FetchSnapshot
// in chunks, hands it to its listener, and goes on fetching the log.
func TestFarBehindFollowerCatchesUpThroughSnapshot(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	base := h.config
	h.config = func(id int32) raft.Config {
		c := base(id)
		c.FetchMaxBytes = 1024
		return c
	}
	for _, id := range h.ids {
		h.nodes[id].n = nil
		h.start(id)
	}
	h.elect(1)
	h.crash(3)
	for i := range 40 {
		h.append(1, fmt.Sprintf("v%d", i))
		h.advance(30 * time.Millisecond)
	}
	h.advance(time.Second)
	st := h.status(1)
	state := [][]byte{[]byte("state at snapshot")}
	for range 5 {
		state = append(state, make([]byte, 600))
	}
	if err := h.node(1).CreateSnapshot(h.now, st.AppliedOffset, state); err != nil {
		t.Fatal(err)
	}
	if st := h.status(1); st.LogStartOffset != st.LatestSnapshot.EndOffset || !st.HasSnapshot {
		t.Fatalf("leader after snapshot: %+v", st)
	}
	snapEnd := st.AppliedOffset
	h.append(1, "after")
	h.advance(time.Second)

	var chunks int
	var positions []int64
	h.delivered = func(m raft.Message) {
		if r, ok := m.Request.(*kmsg.FetchSnapshotRequest); ok {
			chunks++
			positions = append(positions, r.Topics[0].Partitions[0].Position)
		}
	}
	h.start(3)
	h.advance(3 * time.Second)
	if chunks < 4 {
		t.Fatalf("snapshot came in %d FetchSnapshot requests (positions %v), want several chunks of 1 KiB", chunks, positions)
	}
	l := h.nodes[3].l
	if len(l.snapshots) != 1 || l.snapshots[0].ID.EndOffset != snapEnd || string(l.snapshots[0].Records[0].Value) != "state at snapshot" {
		t.Fatalf("listener loaded snapshots %+v", l.snapshots)
	}
	f, ld := h.status(3), h.status(1)
	if f.LogStartOffset != snapEnd || f.LogEndOffset != ld.LogEndOffset || f.AppliedOffset != ld.AppliedOffset {
		t.Fatalf("follower %+v, leader %+v", f, ld)
	}
	if v := l.values[ld.LogEndOffset-1]; v != "after" {
		t.Fatalf("follower applied %q after the snapshot, want after", v)
	}
}

// A follower acknowledges records by fetching past them, so it must not
// fetch again until it has flushed what it appended.
func TestFollowerFetchesAgainOnlyAfterFlush(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	h.manualFlush = true
	bq := kmsg.NewPtrBeginQuorumEpochRequest()
	bq.Version = raft.BeginQuorumEpochVersion
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.LeaderID, bp.LeaderEpoch = 1, 1
	bt := kmsg.NewBeginQuorumEpochRequestTopic()
	bt.Topic = raft.MetadataTopic
	bt.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{bp}
	bq.Topics = []kmsg.BeginQuorumEpochRequestTopic{bt}
	h.request(2, 1, bq)
	fetch := h.take(to(1, kmsg.Fetch.Int16()))[0]
	resp := fetch.Request.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
	p := kmsg.NewFetchResponseTopicPartition()
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 1
	p.HighWatermark = 0
	p.RecordBatches = storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: 1}, []storage.Record{{Value: []byte("a")}})
	rt := kmsg.NewFetchResponseTopic()
	rt.TopicID = raft.MetadataTopicID
	rt.Partitions = []kmsg.FetchResponseTopicPartition{p}
	resp.Topics = []kmsg.FetchResponseTopic{rt}
	h.answer(fetch, resp)
	h.advance(100 * time.Millisecond)
	if got := h.take(to(1, kmsg.Fetch.Int16())); len(got) != 0 {
		t.Fatalf("follower fetched at offset %d before flushing", got[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0].FetchOffset)
	}
	if !h.node(2).NeedsFlush() {
		t.Fatal("follower does not ask for a flush")
	}
	h.flush(2)
	got := h.take(to(1, kmsg.Fetch.Int16()))
	if len(got) != 1 || got[0].Request.(*kmsg.FetchRequest).Topics[0].Partitions[0].FetchOffset != 1 {
		t.Fatalf("after the flush, fetches %+v; want one at offset 1", got)
	}
}

// On graceful shutdown the leader resigns and sends EndQuorumEpoch with its
// followers as preferred successors, most caught up first. The first one
// stands at once — elected with no time passing — instead of waiting out
// the fetch timeout.
func TestEndQuorumEpochSuccessorElectsAtOnce(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	// Node 3 falls behind: its fetches stop reaching the leader.
	h.cut[[2]int32{3, 1}] = true
	h.append(1, "a", "b")
	h.advance(time.Second)
	h.heal()

	if err := h.node(1).Shutdown(h.now); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.expectRole(1, raft.Resigned, 1)
	ends := h.pending(isKind(kmsg.EndQuorumEpoch.Int16()))
	if len(ends) != 2 {
		t.Fatalf("%d EndQuorumEpoch requests, want 2", len(ends))
	}
	var successors []int32
	for _, c := range ends[0].Request.(*kmsg.EndQuorumEpochRequest).Topics[0].Partitions[0].PreferredCandidates {
		successors = append(successors, c.CandidateID)
	}
	if fmt.Sprint(successors) != "[2 3]" {
		t.Fatalf("preferred successors %v, want [2 3]", successors)
	}
	h.advance(0)
	h.expectRole(2, raft.Leader, 2)
	h.expectRole(3, raft.Follower, 2)
	if !h.node(1).ShutdownComplete() {
		t.Fatalf("old leader's shutdown not complete: %+v", h.status(1))
	}
}

// A leader that crashes comes back Resigned in its epoch: it neither leads
// nor votes in it again, and it tells the voters to elect someone else.
func TestRestartedLeaderComesBackResigned(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.crash(1)
	h.start(1)
	h.expectRole(1, raft.Resigned, 1)
	if n := len(h.pending(isKind(kmsg.EndQuorumEpoch.Int16()))); n != 2 {
		t.Fatalf("restarted leader sent %d EndQuorumEpoch requests, want 2", n)
	}
	h.advance(3 * time.Second)
	leader, ok := leaderOf(h, 1, 2, 3)
	if !ok || h.status(leader).Epoch != 2 {
		t.Fatalf("no leader in epoch 2 after the restart: %+v", h.status(leader))
	}
}

// A node whose quorum state is behind its log (the state write was lost)
// starts Unattached in the log's epoch.
func TestQuorumStateBehindLogStartsInLogEpoch(t *testing.T) {
	l := raft.NewMemoryLog()
	leaderBatch(t, l, 0, 4, "a")
	store := &raft.MemoryQuorumStateStore{}
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.Voters, cfg.ClusterID = 2, []int32{1, 2, 3}, "cluster"
	n, err := raft.New(cfg, l, store, &recorder{values: map[int64]string{}}, rand.New(rand.NewPCG(1, 1)), t0)
	if err != nil {
		t.Fatal(err)
	}
	if st := n.Status(); st.Role != raft.Unattached || st.Epoch != 4 {
		t.Fatalf("started as %v in epoch %d, want Unattached in 4", st.Role, st.Epoch)
	}
	if st, _ := store.Read(); st.Epoch != 4 {
		t.Fatalf("persisted epoch %d, want 4", st.Epoch)
	}
}

type failingStore struct{ raft.MemoryQuorumStateStore }

func (failingStore) Write(raft.ElectionState) error { return errors.New("disk full") }

// The quorum state is written before a transition takes effect: if the
// write fails, the node stays where it was.
func TestTransitionWaitsForQuorumStateWrite(t *testing.T) {
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.Voters, cfg.ClusterID = 2, []int32{1, 2, 3}, "cluster"
	n, err := raft.New(cfg, raft.NewMemoryLog(), &failingStore{}, &recorder{values: map[int64]string{}}, rand.New(rand.NewPCG(1, 1)), t0)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.Version = raft.BeginQuorumEpochVersion
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = 1, 3
	tp := kmsg.NewBeginQuorumEpochRequestTopic()
	tp.Topic = raft.MetadataTopic
	tp.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.BeginQuorumEpochRequestTopic{tp}
	if err := n.Step(t0, raft.Message{From: 1, To: 2, ID: 1, Request: req}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("step with a failing store: %v", err)
	}
	if st := n.Status(); st.Epoch != 0 || st.Role != raft.Unattached || st.LeaderID != -1 {
		t.Fatalf("node moved on without persisting: %+v", st)
	}
}

// An observer starts knowing no leader, fetches from any voter, follows the
// leader that voter names, and replicates the log, never voting.
func TestObserverFindsLeaderThroughAnyVoter(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, []int32{101})
	h.expectRole(101, raft.Unattached, 0)
	h.elect(1)
	h.append(1, "x")
	h.advance(2 * time.Second)
	st := h.status(101)
	if st.Role != raft.Follower || st.LeaderID != 1 || st.AppliedOffset != h.status(1).AppliedOffset || st.Voter {
		t.Fatalf("observer: %+v", st)
	}
	if v := h.nodes[101].l.values[1]; v != "x" {
		t.Fatalf("observer applied %q", v)
	}
}

// Every RPC carrying another cluster's id is refused with
// INCONSISTENT_CLUSTER_ID and changes nothing, even with a higher epoch.
func TestWrongClusterIDRejected(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	other := "other-cluster"
	vote := kmsg.NewPtrVoteRequest()
	vote.Version, vote.ClusterID = raft.VoteVersion, &other
	vp := kmsg.NewVoteRequestTopicPartition()
	vp.CandidateEpoch, vp.CandidateID, vp.LastOffsetEpoch, vp.LastOffset = 9, 3, 1, 100
	vt := kmsg.NewVoteRequestTopic()
	vt.Topic, vt.Partitions = raft.MetadataTopic, []kmsg.VoteRequestTopicPartition{vp}
	vote.Topics = []kmsg.VoteRequestTopic{vt}
	begin := kmsg.NewPtrBeginQuorumEpochRequest()
	begin.Version, begin.ClusterID = raft.BeginQuorumEpochVersion, &other
	end := kmsg.NewPtrEndQuorumEpochRequest()
	end.Version, end.ClusterID = raft.EndQuorumEpochVersion, &other
	fetch := fetchRequest(2, 1, 1, 1, 0)
	fetch.ClusterID = &other
	snap := kmsg.NewPtrFetchSnapshotRequest()
	snap.Version, snap.ClusterID = raft.FetchSnapshotVersion, &other
	for _, tc := range []struct {
		node int32
		req  kmsg.Request
		code func(kmsg.Response) int16
	}{
		{2, vote, func(r kmsg.Response) int16 { return r.(*kmsg.VoteResponse).ErrorCode }},
		{2, begin, func(r kmsg.Response) int16 { return r.(*kmsg.BeginQuorumEpochResponse).ErrorCode }},
		{2, end, func(r kmsg.Response) int16 { return r.(*kmsg.EndQuorumEpochResponse).ErrorCode }},
		{1, fetch, func(r kmsg.Response) int16 { return r.(*kmsg.FetchResponse).ErrorCode }},
		{1, snap, func(r kmsg.Response) int16 { return r.(*kmsg.FetchSnapshotResponse).ErrorCode }},
	} {
		if code := tc.code(h.request(tc.node, 3, tc.req)); code != 104 {
			t.Errorf("%s with another cluster id: error %d, want INCONSISTENT_CLUSTER_ID", kmsg.NameForKey(tc.req.Key()), code)
		}
	}
	h.expectRole(1, raft.Leader, 1)
	h.expectRole(2, raft.Follower, 1)
}
