package engine_test

import (
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// A real fast playground reports Kafka's raft-metrics on every node: the
// leader's current-state is leader, the other controllers' follower, the
// brokers' observer, with one epoch and leader among them; under load the
// leader appends and everyone else fetches; a new leader after a kill has
// an election latency, and the killed node reports none.
func TestRealEngineRaftMetrics(t *testing.T) {
	p := openReal(t, 3, 3, "")
	waitCond(t, p, "caught-up")
	want := func(v *view.View, n *view.Node) string {
		switch {
		case n.ID == v.LeaderID:
			return "leader"
		case n.Kind == view.KindBroker:
			return "observer"
		}
		return "follower"
	}
	agree := func(v *view.View) bool {
		if v.LeaderID == view.NoLeader {
			return false
		}
		for i := range v.Nodes {
			n := &v.Nodes[i]
			if !n.Live() {
				continue
			}
			m := n.RaftMetrics
			if m == nil || m.CurrentState != want(v, n) || m.CurrentEpoch != v.LeaderEpoch || m.CurrentLeader != v.LeaderID ||
				m.NumberOfVoters != 3 || m.NumberUnknownVoterConnections != 0 || !(m.PollIdleRatioAvg > 0 && m.PollIdleRatioAvg <= 1) {
				return false
			}
			if (m.NumberOfObservers != nil) != (n.ID == v.LeaderID) {
				return false
			}
		}
		return true
	}
	// The leader counts an observer once it fetched from it: a broker
	// late to its first fetch (or to a new leader's) is not one yet. Each
	// voter of the dynamic quorum fills its listener into its entry once it
	// is bound, so a voter change may be uncommitted early on.
	v := waitView(t, p, "every node's raft-metrics to agree on the quorum, with the three brokers observing and no voter change in flight", func(v *view.View) bool {
		if !agree(v) {
			return false
		}
		l, _ := v.Leader()
		return *l.RaftMetrics.NumberOfObservers == 3 && *l.RaftMetrics.UncommittedVoterChange == 0
	})
	if l, _ := v.Leader(); *l.RaftMetrics.NumberOfObservers != 3 || *l.RaftMetrics.UncommittedVoterChange != 0 {
		t.Errorf("leader %d: number-of-observers %d, uncommitted-voter-change %d; want 3 and 0",
			l.ID, *l.RaftMetrics.NumberOfObservers, *l.RaftMetrics.UncommittedVoterChange)
	}

	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1000, RecordBytes: 64})
	waitView(t, p, "append and fetch rates under load", func(v *view.View) bool {
		if !agree(v) {
			return false
		}
		for _, n := range v.Nodes {
			m := n.RaftMetrics
			if n.ID == v.LeaderID {
				if m.AppendRecordsRate <= 0 || m.CommitLatencyAvg == nil || m.CommitLatencyMax == nil || *m.CommitLatencyMax < *m.CommitLatencyAvg {
					return false
				}
			} else if m.FetchRecordsRate <= 0 {
				return false
			} else if n.Kind == view.KindBroker && (m.AppendRecordsRate != 0 || m.CommitLatencyAvg != nil) {
				// An observer never leads. (A voter that led before an
				// election on a loaded machine keeps its append rate and
				// commit latency for the metrics' window.)
				return false
			}
		}
		return true
	})

	old := act(t, p, "kill leader").Nodes[0]
	waitCond(t, p, "new-leader")
	v = waitView(t, p, "the new leader's election latency", func(v *view.View) bool {
		l, ok := v.Leader()
		if !ok || l.ID == old || l.RaftMetrics == nil {
			return false
		}
		m := l.RaftMetrics
		return m.CurrentState == "leader" && m.ElectionLatencyAvg != nil && *m.ElectionLatencyAvg > 0 && *m.ElectionLatencyMax >= *m.ElectionLatencyAvg
	})
	if n, _ := v.Node(old); n.RaftMetrics != nil {
		t.Errorf("killed node %d reports raft-metrics: %+v", old, n.RaftMetrics)
	}
	waitView(t, p, "every running node to agree on the new epoch", agree)
	do(t, p, cluster.Action{Kind: cluster.ActLoad})
	waitView(t, p, "the appends in flight to finish", func(v *view.View) bool { return v.Load.InFlight == 0 })
}
