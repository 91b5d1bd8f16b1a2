package quorum

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/kraftlab/kraftlab/storage/disktest"
)

// A node whose disk fills up: what it stops doing, what it says, and how
// it comes back once space returns. Each node writes through a disk of its
// own (disktest), whose writes are real writes cut short where the space
// runs out.

// diskCluster is a test cluster whose nodes each have a disktest.Disk.
func diskCluster(t *testing.T, o clusterOpts) (*testCluster, map[int32]*disktest.Disk) {
	t.Helper()
	disks := map[int32]*disktest.Disk{}
	tweak := o.tweak
	o.tweak = func(cfg *Config) {
		d := disktest.New()
		disks[cfg.Raft.NodeID] = d
		cfg.Disk = d
		if tweak != nil {
			tweak(cfg)
		}
	}
	return newTestCluster(t, o), disks
}

// restart starts a node that failed on its own again, on the same
// address, as its server would.
func (c *testCluster) restart(id int32) {
	c.t.Helper()
	if n := c.nodes[id]; n.srv != nil {
		n.srv.Close()
	}
	c.start(id)
}

// waitFailed waits for node id to stop on a full disk and checks what it
// says about it.
func (c *testCluster) waitFailed(id int32) Status {
	c.t.Helper()
	var st Status
	c.waitFor("the node to stop on its full disk", 10*time.Second, func() bool {
		st = c.nodes[id].Status()
		return st.State == StateFailed
	})
	if st.Fault != storage.FaultDiskFull || !strings.HasPrefix(st.Err, "disk full: ") || !strings.Contains(st.Err, "no space left on device") {
		c.t.Errorf("node %d failed with fault %v: %q; want it to say its disk is full", id, st.Fault, st.Err)
	}
	evs := c.matching(func(e Event) bool { return e.Kind == EventFailed && e.Node == id })
	if len(evs) != 1 || !errors.Is(evs[0].Err, syscall.ENOSPC) {
		c.t.Errorf("node %d's failure events: %v, want one with ENOSPC", id, evs)
	}
	return st
}

// A leader whose disk fills up does not keep the quorum: its append fails
// (never acknowledged), it resigns with EndQuorumEpoch and stops saying
// why, a voter with space is elected and commits, and nothing committed
// is lost. Once space returns, the old leader starts from its folder and
// follows with the same log.
func TestLeaderOnFullDiskHandsOverAndComesBack(t *testing.T) {
	c, disks := diskCluster(t, clusterOpts{voters: 3})
	old, epoch := c.leader(10 * time.Second)
	end := c.appendN(old, 50, 100, 10, "before") + 1

	disks[old].Fill()
	if err := waitErr(c.nodes[old].appendNow([]byte("on a full disk"))); !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrNotRunning) {
		t.Fatalf("append on a full disk: %v, want it refused", err)
	}
	st := c.waitFailed(old)
	if st.LogEndOffset != end {
		t.Errorf("failed leader's log ends at %d, want %d: the refused append reached it", st.LogEndOffset, end)
	}
	if len(c.eventsOf(raft.EventEndQuorumEpochSent, old)) == 0 {
		t.Errorf("the leader stopped without resigning\n%s", c.eventLog())
	}
	leader, newEpoch := c.leader(10*time.Second, old)
	if leader == old || newEpoch <= epoch {
		t.Fatalf("leader %d in epoch %d after node %d's disk filled in epoch %d", leader, newEpoch, old, epoch)
	}
	if last := c.appendN(leader, 50, 100, 10, "after"); last < end+50 {
		t.Fatalf("the new leader committed up to %d, want past %d", last, end+50)
	}

	disks[old].Free()
	c.restart(old)
	c.waitFor("the old leader to follow with the same log", 10*time.Second, func() bool {
		s := c.nodes[old].Status()
		return s.Role == raft.Follower && s.LeaderID == leader && c.tally(old) == c.tally(leader)
	})
	if r := c.nodes[old].Status().Recovery; r.Truncated() {
		t.Errorf("the restart cut a torn tail: %v", r)
	}
}

