package raft

import (
	"math"
	"time"
)

// The sampled window of Kafka's metrics library (MetricConfig's defaults,
// metrics.num.samples and metrics.sample.window.ms): a windowed stat keeps
// up to MetricsSamples+1 samples of MetricsWindow each and forgets a sample
// whose last event is MetricsSamples windows old.
const (
	MetricsSamples = 2
	MetricsWindow  = 30 * time.Second
)

// The values of raft-metrics' current-state (KafkaRaftMetrics.initialize).
const (
	StateLeader           = "leader"
	StateProspective      = "prospective"
	StateProspectiveVoted = "prospective-voted"
	StateCandidate        = "candidate"
	StateUnattached       = "unattached"
	StateUnattachedVoted  = "unattached-voted"
	StateFollower         = "follower"
	StateObserver         = "observer"
)

// CurrentState is current-state for a role, the vote of the node's epoch
// (-1 for none) and whether the node is a voter, computed as Kafka's
// gauge does: a follower that is no voter is an observer, and a resigned
// leader, like anything else not named, is unattached.
func CurrentState(r Role, voted int32, voter bool) string {
	switch {
	case r == Leader:
		return StateLeader
	case r == Prospective && voted < 0:
		return StateProspective
	case r == Prospective:
		return StateProspectiveVoted
	case r == Candidate:
		return StateCandidate
	case r == Unattached && voted >= 0:
		return StateUnattachedVoted
	case r == Follower && voter:
		return StateFollower
	case r == Follower:
		return StateObserver
	}
	return StateUnattached
}

// sample is one sample of a Window: its start, its last event (Unix
// nanoseconds), and the count, sum and largest of the values recorded.
type sample struct {
	start, last int64
	count       int64
	sum, max    float64
}

func newSample(t int64) sample { return sample{start: t, last: t, max: math.Inf(-1)} }

// Window is a stat over Kafka's sampled window (SampledStat with Avg, Max
// and a WindowedSum for Rate): Record adds a value to the current sample,
// which is replaced by a new one once it is MetricsWindow old, in a ring
// of MetricsSamples+1. Reading never changes it: a sample whose last event
// is MetricsSamples×MetricsWindow before the reading counts as empty and
// starting then, which is what Kafka's purge on reading makes of it. It is
// a value of fixed size: copying it copies the stat, and recording
// allocates nothing. The zero Window has no samples.
type Window struct {
	s   [MetricsSamples + 1]sample
	n   int8 // samples in use
	cur int8
}

// Record adds v at time at.
func (w *Window) Record(v float64, at time.Time) {
	t := at.UnixNano()
	if w.n == 0 {
		w.s[0], w.n, w.cur = newSample(t), 1, 0
	}
	if t-w.s[w.cur].start >= int64(MetricsWindow) {
		w.cur = (w.cur + 1) % int8(len(w.s))
		if w.cur >= w.n {
			w.n++
		}
		w.s[w.cur] = newSample(t)
	}
	c := &w.s[w.cur]
	c.count++
	c.sum += v
	c.max = max(c.max, v)
	c.last = t
}

// live returns the samples as a reading at now sees them.
func (w *Window) live(now time.Time) (out [MetricsSamples + 1]sample, n int) {
	t := now.UnixNano()
	for i := range int(w.n) {
		s := w.s[i]
		if t-s.last >= MetricsSamples*int64(MetricsWindow) {
			s = newSample(t)
		}
		out[i] = s
	}
	return out, int(w.n)
}

// Count is the number of values recorded in the window.
func (w *Window) Count(now time.Time) int64 {
	s, n := w.live(now)
	var c int64
	for i := range n {
		c += s[i].count
	}
	return c
}

// Sum is the sum of the values recorded in the window.
func (w *Window) Sum(now time.Time) float64 {
	s, n := w.live(now)
	var sum float64
	for i := range n {
		sum += s[i].sum
	}
	return sum
}

// Avg is the mean of the values in the window (Kafka's Avg), NaN when it
// holds none.
func (w *Window) Avg(now time.Time) float64 {
	if c := w.Count(now); c > 0 {
		return w.Sum(now) / float64(c)
	}
	return math.NaN()
}

// Max is the largest value in the window (Kafka's Max), NaN when it holds
// none.
func (w *Window) Max(now time.Time) float64 {
	s, n := w.live(now)
	m, c := math.Inf(-1), int64(0)
	for i := range n {
		m, c = max(m, s[i].max), c+s[i].count
	}
	if c == 0 {
		return math.NaN()
	}
	return m
}

// Rate is the window's sum per second (Kafka's Rate over a WindowedSum):
// divided by the time since the oldest sample started, counted as at
// least MetricsSamples-1 whole windows plus the current one's part, so
// that a young window does not inflate it.
func (w *Window) Rate(now time.Time) float64 {
	s, n := w.live(now)
	t := now.UnixNano()
	oldest, sum := t, 0.0
	for i := range n {
		oldest = min(oldest, s[i].start)
		sum += s[i].sum
	}
	elapsed := t - oldest
	win := int64(MetricsWindow)
	if full := elapsed / win; full < MetricsSamples-1 {
		elapsed += (MetricsSamples - 1 - full) * win
	}
	elapsed = max(elapsed, int64(time.Millisecond))
	return sum / (float64(elapsed) / float64(time.Second))
}

