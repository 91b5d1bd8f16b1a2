package raftsim

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// Kafka's RaftEventSimulationTest checks StableLeadership in two scenarios
// of asymmetric partitions, where some nodes cannot send requests to some
// others (DropOutboundRequestsTo: their responses still pass). With pre-vote
// a voter that cannot reach the leader times out and asks for pre-votes,
// and voters that still fetch from the leader refuse them, so the first
// leader stays. Kafka stops once the majority reached high watermark 20
// (tens of milliseconds with its appends every 2 ms); kraftlab runs each
// seed 20 s more of virtual time, several fetch timeouts, with the
// invariant checked after every event.

// stableSeeds is how many seeds each scenario runs; KRAFTLAB_STABLE_SEEDS
// raises it.
func stableSeeds(t *testing.T) int {
	if s := os.Getenv("KRAFTLAB_STABLE_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_STABLE_SEEDS=%q", s)
		}
		return n
	}
	return 6
}

// allReached reports whether every node in ids (running) has a high
// watermark of at least hw (Kafka's Cluster.allReachedHighWatermark).
func (c *Cluster) allReached(hw int64, ids []int32) bool {
	for _, id := range ids {
		if st, ok := c.Status(id); !ok || st.HighWatermark < hw {
			return false
		}
	}
	return true
}

// Kafka: leadershipAssignedOnlyOnceWithNetworkPartitionIfThereExistsMajority.
// The filters are in place from the start (Kafka's nodes 0-4 are 1-5 here).
func TestStableLeadershipAssignedOnceUnderAsymmetricPartition(t *testing.T) {
	inModes(t, testStableLeadershipAssignedOnceUnderAsymmetricPartition)
}

func testStableLeadershipAssignedOnceUnderAsymmetricPartition(t *testing.T, mode raft.Replication) {
	for seed := uint64(1); seed <= uint64(stableSeeds(t)); seed++ {
		c, err := New(Options{Seed: seed, Voters: 5, Observers: int(seed % 4), Replication: mode, WireCheck: true, TraceLines: 200})
		if err != nil {
			t.Fatal(err)
		}
		c.CheckStableLeadership()
		c.DropRequests(1, 2, 4, 5)
		c.DropRequests(2, 1, 3, 5)
		c.DropRequests(3, 2)
		c.DropRequests(4, 1)
		c.DropRequests(5, 1, 2)
		fail := func(err error) {
			t.Fatalf("seed %d: %v\n%s\ntrace tail:\n%s", seed, err, c.describe(), strings.Join(c.Trace(), "\n"))
		}
		if err := c.RunUntil(c.consistentLeader, 30*time.Second); err != nil {
			fail(err)
		}
		leader, _, _ := c.Leader()
		majority := []int32{1, 2, 3, 4, 5}
		switch leader {
		case 3:
			majority = slices.DeleteFunc(majority, func(id int32) bool { return id == 2 })
		case 4:
			majority = slices.DeleteFunc(majority, func(id int32) bool { return id == 1 })
		case 5:
			majority = slices.DeleteFunc(majority, func(id int32) bool { return id == 1 || id == 2 })
		default:
			t.Fatalf("seed %d: leader %d cannot send requests to a majority", seed, leader)
		}
		if err := c.RunUntil(func() bool { return c.allReached(20, majority) }, 30*time.Second); err != nil {
			fail(err)
		}
		hw := c.LeaderHighWatermark()
		if err := c.RunFor(20 * time.Second); err != nil {
			fail(err)
		}
		if !c.allReached(hw+20, majority) {
			fail(errorf("majority %v did not commit past %d", majority, hw+20))
		}
	}
}

// Kafka: leadershipWillNotChangeDuringNetworkPartitionIfMajorityStillReachable.
// Once the leader L is known, A cannot send to B, D, E; B not to A, L, E;
// L not to B; D not to A; E not to A, B. L still reaches A, D and E.
func TestStableLeadershipKeptUnderAsymmetricPartition(t *testing.T) {
	inModes(t, testStableLeadershipKeptUnderAsymmetricPartition)
}

func testStableLeadershipKeptUnderAsymmetricPartition(t *testing.T, mode raft.Replication) {
	for seed := uint64(1); seed <= uint64(stableSeeds(t)); seed++ {
		c, err := New(Options{Seed: seed, Voters: 5, Observers: int(seed % 4), Replication: mode, WireCheck: true, TraceLines: 200})
		if err != nil {
			t.Fatal(err)
		}
		c.CheckStableLeadership()
		fail := func(err error) {
			t.Fatalf("seed %d: %v\n%s\ntrace tail:\n%s", seed, err, c.describe(), strings.Join(c.Trace(), "\n"))
		}
		if err := c.RunUntil(func() bool { return c.consistentLeader() && c.allReached(5, c.Voters()) }, 30*time.Second); err != nil {
			fail(err)
		}
		l, _, _ := c.Leader()
		at := func(k int32) int32 { return (l-1+k)%5 + 1 }
		a, b, d, e := at(1), at(2), at(3), at(4)
		c.DropRequests(a, b, d, e)
		c.DropRequests(b, a, l, e)
		c.DropRequests(l, b)
		c.DropRequests(d, a)
		c.DropRequests(e, a, b)
		reach := []int32{a, l, d, e}
		if err := c.RunUntil(func() bool { return c.allReached(20, reach) }, 30*time.Second); err != nil {
			fail(err)
		}
		hw := c.LeaderHighWatermark()
		if err := c.RunFor(20 * time.Second); err != nil {
			fail(err)
		}
		if !c.allReached(hw+20, reach) {
			fail(errorf("nodes %v did not commit past %d", reach, hw+20))
		}
		if st, _ := c.Status(b); st.Epoch != c.inv.stableEpoch {
			fail(errorf("node %d, cut off from the leader, moved to epoch %d", b, st.Epoch))
		}
	}
}
