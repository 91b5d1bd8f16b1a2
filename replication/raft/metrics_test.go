package raft_test

import (
	"math"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// current-state follows KafkaRaftMetrics' gauge: a resigned leader reports
// unattached, a follower that is no voter observer, and a vote cast in the
// epoch shows as -voted on unattached and prospective nodes.
func TestCurrentStateNames(t *testing.T) {
	cases := []struct {
		role  raft.Role
		voted int32
		voter bool
		want  string
	}{
		{raft.Leader, -1, true, "leader"},
		{raft.Prospective, -1, true, "prospective"},
		{raft.Prospective, 2, true, "prospective-voted"},
		{raft.Candidate, 1, true, "candidate"},
		{raft.Unattached, -1, true, "unattached"},
		{raft.Unattached, 2, true, "unattached-voted"},
		{raft.Follower, 2, true, "follower"},
		{raft.Follower, -1, false, "observer"},
		{raft.Unattached, -1, false, "unattached"},
		{raft.Resigned, -1, true, "unattached"},
	}
	for _, c := range cases {
		if got := raft.CurrentState(c.role, c.voted, c.voter); got != c.want {
			t.Errorf("CurrentState(%v, voted %d, voter %v) = %q, want %q", c.role, c.voted, c.voter, got, c.want)
		}
	}
}

// The window is Kafka's sampled stat: 30 s samples, two of them counted,
// a sample forgotten once its last event is 60 s old, and a rate divided
// by at least one whole window.
func TestWindowSemantics(t *testing.T) {
	var w raft.Window
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	if !math.IsNaN(w.Avg(t0)) || !math.IsNaN(w.Max(t0)) || w.Rate(t0) != 0 {
		t.Fatalf("empty window: avg %v max %v rate %v, want NaN NaN 0", w.Avg(t0), w.Max(t0), w.Rate(t0))
	}
	w.Record(10, at(0))
	w.Record(20, at(10))
	check := func(when float64, avg, mx, rate float64, count int64) {
		t.Helper()
		now := at(when)
		same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
		if !same(w.Avg(now), avg) || !same(w.Max(now), mx) || w.Rate(now) != rate || w.Count(now) != count {
			t.Errorf("at %vs: avg %v max %v rate %v count %d, want %v %v %v %d",
				when, w.Avg(now), w.Max(now), w.Rate(now), w.Count(now), avg, mx, rate, count)
		}
	}
	check(10, 15, 20, 30.0/40, 2) // a young window counts as 30 s more
	w.Record(30, at(40))          // the first sample is complete: a new one
	check(40, 20, 30, 60.0/40, 3)
	check(70, 30, 30, 30.0/30, 1) // the first sample's last event is 60 s old
	check(100, math.NaN(), math.NaN(), 0, 0)
	// The ring holds three samples: a fourth replaces the oldest.
	w = raft.Window{}
	for i := range 4 {
		w.Record(1, at(float64(30*i)))
	}
	check(90, 1, 1, 2.0/30, 2) // the samples of 60 s and 90 s, over 30 s
	if n := testing.AllocsPerRun(100, func() { w.Record(1, at(95)) }); n != 0 {
		t.Errorf("Record allocates %v times", n)
	}
}

// A scripted election and commits with fake voters, so every time is the
// test's: election latency runs from becoming candidate (the later start,
// as Kafka's updateElectionStartMs overwrites the prospective one) to
// leading; commit latency from a batch's write to the high watermark
// passing it, per record.
func TestMetricsOfAScriptedElectionAndCommits(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2, 3)
	n := h.node(1)
	if m := n.Metrics(); m.CurrentState != "unattached" || m.CurrentLeader != -1 || m.CurrentVote != -1 ||
		m.CurrentEpoch != 0 || m.HighWatermark != -1 || m.NumberOfVoters != 3 || m.LeaderMetrics {
		t.Fatalf("a new voter: %+v", m)
	}
	for n.Status().Role != raft.Prospective {
		h.advance(time.Millisecond)
	}
	if m := n.Metrics(); m.CurrentState != "prospective" {
		t.Fatalf("current-state %q, want prospective", m.CurrentState)
	}
	grant := func() {
		t.Helper()
		votes := h.take(isKind(kmsg.Vote.Int16()))
		if len(votes) != 2 {
			t.Fatalf("%d vote requests, want 2", len(votes))
		}
		for _, m := range votes {
			p := m.Request.(*kmsg.VoteRequest).Topics[0].Partitions[0]
			h.answer(m, voteResponse(m, p.CandidateEpoch, -1, true))
		}
	}
	h.advance(30 * time.Millisecond)
	grant() // pre-votes: candidate now
	if m := n.Metrics(); m.CurrentState != "candidate" || m.CurrentVote != 1 || m.CurrentEpoch != 1 {
		t.Fatalf("after the pre-vote: %+v", m)
	}
	h.advance(20 * time.Millisecond)
	tLead := h.now
	grant() // votes: leader now
	m := n.Metrics()
	if m.CurrentState != "leader" || m.CurrentLeader != 1 || m.CurrentVote != 1 || !m.LeaderMetrics ||
		m.NumberOfObservers != 0 || m.UncommittedVoterChange != 0 {
		t.Fatalf("the leader: %+v", m)
	}
	if c, avg, mx := m.ElectionLatency.Count(h.now), m.ElectionLatency.Avg(h.now), m.ElectionLatency.Max(h.now); c != 1 || avg != 20 || mx != 20 {
		t.Fatalf("election latency: count %d avg %v max %v, want 1 sample of 20 ms", c, avg, mx)
	}
	h.take(isKind(kmsg.BeginQuorumEpoch.Int16()))

	// The LeaderChange record (offset 0) commits 10 ms after its write.
	h.now = h.now.Add(10 * time.Millisecond)
	if hw := fetchPart(t, h.request(1, 2, fetchRequest(2, 1, 1, 1, 0))).HighWatermark; hw != 1 {
		t.Fatalf("high watermark %d, want 1", hw)
	}
	// Four records, written after the 25 ms linger and the 2 ms more a
	// leader gathers while no fetch waits, commit 60 ms later: 15 ms a
	// record.
	h.append(1, "a", "b", "c", "d")
	h.advance(27 * time.Millisecond)
	if st := n.Status(); st.LogEndOffset != 5 || st.FlushedOffset != 5 {
		t.Fatalf("log end %d, flushed %d: want 5 after the linger", st.LogEndOffset, st.FlushedOffset)
	}
	h.now = h.now.Add(60 * time.Millisecond)
	fetchPart(t, h.request(1, 2, fetchRequest(2, 1, 5, 1, 0)))
	// An observer fetches: the leader tracks it.
	fetchPart(t, h.request(1, 101, fetchRequest(101, 1, 5, 1, 0)))

	m = n.Metrics()
	if m.HighWatermark != 5 || m.LogEndOffset != 5 || m.LogEndEpoch != 1 || m.NumberOfObservers != 1 {
		t.Fatalf("after the commits: %+v", m)
	}
	if c, avg, mx := m.CommitLatency.Count(h.now), m.CommitLatency.Avg(h.now), m.CommitLatency.Max(h.now); c != 2 || avg != 12.5 || mx != 15 {
		t.Fatalf("commit latency: count %d avg %v max %v, want 2 samples, 12.5 and 15 ms", c, avg, mx)
	}
	// Five records appended (the LeaderChange and four), over a window
	// that counts as at least 30 s: 10 s after the first, 5/40 a second.
	later := tLead.Add(10 * time.Second)
	if r := m.AppendRecords.Rate(later); r != 5.0/40 {
		t.Fatalf("append-records-rate %v, want %v", r, 5.0/40)
	}
	if r := m.FetchRecords.Rate(later); r != 0 {
		t.Fatalf("the leader's fetch-records-rate %v, want 0", r)
	}
	if n := testing.AllocsPerRun(100, func() { _ = h.node(1).Metrics() }); n != 0 {
		t.Errorf("Metrics allocates %v times", n)
	}

	// A resigned leader reports unattached, no high watermark, itself as
	// the leader, and no leader-only metrics.
	if err := n.Resign(h.now, 1); err != nil {
		t.Fatal(err)
	}
	if m := n.Metrics(); m.CurrentState != "unattached" || m.HighWatermark != -1 || m.CurrentLeader != 1 || m.CurrentVote != -1 || m.LeaderMetrics {
		t.Fatalf("resigned: %+v", m)
	}
}

