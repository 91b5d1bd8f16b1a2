package raft_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// transcript renders events compactly, one line each, for comparisons.
func transcript(evs []raft.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%v e%d", e.Kind, e.Epoch)
		switch e.Kind {
		case raft.EventRoleChanged:
			fmt.Fprintf(&b, " %v->%v leader %d voted %d", e.From, e.To, e.Leader, e.Voted)
		case raft.EventVoteGranted:
			fmt.Fprintf(&b, " candidate %d pre %v", e.Candidate, e.PreVote)
		case raft.EventElectionWon:
			fmt.Fprintf(&b, " at %d", e.LogEndOffset)
		case raft.EventBeginQuorumEpochReceived:
			fmt.Fprintf(&b, " leader %d", e.Leader)
		case raft.EventEndQuorumEpochSent, raft.EventEndQuorumEpochReceived:
			fmt.Fprintf(&b, " leader %d successors %v", e.Leader, e.Successors)
		case raft.EventTruncated, raft.EventLogStartAdvanced:
			fmt.Fprintf(&b, " %d->%d leader %d", e.FromOffset, e.ToOffset, e.Leader)
		case raft.EventSnapshotFetched, raft.EventSnapshotLoaded, raft.EventSnapshotTaken:
			fmt.Fprintf(&b, " %d/%d", e.Snapshot.EndOffset, e.Snapshot.Epoch)
		case raft.EventHighWatermarkKnown:
			fmt.Fprintf(&b, " %d", e.HighWatermark)
		case raft.EventUnsafe:
			fmt.Fprintf(&b, " kafkaStops %v", e.KafkaStops)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func expectTranscript(t *testing.T, who string, evs []raft.Event, want string) {
	t.Helper()
	if got := transcript(evs); got != want {
		t.Fatalf("%s events:\n%s\nwant:\n%s", who, got, want)
	}
}

// An election, from the winner's and a voter's side, and the events come
// before the messages that reveal them.
func TestEventsOfAnElection(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	var got [4][]raft.Event
	for range 100 {
		h.advance(10 * time.Millisecond)
		for id := int32(1); id <= 3; id++ {
			got[id] = append(got[id], h.node(id).TakeEvents()...)
		}
		if st := h.status(3); st.LeaderID == 1 && st.HighWatermark >= 0 {
			break
		}
	}
	expectTranscript(t, "node 1", got[1], ""+
		"RoleChanged e0 Unattached->Prospective leader -1 voted -1\n"+
		"RoleChanged e1 Prospective->Candidate leader -1 voted 1\n"+
		"ElectionWon e1 at 0\n"+
		"RoleChanged e1 Candidate->Leader leader 1 voted -1\n"+
		"HighWatermarkKnown e1 1\n")
	expectTranscript(t, "node 3", got[3], ""+
		"VoteGranted e0 candidate 1 pre true\n"+
		"RoleChanged e1 Unattached->Unattached leader -1 voted -1\n"+
		"RoleChanged e1 Unattached->Unattached leader -1 voted 1\n"+
		"VoteGranted e1 candidate 1 pre false\n"+
		"BeginQuorumEpochReceived e1 leader 1\n"+
		"RoleChanged e1 Unattached->Follower leader 1 voted 1\n"+
		"HighWatermarkKnown e1 1\n")
	for _, e := range got[1] {
		if e.Time.IsZero() || e.Time.After(h.now) {
			t.Fatalf("event time %v", e.Time)
		}
	}
}

// A pre-vote granted and a BeginQuorumEpoch, one step at a time.
func TestEventsOfPreVoteAndBeginQuorumEpoch(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	h.request(2, 3, voteReq(3, 0, 0, 0, true))
	expectTranscript(t, "pre-vote", h.node(2).TakeEvents(), "VoteGranted e0 candidate 3 pre true\n")
	h.request(2, 1, beginReq(1, 4))
	expectTranscript(t, "BeginQuorumEpoch", h.node(2).TakeEvents(), ""+
		"BeginQuorumEpochReceived e4 leader 1\n"+
		"RoleChanged e4 Unattached->Follower leader 1 voted -1\n")
	// A repeat changes nothing and is still reported as accepted.
	h.request(2, 1, beginReq(1, 4))
	expectTranscript(t, "repeat", h.node(2).TakeEvents(), "BeginQuorumEpochReceived e4 leader 1\n")
	if evs := h.node(2).TakeEvents(); evs != nil {
		t.Fatalf("TakeEvents did not clear: %+v", evs)
	}
}

// A resignation: the leader reports EndQuorumEpochSent once, a follower
// EndQuorumEpochReceived.
func TestEventsOfResignation(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	for id := int32(1); id <= 3; id++ {
		h.node(id).TakeEvents()
	}
	if err := h.node(1).Resign(h.now, 1); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.deliver(to(3, kmsg.EndQuorumEpoch.Int16()))
	expectTranscript(t, "leader", h.node(1).TakeEvents(), ""+
		"RoleChanged e1 Leader->Resigned leader 1 voted -1\n"+
		"EndQuorumEpochSent e1 leader 1 successors [2 3]\n")
	expectTranscript(t, "follower", h.node(3).TakeEvents(), "EndQuorumEpochReceived e1 leader 1 successors [2 3]\n")
	// Resent EndQuorumEpochs are not reported again.
	h.advance(5 * time.Millisecond)
	for _, e := range h.node(1).TakeEvents() {
		if e.Kind == raft.EventEndQuorumEpochSent {
			t.Fatal("EndQuorumEpochSent reported twice")
		}
	}
}

// A truncation, a snapshot fetch and an unsafe refusal, on a follower the
// test feeds by hand.
func TestEventsOfTruncationSnapshotAndUnsafe(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	// Node 2 holds records of epoch 1 the new leader of epoch 2 lacks.
	leaderBatch(t, h.nodes[2].log, 0, 1, "a")
	leaderBatch(t, h.nodes[2].log, 1, 1, "b")
	leaderBatch(t, h.nodes[2].log, 2, 1, "c")
	h.nodes[2].n = nil
	h.start(2)
	h.request(2, 1, beginReq(1, 2))
	h.node(2).TakeEvents()
	fetch := followerFetch(t, h, 2, 1)
	answer := func(p kmsg.FetchResponseTopicPartition) {
		t.Helper()
		resp := fetch.Request.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 2
		tp := kmsg.NewFetchResponseTopic()
		tp.TopicID = raft.MetadataTopicID
		tp.Partitions = []kmsg.FetchResponseTopicPartition{p}
		resp.Topics = []kmsg.FetchResponseTopic{tp}
		h.answer(fetch, resp)
	}
	p := kmsg.NewFetchResponseTopicPartition()
	p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 1, 1
	answer(p)
	expectTranscript(t, "truncation", h.node(2).TakeEvents(), "Truncated e2 3->1 leader 1\n")

	// The leader names a snapshot; node 2 downloads it.
	fetch = followerFetch(t, h, 2, 1)
	id0, _, _ := leaderSnapshot(t)
	p = kmsg.NewFetchResponseTopicPartition()
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id0.EndOffset, id0.Epoch
	answer(p)
	var snap raft.Message
	for range 100 {
		if got := h.take(func(m raft.Message) bool {
			return m.From == 2 && m.Request != nil && m.Request.Key() == kmsg.FetchSnapshot.Int16()
		}); len(got) > 0 {
			snap = got[0]
			break
		}
		h.advance(10 * time.Millisecond)
	}
	if snap.Request == nil {
		t.Fatal("no FetchSnapshot")
	}
	id, data, size := leaderSnapshot(t)
	sresp := snap.Request.(*kmsg.FetchSnapshotRequest).ResponseKind().(*kmsg.FetchSnapshotResponse)
	sp := kmsg.NewFetchSnapshotResponseTopicPartition()
	sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = 1, 2
	sp.SnapshotID.EndOffset, sp.SnapshotID.Epoch = id.EndOffset, id.Epoch
	sp.Size, sp.Position, sp.Bytes = size, 0, data
	st := kmsg.NewFetchSnapshotResponseTopic()
	st.Topic = raft.MetadataTopic
	st.Partitions = []kmsg.FetchSnapshotResponseTopicPartition{sp}
	sresp.Topics = []kmsg.FetchSnapshotResponseTopic{st}
	h.answer(snap, sresp)
	expectTranscript(t, "snapshot", h.node(2).TakeEvents(), fmt.Sprintf(""+
		"SnapshotFetched e2 %[1]d/%[2]d\n"+
		"HighWatermarkKnown e2 %[1]d\n"+
		"SnapshotLoaded e2 %[1]d/%[2]d\n", id.EndOffset, id.Epoch))

	// A truncation below the high watermark is refused: Kafka would stop.
	fetch = followerFetch(t, h, 2, 1)
	p = kmsg.NewFetchResponseTopicPartition()
	p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 1, 1
	resp := fetch.Request.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 1, 2
	tp := kmsg.NewFetchResponseTopic()
	tp.TopicID = raft.MetadataTopicID
	tp.Partitions = []kmsg.FetchResponseTopicPartition{p}
	resp.Topics = []kmsg.FetchResponseTopic{tp}
	if err := h.node(2).Step(h.now, raft.Message{From: 1, To: 2, ID: fetch.ID, Response: resp}); err == nil {
		t.Fatal("truncation below the high watermark accepted")
	}
	evs := h.node(2).TakeEvents()
	expectTranscript(t, "unsafe", evs, "Unsafe e2 kafkaStops true\n")
	if !strings.Contains(evs[0].Refused, "below the high watermark") {
		t.Fatalf("refused: %q", evs[0].Refused)
	}
}

// leaderSnapshot has a single-voter leader take a snapshot, and returns
// its id and bytes.
func leaderSnapshot(t *testing.T) (raft.SnapshotID, []byte, int64) {
	t.Helper()
	h := newHarness(t, []int32{1}, nil)
	h.elect(1)
	h.append(1, "a", "b", "c")
	h.advance(100 * time.Millisecond)
	end := h.status(1).HighWatermark
	if err := h.node(1).CreateSnapshot(h.now, end, [][]byte{[]byte("state")}); err != nil {
		t.Fatal(err)
	}
	id, _ := h.nodes[1].log.LatestSnapshot()
	data, size, err := h.nodes[1].log.ReadSnapshot(id, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return id, data, size
}

// A leader taking a snapshot reports it and the log start it moves.
func TestEventsOfSnapshotTaken(t *testing.T) {
	h := newHarness(t, []int32{1}, nil)
	h.elect(1)
	h.append(1, "a", "b")
	h.advance(100 * time.Millisecond)
	h.node(1).TakeEvents()
	end := h.status(1).HighWatermark
	if err := h.node(1).CreateSnapshot(h.now, end, [][]byte{[]byte("state")}); err != nil {
		t.Fatal(err)
	}
	expectTranscript(t, "snapshot", h.node(1).TakeEvents(), fmt.Sprintf(""+
		"SnapshotTaken e1 %d/1\n"+
		"LogStartAdvanced e1 0->%d leader 0\n", end, end))
}

// A steady stream of commits reports nothing and allocates no events.
func TestSteadyCommitsProduceNoEvents(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	for id := int32(1); id <= 3; id++ {
		h.node(id).TakeEvents()
	}
	for i := range 50 {
		h.append(1, fmt.Sprint(i))
		h.advance(30 * time.Millisecond)
	}
	for id := int32(1); id <= 3; id++ {
		if evs := h.node(id).TakeEvents(); evs != nil {
			t.Fatalf("node %d reported %d events for plain commits: %s", id, len(evs), transcript(evs))
		}
	}
	if got := raft.EventUnsafe.String(); got != "Unsafe" {
		t.Fatalf("EventUnsafe.String() = %q", got)
	}
	if got := raft.EventKind(200).String(); got != "EventKind(200)" {
		t.Fatalf("unknown kind: %q", got)
	}
}

// A lost pre-vote reports how many voters there are, not only the majority:
// with four voters the majority is three, which would also be the majority
// of five.
func TestElectionLostCarriesTheVoterCount(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3, 4}, nil, 2, 3, 4)
	h.advance(250 * time.Millisecond)
	if st := h.status(1); st.Role != raft.Prospective {
		t.Fatalf("node 1 is %v, want Prospective", st.Role)
	}
	h.node(1).TakeEvents()
	reqs := h.take(isKind(kmsg.Vote.Int16()))
	if len(reqs) != 3 {
		t.Fatalf("%d pre-vote requests, want 3", len(reqs))
	}
	for _, m := range reqs[:2] {
		h.answer(m, voteResponse(m, 0, -1, false))
	}
	var lost []raft.Event
	for _, e := range h.node(1).TakeEvents() {
		if e.Kind == raft.EventElectionLost {
			lost = append(lost, e)
		}
	}
	if len(lost) != 1 || !lost[0].PreVote || lost[0].Voters != 4 || lost[0].Majority != 3 {
		t.Fatalf("lost elections %+v, want one pre-vote with 4 voters and a majority of 3", lost)
	}
}
