package quorum

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// recorder is a Listener that keeps what it was told.
type recorder struct {
	mu       sync.Mutex
	next     int64
	values   []string
	leaders  []raft.LeaderAndEpoch
	shutdown int
	gap      error
}

func (r *recorder) HandleCommit(batches []storage.Batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range batches {
		b := &batches[i]
		if b.FirstOffset != r.next && r.gap == nil {
			r.gap = fmt.Errorf("batch at %d, expected %d", b.FirstOffset, r.next)
		}
		r.next = b.NextOffset()
		if b.IsControl() {
			continue
		}
		recs, _ := b.Records()
		for _, rec := range recs {
			r.values = append(r.values, string(rec.Value))
		}
	}
}

func (r *recorder) HandleLoadSnapshot(s raft.Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next = s.ID.EndOffset
}

func (r *recorder) HandleLeaderChange(l raft.LeaderAndEpoch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leaders = append(r.leaders, l)
}

// SnapshotRecords keeps nothing: the recorder's snapshots only move the
// offset.
func (r *recorder) SnapshotRecords() (int64, [][]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next, nil, nil
}

func (r *recorder) has(value string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.values, value)
}

func (r *recorder) BeginShutdown() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shutdown++
}

func (r *recorder) state() (values int, leaders []raft.LeaderAndEpoch, shutdown int, gap error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.values), append([]raft.LeaderAndEpoch(nil), r.leaders...), r.shutdown, r.gap
}

// Every node's Listener is fed the committed records in offset order and
// the leader, and hears once that its incarnation ends, by a graceful stop
// or a kill; a restart feeds a fresh Listener from the log.
func TestListenerIsFedOnEveryNode(t *testing.T) {
	var mu sync.Mutex
	made := map[int32][]*recorder{}
	c := newTestCluster(t, clusterOpts{voters: 3, observers: 1, tweak: func(cfg *Config) {
		id := cfg.Raft.NodeID
		cfg.NewListener = func() Listener {
			mu.Lock()
			defer mu.Unlock()
			r := &recorder{}
			made[id] = append(made[id], r)
			return r
		}
	}})
	latest := func(id int32) *recorder {
		mu.Lock()
		defer mu.Unlock()
		return made[id][len(made[id])-1]
	}
	leader, epoch := c.leader(10 * time.Second)
	c.appendN(leader, 20, 10, 20, "fed")
	for _, id := range c.ids() {
		c.waitFor(fmt.Sprintf("node %d's listener to apply 20 records", id), 10*time.Second, func() bool {
			n, _, _, _ := latest(id).state()
			return n == 20
		})
		_, leaders, _, gap := latest(id).state()
		if gap != nil {
			t.Errorf("node %d: %v", id, gap)
		}
		if len(leaders) == 0 || leaders[len(leaders)-1] != (raft.LeaderAndEpoch{LeaderID: leader, Epoch: epoch}) {
			t.Errorf("node %d heard of leaders %v, want last %d in epoch %d", id, leaders, leader, epoch)
		}
	}
	// An append for an epoch the node does not lead fails at once.
	if err := waitErr(c.nodes[leader].Append(epoch+1, [][]byte{[]byte("x")})); err == nil {
		t.Error("append for a later epoch succeeded")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped, killed := c.voters[0], int32(101)
	if err := c.nodes[stopped].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c.nodes[killed].Kill()
	for _, id := range []int32{stopped, killed} {
		if _, _, n, _ := latest(id).state(); n != 1 {
			t.Errorf("node %d's listener heard BeginShutdown %d times, want 1", id, n)
		}
	}
	c.start(killed)
	c.waitFor("the restarted observer's fresh listener to replay the log", 10*time.Second, func() bool {
		n, _, _, _ := latest(killed).state()
		return n == 20
	})
}

// The leader's listener is handed a batch before the Commit of its records
// completes: whoever waits on a Commit finds the records applied.
func TestListenerHasRecordsWhenCommitCompletes(t *testing.T) {
	var mu sync.Mutex
	made := map[int32]*recorder{}
	c := newTestCluster(t, clusterOpts{voters: 3, tweak: func(cfg *Config) {
		id := cfg.Raft.NodeID
		cfg.NewListener = func() Listener {
			mu.Lock()
			defer mu.Unlock()
			made[id] = &recorder{}
			return made[id]
		}
	}})
	leader, epoch := c.leader(10 * time.Second)
	mu.Lock()
	r := made[leader]
	mu.Unlock()
	for i := range 50 {
		v := fmt.Sprintf("ordered-%d", i)
		if err := waitErr(c.nodes[leader].Append(epoch, [][]byte{[]byte(v)})); err != nil {
			t.Fatal(err)
		}
		if !r.has(v) {
			t.Fatalf("commit of %q completed before the leader's listener was handed it", v)
		}
	}
}

// A node cannot be made without the state machine it feeds.
func TestNewListenerRequired(t *testing.T) {
	rc := testRaftConfig()
	rc.NodeID, rc.Voters = 1, []int32{1}
	_, err := NewNode(Config{Raft: rc, Dir: t.TempDir(), Peers: func(int32) (string, bool) { return "", false }, Flush: storage.FlushNever})
	if err == nil || !strings.Contains(err.Error(), "NewListener") {
		t.Fatalf("NewNode without NewListener: %v", err)
	}
}