// Followers and observers count the records they append from the leader;
// a follower that never stood for election records no election latency.
func TestMetricsOfFollowersAndObservers(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, []int32{101})
	h.elect(1)
	h.append(1, "a", "b", "c")
	h.advance(time.Second)
	for _, c := range []struct {
		id    int32
		state string
		vote  int32
	}{{2, "follower", 1}, {3, "follower", 1}, {101, "observer", -1}} {
		m := h.node(c.id).Metrics()
		if m.CurrentState != c.state || m.CurrentLeader != 1 || m.CurrentEpoch != 1 || m.CurrentVote != c.vote ||
			m.HighWatermark != 4 || m.LogEndOffset != 4 || m.LogEndEpoch != 1 || m.NumberOfVoters != 3 || m.LeaderMetrics {
			t.Errorf("node %d: %+v", c.id, m)
		}
		if s := m.FetchRecords.Sum(h.now); s != 4 {
			t.Errorf("node %d fetched %v records, want 4 (the LeaderChange and three)", c.id, s)
		}
		if s := m.AppendRecords.Sum(h.now); s != 0 {
			t.Errorf("node %d appended %v records as leader, want 0", c.id, s)
		}
		if c := m.ElectionLatency.Count(h.now); c != 0 {
			t.Errorf("node %d: %d election latencies, want none", c, c)
		}
	}
	if m := h.node(1).Metrics(); m.NumberOfObservers != 1 || m.AppendRecords.Sum(h.now) != 4 || m.CommitLatency.Count(h.now) != 2 {
		t.Errorf("leader: observers %d, appended %v, commits %d; want 1, 4, 2",
			m.NumberOfObservers, m.AppendRecords.Sum(h.now), m.CommitLatency.Count(h.now))
	}
}
