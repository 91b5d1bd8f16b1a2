package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/kraftlab/kraftlab/storage/disktest"
)

// diskServers starts controllers 1..3, each on a disk of its own that a
// test can fill (disktest), writing NoOpRecords so that the leader writes
// while idle, and broker 101 on the operating system's.
func diskServers(t *testing.T) (*testServers, map[int32]*disktest.Disk, func(id int32) int) {
	t.Helper()
	disks := map[int32]*disktest.Disk{}
	var mu sync.Mutex
	restarts := map[int32]int{}
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101}, func(cfg *Config) {
		if cfg.Kind != Controller {
			return
		}
		id := cfg.Raft.Raft.NodeID
		d := disktest.New()
		disks[id] = d
		cfg.Raft.Disk = d
		cfg.Settings.MetadataMaxIdleInterval = 50 * time.Millisecond
		cfg.OnRestart = func(RestartStatus) {
			mu.Lock()
			defer mu.Unlock()
			restarts[id]++
		}
	})
	return ts, disks, func(id int32) int {
		mu.Lock()
		defer mu.Unlock()
		return restarts[id]
	}
}

// leadingNow returns the controller that leads, if one does.
func (ts *testServers) leadingNow() (int32, raft.Status, bool) {
	for _, id := range []int32{1, 2, 3} {
		if st := ts.byID[id].Raft().Status(); st.Running() && st.Role == raft.Leader && st.HighWatermark > 0 {
			return id, st.Status, true
		}
	}
	return 0, raft.Status{}, false
}

// Every controller's disk fills up. Each stops on it and says so, stays
// down while the disk is full (its probes refused), and starts again by
// itself once space returns: the quorum elects a leader and commits past
// what it had, without a start by hand.
func TestControllersStartAgainOnceSpaceReturns(t *testing.T) {
	ts, disks, restarts := diskServers(t)
	var before raft.Status
	waitFor(t, "a leader", func() bool {
		_, st, ok := ts.leadingNow()
		before = st
		return ok
	})
	for _, d := range disks {
		d.Fill()
	}
	for id := range disks {
		s := ts.byID[id]
		waitFor(t, "the controller to stop on its full disk and probe it", func() bool {
			r, ok := s.Restarting()
			return ok && r.Attempts >= 2 && strings.HasPrefix(r.LastError, "disk full: ")
		})
		st := s.Raft().Status()
		if s.Running() || st.State != quorum.StateFailed || st.Fault != storage.FaultDiskFull || !strings.HasPrefix(st.Err, "disk full: ") {
			t.Fatalf("controller %d on a full disk: running %v, %s, fault %v: %q", id, s.Running(), st.State, st.Fault, st.Err)
		}
	}

	for _, d := range disks {
		d.Free()
	}
	waitFor(t, "a leader committing past what it had, every controller back", func() bool {
		_, st, ok := ts.leadingNow()
		if !ok || st.Epoch <= before.Epoch || st.HighWatermark <= before.HighWatermark {
			return false
		}
		for id := range disks {
			if _, restarting := ts.byID[id].Restarting(); restarting || !ts.byID[id].Running() {
				return false
			}
		}
		return true
	})
	for id := range disks {
		if n := restarts(id); n != 1 {
			t.Errorf("controller %d started again by itself %d times, want once", id, n)
		}
	}
	waitFor(t, "the broker to follow the new leader", func() bool {
		id, _, ok := ts.leadingNow()
		st := ts.byID[101].Raft().Status()
		return ok && st.LeaderID == id
	})
}

// A stop or kill by hand ends the restarts of a node that stopped on a
// disk fault; a start by hand brings it back.
func TestStopEndsRestarts(t *testing.T) {
	ts, disks, restarts := diskServers(t)
	var leader int32
	waitFor(t, "a leader", func() bool {
		var ok bool
		leader, _, ok = ts.leadingNow()
		return ok
	})
	s := ts.byID[leader]
	disks[leader].Fill()
	waitFor(t, "the leader to stop on its full disk", func() bool {
		_, ok := s.Restarting()
		return ok
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, quorum.ErrNotRunning) {
		t.Fatalf("stop of a node that stopped on its disk: %v", err)
	}
	if _, ok := s.Restarting(); ok {
		t.Fatal("still restarting after a stop")
	}
	disks[leader].Free()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node to rejoin", func() bool {
		st := s.Raft().Status()
		return st.Role == raft.Follower || st.Role == raft.Leader
	})
	if n := restarts(leader); n != 0 {
		t.Errorf("started again by itself %d times after a stop", n)
	}
}

// A broker whose metadata log's disk fills up stops with its raft client,
// as a Kafka broker halts when its metadata log dir fails, says why, and
// starts again by itself once space returns: it follows the leader and is
// RUNNING again, with a new broker epoch. (Its new incarnation registers
// once its old one's session has expired, as in Kafka: the fast profile's
// session timeout keeps that short.)
func TestBrokerStartsAgainOnceSpaceReturns(t *testing.T) {
	var disk *disktest.Disk
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101}, func(cfg *Config) {
		if cfg.Kind == Controller {
			cfg.Settings.MetadataMaxIdleInterval = 50 * time.Millisecond
			cfg.Settings.BrokerSessionTimeout = 900 * time.Millisecond
			return
		}
		cfg.Settings.BrokerHeartbeatInterval = 200 * time.Millisecond
		disk = disktest.New()
		cfg.Raft.Disk = disk
	})
	b := ts.byID[101]
	var epoch int64
	waitFor(t, "the broker to run", func() bool {
		lm := b.Lifecycle()
		epoch = lm.BrokerEpoch()
		return lm.State() == BrokerRunning
	})
	disk.Fill()
	waitFor(t, "the broker to stop on its full disk and probe it", func() bool {
		r, ok := b.Restarting()
		return ok && r.Attempts > 0 && strings.HasPrefix(r.LastError, "disk full: ")
	})
	if st := b.Raft().Status(); b.Running() || st.Fault != storage.FaultDiskFull {
		t.Fatalf("broker on a full disk: running %v, %s, %q", b.Running(), st.State, st.Err)
	}
	disk.Free()
	waitFor(t, "the broker to run again", func() bool {
		// Between two attempts the broker has no lifecycle manager.
		lm := b.Lifecycle()
		if lm == nil || !b.Running() {
			return false
		}
		st := b.Raft().Status()
		return st.Role == raft.Follower && lm.State() == BrokerRunning && lm.BrokerEpoch() > epoch
	})
}
