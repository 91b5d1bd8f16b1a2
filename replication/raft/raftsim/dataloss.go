package raftsim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// RunDataLoss runs one seed of Kafka's canRecoverFromSingleNodeCommittedDataLoss
// (RaftEventSimulationTest), in a replication mode: 3-5 voters and 0-2 observers commit, then one
// running node, voter or observer, is killed and its folder wiped (empty
// log, no quorum-state file, no snapshot) while the others keep theirs. With
// waitForLeader, as in Kafka, it comes back only once a leader other than
// itself is known to every running node; otherwise at once. The quorum must
// then commit 10 past the highest high watermark reached, on every running
// node, and the committed data must agree everywhere. As in Kafka's test,
// MonotonicEpoch is tracked afresh for the wiped node and
// MajorityReachedHighWatermark is not checked once a voter lost its data.
func RunDataLoss(seed uint64, mode raft.Replication, waitForLeader bool, traceLines int) (*Cluster, int32, error) {
	r := rand.New(rand.NewPCG(seed, 0x6c6f7373))
	opts := Options{Seed: seed, Voters: 3 + r.IntN(3), Observers: r.IntN(3), Replication: mode, WireCheck: true, TraceLines: traceLines,
		// Restarted at once, a wiped leader hears that it leads its old
		// epoch; it refuses the news (Kafka would throw in
		// QuorumState.transitionToFollower and stop), and the run goes on.
		TolerateUnsafe: !waitForLeader}
	c, err := New(opts)
	if err != nil {
		return nil, 0, err
	}
	c.record("data loss: %v, %d voters, %d observers, wait for leader %v", mode, opts.Voters, opts.Observers, waitForLeader)
	if err := c.RunUntil(func() bool { return c.LeaderHighWatermark() >= 10 }, 30*time.Second); err != nil {
		return c, 0, err
	}
	// Run a little more, so that followers may lag by a random amount.
	if err := c.RunFor(time.Duration(r.IntN(500)) * time.Millisecond); err != nil {
		return c, 0, err
	}
	victim, _ := pick(r, c.running())
	c.KillAndDeletePersistentState(victim)
	if waitForLeader {
		if err := c.RunUntil(func() bool {
			id, _, ok := c.Leader()
			return ok && id != victim && c.consistentLeader()
		}, 30*time.Second); err != nil {
			return c, victim, err
		}
	}
	target := c.inv.hwm + 10
	c.Restart(victim)
	err = c.RunUntil(func() bool {
		for _, sn := range c.nodes {
			if sn.node != nil && sn.node.Status().HighWatermark < target {
				return false
			}
		}
		return true
	}, 60*time.Second)
	if err != nil {
		return c, victim, fmt.Errorf("%w; %s", err, c.describe())
	}
	return c, victim, c.Validate()
}

// consistentLeader reports whether every running node persisted the same
// leader in the same epoch (Kafka's Cluster.hasConsistentLeader).
func (c *Cluster) consistentLeader() bool {
	leader, epoch, seen := int32(-1), int32(-1), false
	for _, sn := range c.nodes {
		if sn.node == nil {
			continue
		}
		st, err := sn.store.Read()
		if err != nil || st.LeaderID < 0 {
			return false
		}
		if seen && (st.LeaderID != leader || st.Epoch != epoch) {
			return false
		}
		leader, epoch, seen = st.LeaderID, st.Epoch, true
	}
	return seen
}
