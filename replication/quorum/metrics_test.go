package quorum

import (
	"testing"
	"time"
)

// A running quorum publishes Kafka's raft-metrics on every node: roles as
// current-state, epochs that agree, the driver's poll-idle ratio, no
// unknown voters, and records counted where they were appended; a killed
// node publishes none.
func TestNodesPublishRaftMetrics(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3, observers: 1})
	leader, epoch := c.leader(10 * time.Second)
	c.appendN(leader, 200, 100, 50, "m")
	want := map[int32]string{1: "follower", 2: "follower", 3: "follower", 101: "observer"}
	want[leader] = "leader"
	c.waitFor("every node to have fetched the records", 10*time.Second, func() bool {
		for id := range want {
			m, ok := c.nodes[id].Metrics()
			if !ok || m.CurrentState != want[id] || m.CurrentEpoch != epoch || m.CurrentLeader != leader || m.HighWatermark < 201 {
				return false
			}
			if id != leader && m.FetchRecords.Sum(time.Now()) < 200 {
				return false
			}
		}
		return true
	})
	now := time.Now()
	for id := range want {
		m, _ := c.nodes[id].Metrics()
		if m.NumberUnknownVoterConnections != 0 || m.NumberOfVoters != 3 {
			t.Errorf("node %d: unknown voters %d, voters %d; want 0 and 3", id, m.NumberUnknownVoterConnections, m.NumberOfVoters)
		}
		if r := m.PollIdleRatioAvg(now); !(r > 0 && r <= 1) {
			t.Errorf("node %d: poll-idle-ratio-avg %v, want in (0, 1]", id, r)
		}
		if m.LeaderMetrics != (id == leader) {
			t.Errorf("node %d: leader metrics %v", id, m.LeaderMetrics)
		}
	}
	m, _ := c.nodes[leader].Metrics()
	if m.AppendRecords.Sum(now) < 201 || m.AppendRecords.Rate(now) <= 0 || m.CommitLatency.Count(now) == 0 || !(m.CommitLatency.Max(now) >= 0) {
		t.Errorf("leader %d: appended %v (rate %v), commit latencies %d (max %v)", leader,
			m.AppendRecords.Sum(now), m.AppendRecords.Rate(now), m.CommitLatency.Count(now), m.CommitLatency.Max(now))
	}
	if m.NumberOfObservers != 1 {
		t.Errorf("leader %d tracks %d observers, want 1", leader, m.NumberOfObservers)
	}
	if err := c.nodes[101].Kill(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.nodes[101].Metrics(); ok {
		t.Error("a killed node still publishes metrics")
	}
}
