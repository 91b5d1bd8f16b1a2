package engine

import (
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/quorum"
)

// raftMetrics reads a node's raft-metrics at now for the view; nil while
// the node does not run.
func raftMetrics(q *quorum.Node, now time.Time) *view.RaftMetrics {
	m, ok := q.Metrics()
	if !ok {
		return nil
	}
	rm := &view.RaftMetrics{
		CurrentState:                  m.CurrentState,
		CurrentLeader:                 m.CurrentLeader,
		CurrentEpoch:                  m.CurrentEpoch,
		CurrentVote:                   m.CurrentVote,
		HighWatermark:                 m.HighWatermark,
		LogEndOffset:                  m.LogEndOffset,
		LogEndEpoch:                   m.LogEndEpoch,
		NumberUnknownVoterConnections: m.NumberUnknownVoterConnections,
		NumberOfVoters:                m.NumberOfVoters,
		CommitLatencyAvg:              view.NaNOrValue(m.CommitLatency.Avg(now)),
		CommitLatencyMax:              view.NaNOrValue(m.CommitLatency.Max(now)),
		ElectionLatencyAvg:            view.NaNOrValue(m.ElectionLatency.Avg(now)),
		ElectionLatencyMax:            view.NaNOrValue(m.ElectionLatency.Max(now)),
		FetchRecordsRate:              m.FetchRecords.Rate(now),
		AppendRecordsRate:             m.AppendRecords.Rate(now),
		PollIdleRatioAvg:              m.PollIdleRatioAvg(now),
	}
	if m.LeaderMetrics {
		observers, change := m.NumberOfObservers, m.UncommittedVoterChange
		rm.NumberOfObservers, rm.UncommittedVoterChange = &observers, &change
	}
	return rm
}
