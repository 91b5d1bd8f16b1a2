package raftsim

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// newCluster starts a cluster in a replication mode and waits for its first
// leader.
func newCluster(t *testing.T, mode raft.Replication, seed uint64, voters, observers int) *Cluster {
	t.Helper()
	c, err := New(Options{Seed: seed, Voters: voters, Observers: observers, Replication: mode, WireCheck: true, SnapshotPadding: 3000, TraceLines: 200})
	if err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, func() bool { return c.LeaderHighWatermark() > 0 }, 10*time.Second)
	return c
}

func (c *Cluster) mustRun(t *testing.T, cond func() bool, limit time.Duration) {
	t.Helper()
	var err error
	if cond == nil {
		err = c.RunFor(limit)
	} else {
		err = c.RunUntil(cond, limit)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, c.describe())
	}
}

// finish heals everything, waits for every node to catch up and checks
// ConsistentCommittedData.
func (c *Cluster) finish(t *testing.T) {
	t.Helper()
	if err := c.HealAndCatchUp(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func (c *Cluster) mustLeader(t *testing.T) (int32, int32) {
	t.Helper()
	id, epoch, ok := c.Leader()
	if !ok {
		t.Fatalf("no leader: %s", c.describe())
	}
	return id, epoch
}

// newLeaderCommits waits for a leader in an epoch above old whose high
// watermark passes hw.
func (c *Cluster) newLeaderCommits(t *testing.T, old int32, hw int64, limit time.Duration) {
	t.Helper()
	c.mustRun(t, func() bool {
		_, e, ok := c.Leader()
		return ok && e > old && c.LeaderHighWatermark() > hw
	}, limit)
}

func TestScenarioKillLeader(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 1, 3, 1)
		c.mustRun(t, nil, 2*time.Second)
		leader, epoch := c.mustLeader(t)
		c.Kill(leader)
		c.newLeaderCommits(t, epoch, c.inv.hwm, 10*time.Second)
		c.finish(t)
	})
}

func TestScenarioGracefulLeaderShutdown(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 2, 3, 1)
		c.mustRun(t, nil, 2*time.Second)
		leader, epoch := c.mustLeader(t)
		c.Shutdown(leader)
		// The successor stands at once: well before a fetch timeout passes.
		c.newLeaderCommits(t, epoch, c.inv.hwm, c.cfg.FetchTimeout/2)
		c.finish(t)
	})
}

// The leader is cut off from everyone: the others elect a leader of a new
// epoch and go on committing; the old one resigns by check-quorum and
// follows once healed.
func TestScenarioPartitionLeader(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 3, 3, 2)
		c.mustRun(t, nil, 2*time.Second)
		leader, epoch := c.mustLeader(t)
		c.Isolate(leader)
		c.newLeaderCommits(t, epoch, c.inv.hwm, 15*time.Second)
		c.mustRun(t, func() bool {
			st, _ := c.Status(leader)
			return st.Role != raft.Leader
		}, 10*time.Second)
		c.finish(t)
		if st, _ := c.Status(leader); st.Role != raft.Follower || st.Epoch <= epoch {
			t.Fatalf("old leader after healing: %+v", st)
		}
	})
}

// Five voters split 2 | 3: the side with the majority keeps committing, the
// other does not, whichever side the leader was on.
func TestScenarioMajorityKeepsCommittingMinorityDoesNot(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 4, 5, 0)
		c.mustRun(t, nil, 2*time.Second)
		leader, _ := c.mustLeader(t)
		minority := []int32{leader, leader%5 + 1}
		var majority []int32
		for _, id := range c.Voters() {
			if id != minority[0] && id != minority[1] {
				majority = append(majority, id)
			}
		}
		c.Partition(minority, majority)
		c.mustRun(t, nil, 15*time.Second)
		maxHW := func(ids []int32) int64 {
			hw := int64(-1)
			for _, id := range ids {
				st, _ := c.Status(id)
				hw = max(hw, st.HighWatermark)
			}
			return hw
		}
		before := [2]int64{maxHW(minority), maxHW(majority)}
		c.mustRun(t, nil, 10*time.Second)
		after := [2]int64{maxHW(minority), maxHW(majority)}
		if after[0] != before[0] {
			t.Fatalf("minority's high watermark moved from %d to %d", before[0], after[0])
		}
		if after[1] <= before[1] || after[1] <= after[0] {
			t.Fatalf("majority's high watermark went from %d to %d (minority %d)", before[1], after[1], after[0])
		}
		c.finish(t)
	})
}

