package view

import (
	"math"
	"strconv"
)

// RaftMetricsGroup is the JMX name of the metrics RaftMetrics mirrors.
const RaftMetricsGroup = "kafka.server:type=raft-metrics"

// RaftMetrics is one running node's raft-metrics, with Kafka's names as
// JSON keys (kafka.server:type=raft-metrics, KafkaRaftMetrics). Windowed
// values use Kafka's sampled window (2 samples of 30 s); an average or
// maximum over a window that holds no sample is Kafka's NaN, null in JSON.
// The leader-only metrics are absent on other nodes, as Kafka removes them.
type RaftMetrics struct {
	CurrentState                  string   `json:"current-state"`
	CurrentLeader                 int32    `json:"current-leader"`
	CurrentEpoch                  int32    `json:"current-epoch"`
	CurrentVote                   int32    `json:"current-vote"`
	HighWatermark                 int64    `json:"high-watermark"`
	LogEndOffset                  int64    `json:"log-end-offset"`
	LogEndEpoch                   int32    `json:"log-end-epoch"`
	NumberUnknownVoterConnections int      `json:"number-unknown-voter-connections"`
	NumberOfVoters                int      `json:"number-of-voters"`
	NumberOfObservers             *int     `json:"number-of-observers,omitempty"`
	UncommittedVoterChange        *int     `json:"uncommitted-voter-change,omitempty"`
	CommitLatencyAvg              *float64 `json:"commit-latency-avg"`
	CommitLatencyMax              *float64 `json:"commit-latency-max"`
	ElectionLatencyAvg            *float64 `json:"election-latency-avg"`
	ElectionLatencyMax            *float64 `json:"election-latency-max"`
	FetchRecordsRate              float64  `json:"fetch-records-rate"`
	AppendRecordsRate             float64  `json:"append-records-rate"`
	PollIdleRatioAvg              float64  `json:"poll-idle-ratio-avg"`
}

// NaNOrValue returns nil for NaN, which JSON cannot carry, and &v otherwise.
func NaNOrValue(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// raftMetric is one metric: Kafka's name, its meaning in one line, and
// its value as the table prints it ("-" when the node has no such metric).
type raftMetric struct {
	name, help string
	value      func(m *RaftMetrics) string
}

func fmtInt[T int | int32 | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

func fmtOptInt(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func fmtNaN(v *float64) string {
	if v == nil {
		return "NaN"
	}
	return fmtFloat(*v)
}

var raftMetrics = []raftMetric{
	{"current-state", "leader, prospective, prospective-voted, candidate, unattached, unattached-voted, follower or observer",
		func(m *RaftMetrics) string { return m.CurrentState }},
	{"current-leader", "the leader this node knows in its epoch (itself if it leads or resigned), -1 for none",
		func(m *RaftMetrics) string { return fmtInt(m.CurrentLeader) }},
	{"current-epoch", "the node's quorum epoch",
		func(m *RaftMetrics) string { return fmtInt(m.CurrentEpoch) }},
	{"current-vote", "whom the node voted for in its epoch (itself as leader or candidate), -1 for none",
		func(m *RaftMetrics) string { return fmtInt(m.CurrentVote) }},
	{"high-watermark", "the high watermark the node knows, -1 if unknown",
		func(m *RaftMetrics) string { return fmtInt(m.HighWatermark) }},
	{"log-end-offset", "the offset the node's next record will get",
		func(m *RaftMetrics) string { return fmtInt(m.LogEndOffset) }},
	{"log-end-epoch", "the epoch of the node's last record",
		func(m *RaftMetrics) string { return fmtInt(m.LogEndEpoch) }},
	{"number-unknown-voter-connections", "other voters whose address the node does not know",
		func(m *RaftMetrics) string { return fmtInt(m.NumberUnknownVoterConnections) }},
	{"number-of-voters", "voters of the metadata quorum",
		func(m *RaftMetrics) string { return fmtInt(m.NumberOfVoters) }},
	{"number-of-observers", "observers the leader tracks (fetched in the last 5 minutes); leader only",
		func(m *RaftMetrics) string { return fmtOptInt(m.NumberOfObservers) }},
	{"uncommitted-voter-change", "1 while a voter change (controllers add or remove) is appended and not yet committed; leader only",
		func(m *RaftMetrics) string { return fmtOptInt(m.UncommittedVoterChange) }},
	{"commit-latency-avg", "ms from the leader writing a batch to committing it, per record, averaged over the window",
		func(m *RaftMetrics) string { return fmtNaN(m.CommitLatencyAvg) }},
	{"commit-latency-max", "the largest commit latency in the window, ms",
		func(m *RaftMetrics) string { return fmtNaN(m.CommitLatencyMax) }},
	{"election-latency-avg", "ms from becoming prospective or candidate to leader or follower, averaged over the window",
		func(m *RaftMetrics) string { return fmtNaN(m.ElectionLatencyAvg) }},
	{"election-latency-max", "the longest election latency in the window, ms",
		func(m *RaftMetrics) string { return fmtNaN(m.ElectionLatencyMax) }},
	{"fetch-records-rate", "records a second appended from the leader's Fetch responses",
		func(m *RaftMetrics) string { return fmtFloat(m.FetchRecordsRate) }},
	{"append-records-rate", "records a second appended as leader",
		func(m *RaftMetrics) string { return fmtFloat(m.AppendRecordsRate) }},
	{"poll-idle-ratio-avg", "share of time the node's raft loop waited rather than worked",
		func(m *RaftMetrics) string { return fmtFloat(m.PollIdleRatioAvg) }},
}

// RaftMetricNames lists the metrics' Kafka names, in the order tables show them.
func RaftMetricNames() []string {
	out := make([]string, len(raftMetrics))
	for i, d := range raftMetrics {
		out[i] = d.name
	}
	return out
}

// RaftMetricHelp is the one-line meaning of a metric, "" for an unknown name.
func RaftMetricHelp(name string) string {
	for _, d := range raftMetrics {
		if d.name == name {
			return d.help
		}
	}
	return ""
}

// Format returns a metric's value as text: "-" for a metric the node does
// not have (a leader-only one elsewhere) and "NaN" for an empty window,
// as Kafka would show them; "" for an unknown name.
func (m *RaftMetrics) Format(name string) string {
	for _, d := range raftMetrics {
		if d.name == name {
			return d.value(m)
		}
	}
	return ""
}

// NodeMetrics is one node's raft-metrics; RaftMetrics is nil while the
// node does not run (a stopped Kafka process has no metrics).
type NodeMetrics struct {
	ID          int32        `json:"nodeId"`
	Kind        Kind         `json:"kind"`
	State       State        `json:"state"`
	RaftMetrics *RaftMetrics `json:"raftMetrics,omitempty"`
}

// MetricsReport is what the control API's metrics route answers.
type MetricsReport struct {
	// Timestamp is when the metrics were read, in Unix milliseconds.
	Timestamp int64         `json:"timestamp"`
	Nodes     []NodeMetrics `json:"nodes"`
}

// Metrics returns the raft-metrics of every node of the view.
func (v *View) Metrics() MetricsReport {
	r := MetricsReport{Timestamp: v.Timestamp, Nodes: make([]NodeMetrics, 0, len(v.Nodes))}
	for _, n := range v.Nodes {
		r.Nodes = append(r.Nodes, NodeMetrics{ID: n.ID, Kind: n.Kind, State: n.State, RaftMetrics: n.RaftMetrics})
	}
	return r
}
