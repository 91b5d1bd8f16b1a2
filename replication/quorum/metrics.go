package quorum

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// Metrics is the node's raft-metrics (kafka.server:type=raft-metrics):
// what its state machine measures (raft.Metrics) and what only the driver
// sees.
type Metrics struct {
	raft.Metrics
	// NumberUnknownVoterConnections is number-unknown-voter-connections:
	// the other voters whose address the node does not know (Kafka's
	// "connection information is not cached"). The voters are static and
	// known from the start, as in Kafka, so it is 0 once every voter's
	// server has listened once.
	NumberUnknownVoterConnections int
	// PollIdle and PollSpan hold poll-idle-ratio-avg: for every wait of
	// the node's loop, its idle milliseconds and the milliseconds since
	// the previous wait ended (work and wait), recorded as it ends.
	PollIdle, PollSpan raft.Window
}

// PollIdleRatioAvg is poll-idle-ratio-avg at now: the share of the window
// the loop spent waiting for work rather than doing it, 1 when it holds
// nothing yet (Kafka's TimeRatio default).
func (m *Metrics) PollIdleRatioAvg(now time.Time) float64 {
	span := m.PollSpan.Sum(now)
	if span <= 0 {
		return 1
	}
	return min(m.PollIdle.Sum(now)/span, 1)
}

// Metrics returns the running node's raft-metrics as last published (at
// most a few milliseconds old; the windows are read at the caller's time),
// and false when the node is not running: a stopped node, like a stopped
// Kafka process, reports none.
func (n *Node) Metrics() (Metrics, bool) {
	m := n.metrics.Load()
	if m == nil {
		return Metrics{}, false
	}
	return *m, true
}

// pollMetrics is the driver's part of the metrics: the loop's waits.
type pollMetrics struct {
	idle, span raft.Window
	lastEnd    time.Time
}

// waited records one wait of the loop, from start to end. The first only
// starts the measure, as Kafka's TimeRatio discards its first record.
func (p *pollMetrics) waited(start, end time.Time) {
	if !p.lastEnd.IsZero() {
		p.idle.Record(float64(max(end.Sub(start), 0))/float64(time.Millisecond), end)
		p.span.Record(float64(max(end.Sub(p.lastEnd), 0))/float64(time.Millisecond), end)
	}
	p.lastEnd = end
}

// publishMetrics publishes the node's metrics with its status.
func (in *instance) publishMetrics() {
	m := &Metrics{
		Metrics:                       in.raft.Metrics(),
		NumberUnknownVoterConnections: in.unknownVoters(),
		PollIdle:                      in.poll.idle,
		PollSpan:                      in.poll.span,
	}
	in.n.metrics.Store(m)
}

// unknownVoters counts the other voters whose address the node lacks.
func (in *instance) unknownVoters() int {
	unknown := 0
	for _, v := range in.cfg.Raft.Voters {
		if v == in.id || in.clients[v] != nil {
			continue
		}
		if addr, ok := in.cfg.Peers(v); !ok || addr == "" {
			unknown++
		}
	}
	return unknown
}
