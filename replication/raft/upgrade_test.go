package raft_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newStaticDescribingHarness is a static quorum (kraft.version 0,
// Config.Voters) of ids whose nodes know their directory ids and
// listeners (voterOf's), as kraftlab's static controllers do.
func newStaticDescribingHarness(t *testing.T, ids []int32) *harness {
	t.Helper()
	h := &harness{t: t, now: t0, voters: ids, ids: ids, nodes: map[int32]*hnode{}, cut: map[[2]int32]bool{}}
	h.config = func(id int32) raft.Config {
		c := raft.DefaultConfig()
		c.NodeID, c.ClusterID, c.Voters, c.DirectoryID = id, "cluster", ids, dirOf(id)
		c.Listeners = voterOf(id).Endpoints
		c.ElectionTimeout = 10 * time.Second
		if id == ids[0] {
			c.ElectionTimeout = 100 * time.Millisecond
		}
		return c
	}
	for _, id := range ids {
		h.nodes[id] = &hnode{log: raft.NewMemoryLog(), store: &raft.MemoryQuorumStateStore{}}
		h.start(id)
	}
	return h
}

func described(ids ...int32) map[int32]raft.Voter {
	out := map[int32]raft.Voter{}
	for _, id := range ids {
		out[id] = voterOf(id)
	}
	return out
}

// A static quorum's voters describe themselves to the leader once; the
// upgrade then writes kraft.version 1 and a voter set naming their
// directory ids and listeners, and the quorum is dynamic from there on:
// a voter can be removed, and the quorum state is written as data
// version 1.
func TestUpgradeKRaftVersion(t *testing.T) {
	h := newStaticDescribingHarness(t, []int32{1, 2, 3})
	updates := 0
	h.delivered = func(m raft.Message) {
		if m.Request != nil && m.Request.Key() == kmsg.UpdateRaftVoter.Int16() {
			updates++
		}
	}
	h.elect(1)
	epoch := h.status(1).Epoch
	if _, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion1, true); !errors.Is(err, raft.ErrVotersUnsupported) {
		t.Fatalf("upgrade before the voters described themselves: %v, want ErrVotersUnsupported", err)
	}
	h.advance(10 * time.Second)
	if updates != 2 {
		t.Fatalf("%d UpdateRaftVoter requests, want one from each follower", updates)
	}
	end := h.status(1).LogEndOffset
	if off, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion1, true); err != nil || off != -1 || h.status(1).LogEndOffset != end {
		t.Fatalf("validate only: offset %d, %v, log end %d (was %d)", off, err, h.status(1).LogEndOffset, end)
	}
	off, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion1, false)
	if err != nil {
		t.Fatal(err)
	}
	if off != end+1 {
		t.Fatalf("VotersRecord at %d, want %d (after the KRaftVersionRecord at %d)", off, end+1, end)
	}
	h.advance(time.Second)
	if hw := h.status(1).HighWatermark; hw <= off {
		t.Fatalf("high watermark %d, the upgrade at %d", hw, off)
	}
	for _, id := range h.ids {
		if v := h.node(id).KRaftVersion(); v != raft.KRaftVersion1 {
			t.Fatalf("node %d: kraft.version %d", id, v)
		}
	}
	h.expectEntries(described(1, 2, 3))
	// The same version again is nothing; a lower one a downgrade.
	if o, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion1, false); err != nil || o != -1 {
		t.Fatalf("upgrade again: %d, %v", o, err)
	}
	if _, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion0, false); !errors.Is(err, raft.ErrInvalidUpgrade) {
		t.Fatalf("downgrade: %v", err)
	}
	// Dynamic now: a voter goes, and the next election writes the
	// quorum state as data version 1.
	if _, err := h.node(1).RemoveVoter(h.now, epoch, 3, dirOf(3)); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	if got := h.status(1).Voters; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("voters %v after removing 3", got)
	}
	h.crash(1)
	h.start(1)
	if v := h.node(1).KRaftVersion(); v != raft.KRaftVersion1 {
		t.Fatalf("restarted leader: kraft.version %d", v)
	}
	h.advance(30 * time.Second)
	st, _ := h.nodes[2].store.Read()
	if st.DataVersion != 1 || len(st.Voters) != 0 {
		t.Fatalf("node 2's quorum state %+v, want data version 1 without voters", st)
	}
}

// The leader checks what Kafka's does: the epoch, a version this code
// supports, and every voter describing itself; a voter that never
// reached it blocks the upgrade until it does, and a new leader hears
// from every voter again.
func TestUpgradeKRaftVersionRefused(t *testing.T) {
	h := newStaticDescribingHarness(t, []int32{1, 2, 3})
	h.elect(1)
	epoch := h.status(1).Epoch
	if _, err := h.node(2).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion1, false); !errors.Is(err, raft.ErrNotLeader) {
		t.Fatalf("on a follower: %v", err)
	}
	if _, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, 2, false); !errors.Is(err, raft.ErrInvalidUpgrade) {
		t.Fatalf("to 2: %v", err)
	}
	// Node 3 restarts without knowing its listeners: it cannot describe
	// itself.
	hide := true
	config := h.config
	h.config = func(id int32) raft.Config {
		c := config(id)
		if id == 3 && hide {
			c.Listeners = nil
		}
		return c
	}
	h.crash(3)
	h.start(3)
	h.advance(10 * time.Second)
	if _, err := h.node(1).UpgradeKRaftVersion(h.now, epoch, raft.KRaftVersion1, false); !errors.Is(err, raft.ErrVotersUnsupported) {
		t.Fatalf("with node 3 undescribed: %v", err)
	}
	hide = false
	h.crash(3)
	h.start(3)
	h.advance(10 * time.Second)
	// Node 1 goes; node 2 leads a new epoch and learns the voters anew.
	h.crash(1)
	h.advance(30 * time.Second)
	leader := h.status(2).LeaderID
	if leader < 0 || leader == 1 {
		t.Fatalf("no new leader: %+v", h.status(2))
	}
	h.start(1)
	h.advance(10 * time.Second)
	if _, err := h.node(leader).UpgradeKRaftVersion(h.now, h.status(leader).Epoch, raft.KRaftVersion1, false); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	h.expectEntries(described(1, 2, 3))
}