// Two leader partitions in a row: the second leader is cut off as soon as it
// is elected, and a third takes over.
func TestScenarioBackToBackLeaderPartitions(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 5, 5, 1)
		c.mustRun(t, nil, 2*time.Second)
		first, epoch := c.mustLeader(t)
		c.Isolate(first)
		c.newLeaderCommits(t, epoch, c.inv.hwm, 15*time.Second)
		second, epoch2 := c.mustLeader(t)
		if second == first {
			t.Fatal("isolated leader still the newest")
		}
		c.Isolate(second)
		c.newLeaderCommits(t, epoch2, c.inv.hwm, 15*time.Second)
		if third, _ := c.mustLeader(t); third == first || third == second {
			t.Fatalf("leader %d after isolating %d and %d", third, first, second)
		}
		c.finish(t)
	})
}

// A leader cut off from the quorum keeps appending records that never
// commit; after healing it truncates them and holds the new leader's.
func TestScenarioStaleLeaderTailTruncated(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 6, 3, 0)
		c.mustRun(t, nil, 2*time.Second)
		leader, epoch := c.mustLeader(t)
		c.Isolate(leader)
		c.mustRun(t, nil, 2*time.Second) // its counter appends into the void
		sn := c.node(leader)
		st, _ := c.Status(leader)
		if st.LogEndOffset <= st.HighWatermark {
			t.Fatalf("isolated leader has no uncommitted tail: %+v", st)
		}
		staleEnd := st.LogEndOffset
		c.newLeaderCommits(t, epoch, staleEnd, 20*time.Second)
		c.finish(t)
		if e, end := sn.log.EndOffsetForEpoch(epoch); e != epoch || end >= staleEnd {
			t.Fatalf("old leader's epoch %d still ends at %d (stale end %d): tail not truncated", e, end, staleEnd)
		}
	})
}

// A follower down while the leader snapshots and moves its log start past
// the follower's log end catches up by fetching the snapshot.
func TestScenarioFarBehindFollowerCatchesUpThroughSnapshot(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 7, 3, 1)
		leader, _ := c.mustLeader(t)
		follower := leader%3 + 1
		c.Kill(follower)
		c.mustRun(t, nil, 5*time.Second)
		if !c.Snapshot(leader) {
			t.Fatalf("leader could not snapshot: %s", c.describe())
		}
		if st, _ := c.Status(leader); st.LogStartOffset <= c.node(follower).log.LogEndOffset() {
			t.Fatalf("log start %d not past the follower's end %d", st.LogStartOffset, c.node(follower).log.LogEndOffset())
		}
		c.Restart(follower)
		c.finish(t)
		if c.node(follower).counter.loads == 0 {
			t.Fatal("follower caught up without loading the snapshot")
		}
	})
}

// Every node dies at once, losing what it had not flushed; a majority comes
// back and goes on from the committed state.
func TestScenarioKillAllRestartMajority(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 8, 5, 1)
		c.mustRun(t, nil, 2*time.Second)
		hw := c.inv.hwm
		_, epoch := c.mustLeader(t)
		for _, id := range c.IDs() {
			c.Kill(id)
		}
		c.mustRun(t, nil, time.Second)
		for _, id := range []int32{1, 3, 5} {
			c.Restart(id)
		}
		c.newLeaderCommits(t, epoch, hw, 20*time.Second)
		c.finish(t)
	})
}