// Metrics is what a node measures of Kafka's raft-metrics
// (kafka.server:type=raft-metrics, KafkaRaftMetrics): the gauges as of the
// call to Node.Metrics, and the windowed stats, which are read at a time of
// the reader's choice. The driver adds poll-idle-ratio-avg and
// number-unknown-voter-connections, which only it can see.
type Metrics struct {
	// CurrentState is current-state: one of the State* values.
	CurrentState string
	// CurrentLeader is current-leader: the leader this node knows in its
	// epoch (itself when it leads or has resigned), -1 for none.
	CurrentLeader int32
	// CurrentEpoch is current-epoch.
	CurrentEpoch int32
	// CurrentVote is current-vote: this node when it leads or is a
	// candidate, else the candidate it voted for in its epoch, -1 for none.
	CurrentVote int32
	// HighWatermark is high-watermark, -1 while unknown (and on a resigned
	// leader).
	HighWatermark int64
	// LogEndOffset and LogEndEpoch are log-end-offset and log-end-epoch:
	// the log's end offset and the epoch of its last batch (of the
	// snapshot it starts from when it holds none, 0 for an empty log).
	LogEndOffset int64
	LogEndEpoch  int32
	// NumberOfVoters is number-of-voters, on every node.
	NumberOfVoters int
	// LeaderMetrics says whether the leader-only metrics below exist:
	// Kafka adds them when a node becomes leader and removes them when it
	// stops leading.
	LeaderMetrics bool
	// NumberOfObservers is number-of-observers: the observers the leader
	// tracks (those that fetched in the last five minutes).
	NumberOfObservers int
	// UncommittedVoterChange is uncommitted-voter-change: 1 while a voter
	// change is not committed (VoterChange); always 0 in a static quorum.
	UncommittedVoterChange int

	// CommitLatency holds commit-latency-avg/max: for each batch the
	// leader wrote, once the high watermark passes it, the milliseconds
	// from its write to that moment divided by its records (Kafka's
	// appendBatch), recorded at the write.
	CommitLatency Window
	// ElectionLatency holds election-latency-avg/max: milliseconds from
	// becoming prospective or candidate (the later of the two) to becoming
	// leader or follower.
	ElectionLatency Window
	// FetchRecords holds fetch-records-rate: records appended from the
	// leader's Fetch responses.
	FetchRecords Window
	// AppendRecords holds append-records-rate: records the leader
	// appended, control records included.
	AppendRecords Window
}

// nodeMetrics is what the node records for Metrics beside its state.
type nodeMetrics struct {
	commit, election, fetch, append Window
	// electionStart is when the node last became prospective or
	// candidate without winning at once; zero once the election ended.
	electionStart time.Time
	// writes are the leader's batches waiting for the high watermark, in
	// offset order. The slice is reused, so the commit path allocates
	// nothing once it has grown.
	writes []leaderWrite
}

// leaderWrite is one batch the leader wrote: its last offset, its records
// and when it was written.
type leaderWrite struct {
	last    int64
	records int64
	at      time.Time
}

// Metrics returns the node's raft-metrics. It allocates nothing.
func (n *Node) Metrics() Metrics {
	m := Metrics{
		CurrentState:    CurrentState(n.role, n.voted, n.voter),
		CurrentLeader:   n.leader,
		CurrentEpoch:    n.epoch,
		CurrentVote:     n.voted,
		HighWatermark:   n.highWatermark(),
		LogEndOffset:    n.log.LogEndOffset(),
		LogEndEpoch:     n.lastEpoch(),
		NumberOfVoters:  len(n.voterIDs),
		CommitLatency:   n.metrics.commit,
		ElectionLatency: n.metrics.election,
		FetchRecords:    n.metrics.fetch,
		AppendRecords:   n.metrics.append,
	}
	if n.role == Leader || n.role == Candidate {
		m.CurrentVote = n.id
	}
	if n.role == Leader {
		m.LeaderMetrics = true
		m.NumberOfObservers = len(n.lead.observers)
		if _, ok := n.VoterChange(); ok {
			m.UncommittedVoterChange = 1
		}
	}
	return m
}

// electionStarted notes the start of an election that was not won at once
// (onBecomeProspective, onBecomeCandidate).
func (n *Node) electionStarted(now time.Time) { n.metrics.electionStart = now }

// electionEnded records the election's latency on becoming leader or
// follower (maybeUpdateElectionLatency).
func (n *Node) electionEnded(now time.Time) {
	m := &n.metrics
	if m.electionStart.IsZero() {
		return
	}
	m.election.Record(millis(now.Sub(m.electionStart)), now)
	m.electionStart = time.Time{}
}

// leaderWrote counts a batch the leader wrote and waits for its commit.
func (n *Node) leaderWrote(base, last int64, now time.Time) {
	m := &n.metrics
	recs := last - base + 1
	m.append.Record(float64(recs), now)
	m.writes = append(m.writes, leaderWrite{last: last, records: recs, at: now})
}

// leaderCommitted records the commit latency of the batches below the
// high watermark hwm.
func (n *Node) leaderCommitted(hwm int64, now time.Time) {
	m := &n.metrics
	i := 0
	for ; i < len(m.writes) && m.writes[i].last < hwm; i++ {
		w := m.writes[i]
		m.commit.Record(millis(max(now.Sub(w.at), 0))/float64(w.records), w.at)
	}
	if i > 0 {
		m.writes = m.writes[:copy(m.writes, m.writes[i:])]
	}
}

// followerAppended counts records appended from a Fetch response.
func (n *Node) followerAppended(records int64, now time.Time) {
	if records > 0 {
		n.metrics.fetch.Record(float64(records), now)
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
