package raft_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests of the behaviours of Kafka 4.2+ (KafkaRaftClient and its states)
// that kraftlab matches.

func voteReq(candidate, epoch, lastEpoch int32, lastOffset int64, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = raft.VoteVersion
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch, p.LastOffset, p.PreVote = epoch, candidate, lastEpoch, lastOffset, preVote
	tp := kmsg.NewVoteRequestTopic()
	tp.Topic = raft.MetadataTopic
	tp.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{tp}
	return req
}

func beginReq(leader, epoch int32) *kmsg.BeginQuorumEpochRequest {
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.Version = raft.BeginQuorumEpochVersion
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.BeginQuorumEpochRequestTopic{t}
	return req
}

func endReq(leader, epoch int32, successors ...int32) *kmsg.EndQuorumEpochRequest {
	req := kmsg.NewPtrEndQuorumEpochRequest()
	req.Version = raft.EndQuorumEpochVersion
	p := kmsg.NewEndQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	for _, s := range successors {
		c := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
		c.CandidateID = s
		p.PreferredCandidates = append(p.PreferredCandidates, c)
	}
	t := kmsg.NewEndQuorumEpochRequestTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.EndQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.EndQuorumEpochRequestTopic{t}
	return req
}

func partitionCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.BeginQuorumEpochResponse:
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.EndQuorumEpochResponse:
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.FetchResponse:
		return r.Topics[0].Partitions[0].ErrorCode
	}
	return -100
}