// A follower whose disk fills up stops on its next append: it has
// acknowledged nothing it did not write (the leader's record of its log
// end is within what its folder holds), the others go on committing, and
// once space returns it starts from its folder and catches up.
func TestFollowerOnFullDiskAcknowledgesNothingUnwritten(t *testing.T) {
	c, disks := diskCluster(t, clusterOpts{voters: 3, flush: storage.FlushAlways})
	leader, _ := c.leader(10 * time.Second)
	c.appendN(leader, 20, 100, 10, "before")
	var f int32
	for _, v := range c.voters {
		if v != leader {
			f = v
			break
		}
	}
	disks[f].SetFree(250) // part of the next records
	c.appendN(leader, 50, 100, 10, "while full")
	c.waitFailed(f)

	// What the failed follower's folder holds, opened as its next start
	// would.
	l, err := storage.Open(c.nodes[f].Dir(), c.nodes[f].cfg.storageOptions())
	if err != nil {
		t.Fatal(err)
	}
	onDisk := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.nodes[leader].Status().Replicas {
		if r.NodeID == f && r.LogEndOffset > onDisk {
			t.Fatalf("the leader counts node %d's log to %d, its folder holds %d", f, r.LogEndOffset, onDisk)
		}
	}

	disks[f].Free()
	c.restart(f)
	c.appendN(leader, 10, 100, 10, "after")
	c.waitFor("the follower to catch up", 10*time.Second, func() bool {
		s := c.nodes[f].Status()
		return s.Role == raft.Follower && c.tally(f) == c.tally(leader)
	})
}

// A voter cannot vote when its quorum-state file cannot record the vote:
// it grants none and stops. With the leader gone too, no one leads until
// space returns and the voter starts again.
func TestNoVoteWithoutQuorumStateWrite(t *testing.T) {
	c, disks := diskCluster(t, clusterOpts{voters: 3})
	leader, epoch := c.leader(10 * time.Second)
	c.appendN(leader, 10, 100, 10, "x")
	var v int32
	for _, id := range c.voters {
		if id != leader {
			v = id
			break
		}
	}
	disks[v].Fill()
	if err := c.nodes[leader].Kill(); err != nil {
		t.Fatal(err)
	}
	c.waitFailed(v)
	for _, e := range c.eventsOf(raft.EventVoteGranted, v) {
		if !e.Raft.PreVote && e.Raft.CandidateEpoch > epoch {
			t.Errorf("node %d voted with a full disk: %v", v, e)
		}
	}
	disks[v].Free()
	c.restart(v)
	c.leader(10*time.Second, leader)
}

// A snapshot the disk cannot hold fails alone: the node runs on, leads
// and says why (an event, Status.SnapshotError); once space returns the
// next snapshot is written and the error is gone.
func TestSnapshotOnFullDisk(t *testing.T) {
	c, disks := diskCluster(t, clusterOpts{voters: 1})
	leader, _ := c.leader(10 * time.Second)
	c.appendN(leader, 20, 100, 10, "x")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	disks[leader].Fill()
	if _, err := c.nodes[leader].Snapshot(ctx); storage.FaultOf(err) != storage.FaultDiskFull {
		t.Fatalf("snapshot on a full disk: %v", err)
	}
	st := c.nodes[leader].Status()
	if st.State != StateRunning || st.Role != raft.Leader || !strings.HasPrefix(st.SnapshotError, "disk full: ") {
		t.Fatalf("after a failed snapshot: %s %v, snapshot error %q", st.State, st.Role, st.SnapshotError)
	}
	if evs := c.matching(func(e Event) bool { return e.Kind == EventSnapshotFailed }); len(evs) != 1 {
		t.Fatalf("snapshot failure events: %v", evs)
	}
	if st.HasSnapshot {
		t.Fatalf("a snapshot is listed: %v", st.LatestSnapshot)
	}

	disks[leader].Free()
	c.appendN(leader, 5, 100, 5, "y")
	id, err := c.nodes[leader].Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.nodes[leader].Status(); st.SnapshotError != "" || !st.HasSnapshot || st.LatestSnapshot != id {
		t.Fatalf("after space returned: snapshot %v, error %q", st.LatestSnapshot, st.SnapshotError)
	}
}