func kinds(evs []raft.Event) []raft.EventKind {
	out := make([]raft.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// Resigned -> Unattached bumps the epoch, persisted, and the expired timer
// carries over, so the node is Prospective on its next poll
// (KafkaRaftClient.pollResigned, QuorumState.transitionToUnattached).
func TestResignedMovesToNextEpochWhenElectionTimerExpires(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.isolate(1)
	if err := h.node(1).Resign(h.now, 1); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.expectRole(1, raft.Resigned, 1)
	h.node(1).TakeEvents()
	for h.status(1).Role == raft.Resigned {
		h.advance(10 * time.Millisecond)
	}
	st := h.status(1)
	if st.Role != raft.Prospective || st.Epoch != 2 || st.LeaderID != -1 || st.VotedID != -1 {
		t.Fatalf("after the resigned node's election timeout: %+v, want Prospective in epoch 2", st)
	}
	if ps, _ := h.nodes[1].store.Read(); ps.Epoch != 2 || ps.LeaderID != -1 || ps.VotedID != -1 {
		t.Fatalf("quorum state %+v, want epoch 2 with no leader and no vote", ps)
	}
	evs := h.node(1).TakeEvents()
	var roles []raft.Event
	for _, e := range evs {
		if e.Kind == raft.EventRoleChanged {
			roles = append(roles, e)
		}
	}
	if len(roles) < 2 || roles[0].From != raft.Resigned || roles[0].To != raft.Unattached || roles[0].Epoch != 2 ||
		roles[1].From != raft.Unattached || roles[1].To != raft.Prospective || !roles[1].Time.Equal(roles[0].Time) {
		t.Fatalf("role events %+v, want Resigned->Unattached(2) then Prospective at once", roles)
	}
}

// A resigned node publishes no high watermark (ResignedState).
func TestResignedHighWatermarkUnknown(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	if hw := h.status(1).HighWatermark; hw < 0 {
		t.Fatalf("leader's high watermark %d", hw)
	}
	if err := h.node(1).Resign(h.now, 1); err != nil {
		t.Fatal(err)
	}
	if st := h.status(1); st.Role != raft.Resigned || st.HighWatermark != -1 {
		t.Fatalf("resigned: %+v, want high watermark -1", st)
	}
}

// A leader's quorum-state file names no vote (LeaderState.election).
func TestLeaderQuorumStateHasNoVote(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	if ps, _ := h.nodes[1].store.Read(); ps.LeaderID != 1 || ps.VotedID != -1 || ps.Epoch != 1 {
		t.Fatalf("leader's quorum state %+v, want leader 1, votedId -1", ps)
	}
	// It restarts Resigned all the same, and refuses a second vote.
	h.nodes[1].n = nil
	h.start(1)
	h.expectRole(1, raft.Resigned, 1)
	if resp := h.request(1, 2, voteReq(2, 1, 1, 100, false)).(*kmsg.VoteResponse); resp.Topics[0].Partitions[0].VoteGranted {
		t.Fatal("a restarted leader granted a vote in its own epoch")
	}
}

// Vote, BeginQuorumEpoch and EndQuorumEpoch: an old epoch gets
// FENCED_LEADER_EPOCH and a negative sender INVALID_REQUEST, as in Kafka's
// validateVoterOnlyRequest; INCONSISTENT_VOTER_SET is gone (3.9+). A sender
// outside the static voter set gets INVALID_REQUEST, changes nothing and is
// reported as Unsafe (Kafka, with dynamic voters, would go on).
func TestVoterOnlyRequestErrors(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.node(2).TakeEvents()
	for _, c := range []struct {
		name string
		req  kmsg.Request
		from int32
		code int16
		bad  bool
	}{
		{"vote from a non-voter", voteReq(9, 5, 1, 100, false), 9, 42, true},
		{"pre-vote from a non-voter", voteReq(9, 5, 1, 100, true), 9, 42, true},
		{"BeginQuorumEpoch from a non-voter", beginReq(9, 5), 9, 42, true},
		{"EndQuorumEpoch from a non-voter", endReq(9, 1, 2), 9, 42, true},
		{"vote from a negative id", voteReq(-1, 5, 1, 100, false), -1, 42, false},
		{"pre-vote in an old epoch", voteReq(3, 0, 0, 100, true), 3, 74, false},
		{"BeginQuorumEpoch in an old epoch", beginReq(3, 0), 3, 74, false},
		{"EndQuorumEpoch in an old epoch", endReq(3, 0), 3, 74, false},
		{"pre-vote from a non-voter in an old epoch", voteReq(9, 0, 0, 100, true), 9, 74, false},
	} {
		resp := h.request(2, c.from, c.req)
		if code := partitionCode(resp); code != c.code {
			t.Errorf("%s: code %d (%s), want %d", c.name, code, raft.ErrorName(code), c.code)
		}
		evs := h.node(2).TakeEvents()
		if c.bad != (h.unsafe != nil) || c.bad != (len(evs) == 1 && evs[0].Kind == raft.EventUnsafe && evs[0].Refused != "") {
			t.Errorf("%s: unsafe error %v, events %+v", c.name, h.unsafe, evs)
		}
		h.expectRole(2, raft.Follower, 1)
	}
}

// No candidate backoff (Kafka 4.1+): a candidate whose vote is rejected
// stops asking and waits out its election timeout, then goes back to
// Prospective in the same epoch; so does one whose election times out.
func TestCandidateWaitsOutElectionTimeoutAfterRejection(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	for h.status(1).Role != raft.Candidate {
		h.advance(10 * time.Millisecond)
		for _, m := range h.take(isKind(kmsg.Vote.Int16())) {
			if m.Request != nil {
				h.answer(m, voteResponse(m, 0, -1, true))
			}
		}
	}
	h.expectRole(1, raft.Candidate, 1)
	electionDeadline := h.node(1).NextDeadline()
	votes := h.take(isKind(kmsg.Vote.Int16()))
	if len(votes) != 2 {
		t.Fatalf("candidate sent %d vote requests, want 2", len(votes))
	}
	for _, m := range votes {
		h.answer(m, voteResponse(m, 1, -1, false))
	}
	if d := h.node(1).NextDeadline(); !d.Equal(electionDeadline) {
		t.Fatalf("rejected candidate wakes at %v, want its election deadline %v (no backoff)", d.Sub(h.now), electionDeadline.Sub(h.now))
	}
	h.advance(electionDeadline.Sub(h.now) - time.Millisecond)
	h.expectRole(1, raft.Candidate, 1)
	if n := len(h.pending(isKind(kmsg.Vote.Int16()))); n != 0 {
		t.Fatalf("a rejected candidate sent %d more vote requests", n)
	}
	h.advance(time.Millisecond)
	h.expectRole(1, raft.Prospective, 1)

	// An election that times out unanswered goes back the same way.
	for h.status(1).Role != raft.Candidate {
		h.advance(10 * time.Millisecond)
		for _, m := range h.take(isKind(kmsg.Vote.Int16())) {
			if m.Request != nil && m.Request.(*kmsg.VoteRequest).Topics[0].Partitions[0].PreVote {
				h.answer(m, voteResponse(m, 1, -1, true))
			}
		}
	}
	h.expectRole(1, raft.Candidate, 2)
	deadline := h.node(1).NextDeadline()
	h.take(isKind(kmsg.Vote.Int16()))
	h.advance(deadline.Sub(h.now))
	h.expectRole(1, raft.Prospective, 2)
}

// A prospective node that grants a binding vote stays Prospective, with
// the vote persisted (QuorumState.prospectiveAddVotedState).
func TestProspectiveGrantingVoteStaysProspective(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	// A pre-vote of epoch 1 moves node 1 to epoch 1, unattached.
	h.request(1, 3, voteReq(3, 1, 0, 0, true))
	h.expectRole(1, raft.Unattached, 1)
	for h.status(1).Role != raft.Prospective {
		h.advance(10 * time.Millisecond)
	}
	h.node(1).TakeEvents()
	resp := h.request(1, 2, voteReq(2, 1, 0, 0, false)).(*kmsg.VoteResponse)
	if !resp.Topics[0].Partitions[0].VoteGranted {
		t.Fatal("prospective node refused an up-to-date candidate of its epoch")
	}
	st := h.status(1)
	if st.Role != raft.Prospective || st.Epoch != 1 || st.VotedID != 2 {
		t.Fatalf("after voting: %+v, want Prospective in epoch 1 voted for 2", st)
	}
	if ps, _ := h.nodes[1].store.Read(); ps.Epoch != 1 || ps.VotedID != 2 {
		t.Fatalf("vote not persisted: %+v", ps)
	}
	evs := h.node(1).TakeEvents()
	if len(evs) != 2 || evs[0].Kind != raft.EventRoleChanged || evs[0].From != raft.Prospective || evs[0].To != raft.Prospective ||
		evs[0].Voted != 2 || evs[0].FromVoted != -1 || evs[1].Kind != raft.EventVoteGranted || evs[1].Candidate != 2 || evs[1].PreVote {
		t.Fatalf("events %+v", evs)
	}
	if resp := h.request(1, 3, voteReq(3, 1, 0, 0, false)).(*kmsg.VoteResponse); resp.Topics[0].Partitions[0].VoteGranted {
		t.Fatal("a second vote in the epoch granted")
	}
}

// KIP-1166: a parked Fetch completes when the high watermark moves, and a
// fetcher whose high watermark (Fetch v18) is behind the leader's is
// answered at once; a fetch without the field (older versions) parks.
func TestFetchPurgatoryAndHighWatermark(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	h.winElection(1)
	// Node 2 holds the LeaderChange record: high watermark 1.
	fetchPart(t, h.request(1, 2, fetchRequest(2, 1, 1, 1, 0)))
	h.manualFlush = true
	h.append(1, "a")
	h.advance(100 * time.Millisecond) // linger: log end 2, not yet flushed
	if hw := h.status(1).HighWatermark; hw != 1 {
		t.Fatalf("high watermark %d, want 1", hw)
	}
	// Node 2 holds everything and knows high watermark 1; until the
	// leader's own flush the high watermark stays: nothing new, park.
	req := fetchRequest(2, 1, 2, 1, 500)
	req.Topics[0].Partitions[0].HighWatermark = 1
	if resp := h.request(1, 2, req); resp != nil {
		t.Fatalf("a caught-up fetch was answered at once: %+v", fetchPart(t, resp))
	}
	// The leader's flush moves the high watermark, and node 2's parked
	// fetch is answered in the same step.
	h.flush(1)
	parked := h.take(func(m raft.Message) bool { return m.To == 2 && m.Response != nil })
	if len(parked) != 1 || fetchPart(t, parked[0].Response).HighWatermark != 2 {
		t.Fatalf("parked fetch after the high watermark moved: %+v", parked)
	}
	h.manualFlush = false
	// A fetcher that knows high watermark 0 is answered at once.
	req = fetchRequest(2, 1, 2, 1, 500)
	req.Topics[0].Partitions[0].HighWatermark = 0
	if resp := h.request(1, 2, req); resp == nil || fetchPart(t, resp).HighWatermark != 2 {
		t.Fatalf("a fetcher behind the high watermark was parked: %v", resp)
	}
	// Without the field (it defaults to the maximum), the fetch parks, and
	// on expiry gets the same empty answer with the high watermark.
	if resp := h.request(1, 2, fetchRequest(2, 1, 2, 1, 500)); resp != nil {
		t.Fatal("a fetch without the fetcher's high watermark was answered at once")
	}
	h.advance(600 * time.Millisecond)
	if got := h.take(func(m raft.Message) bool { return m.To == 2 && m.ID == 1<<40 }); len(got) != 1 ||
		fetchPart(t, got[0].Response).HighWatermark != 2 || len(fetchPart(t, got[0].Response).RecordBatches) != 0 {
		t.Fatalf("expired fetch answer %+v", got)
	}
}

// Check-quorum credit comes only from valid fetches (and FetchSnapshot):
// voters that only ever fetch a diverging position do not keep the leader
// in office (LeaderState.updateReplicaState is only called for VALID).
func TestCheckQuorumIgnoresDivergingFetches(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	h.winElection(1)
	for range 8 { // 4 s, past 1.5 fetch timeouts
		h.advance(500 * time.Millisecond)
		if h.status(1).Role != raft.Leader {
			return
		}
		for _, id := range []int32{2, 3} {
			if p := fetchPart(t, h.request(1, id, fetchRequest(id, 1, 5, 1, 0))); p.DivergingEpoch.Epoch < 0 {
				t.Fatalf("fetch at 5 of epoch 1 not diverging: %+v", p)
			}
		}
	}
	t.Fatalf("leader kept in office by diverging fetches alone: %+v", h.status(1))
}

// A voter follower whose leader's fetch failed fetches from another voter to
// learn of a leader change (maybeSendFetchToBestNode), as observers do.
func TestVoterFollowerFetchesFromOtherVoterWhenLeaderFails(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	h.request(2, 1, beginReq(1, 1))
	h.expectRole(2, raft.Follower, 1)
	fetch := followerFetch(t, h, 2, 1)
	if err := h.node(2).Step(h.now, raft.Message{From: 1, To: 2, ID: fetch.ID, Err: errors.New("connection refused")}); err != nil {
		t.Fatal(err)
	}
	out := h.node(2).Outbox()
	if len(out) != 1 || out[0].To != 3 || out[0].Request == nil || out[0].Request.Key() != kmsg.Fetch.Int16() {
		t.Fatalf("after its leader's fetch failed node 2 sent %v, want a Fetch to voter 3", out)
	}
}

// followerFetch takes the Fetch that node id sent to the fake leader.
func followerFetch(t *testing.T, h *harness, id, leader int32) raft.Message {
	t.Helper()
	for range 100 {
		if got := h.take(func(m raft.Message) bool {
			return m.From == id && m.To == leader && m.Request != nil && m.Request.Key() == kmsg.Fetch.Int16()
		}); len(got) > 0 {
			return got[0]
		}
		h.advance(10 * time.Millisecond)
	}
	t.Fatalf("node %d sent no fetch to %d", id, leader)
	return raft.Message{}
}

// Epochs that cannot be incremented are refused from the wire with
// INVALID_REQUEST and an Unsafe event, and from disk at start-up.
func TestEpochsThatCannotBeIncrementedAreRefused(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	h.node(2).TakeEvents()
	const top = math.MaxInt32
	for _, c := range []struct {
		name string
		req  kmsg.Request
		from int32
	}{
		{"vote", voteReq(3, top, 1, 100, false), 3},
		{"pre-vote", voteReq(3, top, 1, 100, true), 3},
		{"vote v0", func() kmsg.Request { r := voteReq(3, top, 1, 100, false); r.Version = 0; return r }(), 3},
		{"BeginQuorumEpoch", beginReq(3, top), 3},
		{"EndQuorumEpoch", endReq(3, top), 3},
	} {
		resp := h.request(2, c.from, c.req)
		if code := partitionCode(resp); code != 42 || h.unsafe == nil {
			t.Errorf("%s with epoch 2^31-1: code %d, unsafe %v; want INVALID_REQUEST and ErrUnsafe", c.name, code, h.unsafe)
		}
		if evs := h.node(2).TakeEvents(); len(evs) != 1 || evs[0].Kind != raft.EventUnsafe || !strings.Contains(evs[0].Refused, "2147483647") {
			t.Errorf("%s: events %+v", c.name, evs)
		}
		h.expectRole(2, raft.Follower, 1)
	}
	// The leader refuses a Fetch in that epoch.
	if p := fetchPart(t, h.request(1, 2, fetchRequest(2, top, 1, 1, 0))); p.ErrorCode != 42 || h.unsafe == nil {
		t.Errorf("fetch with epoch 2^31-1: %+v", p)
	}
	// A response naming it is ignored.
	h2 := newHarness(t, []int32{1, 2, 3}, nil, 1, 3)
	h2.request(2, 1, beginReq(1, 1))
	fetch := followerFetch(t, h2, 2, 1)
	resp := fetch.Request.(*kmsg.FetchRequest).ResponseKind().(*kmsg.FetchResponse)
	p := kmsg.NewFetchResponseTopicPartition()
	p.ErrorCode = 74
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 3, top
	tp := kmsg.NewFetchResponseTopic()
	tp.TopicID = raft.MetadataTopicID
	tp.Partitions = []kmsg.FetchResponseTopicPartition{p}
	resp.Topics = []kmsg.FetchResponseTopic{tp}
	if err := h2.node(2).Step(h2.now, raft.Message{From: 1, To: 2, ID: fetch.ID, Response: resp}); !errors.Is(err, raft.ErrUnsafe) {
		t.Errorf("response with epoch 2^31-1: %v, want ErrUnsafe", err)
	}
	h2.expectRole(2, raft.Follower, 1)

	// From disk.
	cfg := h.config(2)
	for name, st := range map[string]raft.ElectionState{
		"epoch":  {Epoch: top, LeaderID: -1, VotedID: -1, Voters: []int32{1, 2, 3}},
		"leader": {Epoch: 4, LeaderID: 77, VotedID: -1, Voters: []int32{1, 2, 3}},
		"vote":   {Epoch: 4, LeaderID: -1, VotedID: 77, Voters: []int32{1, 2, 3}},
	} {
		store := &raft.MemoryQuorumStateStore{}
		_ = store.Write(st)
		if _, err := raft.New(cfg, raft.NewMemoryLog(), store, &recorder{}, rand.New(rand.NewPCG(1, 1)), h.now); err == nil {
			t.Errorf("started from a quorum state with a bad %s: %+v", name, st)
		}
	}
}
