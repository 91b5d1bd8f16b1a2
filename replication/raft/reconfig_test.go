package raft_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func dirOf(id int32) raft.DirectoryID { return raft.DirectoryID{0: 0xd1, 4: byte(id), 15: 1} }

func voterOf(id int32) raft.Voter {
	return raft.Voter{ID: id, DirectoryID: dirOf(id), MaxVersion: raft.KRaftVersion1,
		Endpoints: []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: uint16(9000 + id)}}}
}

// newDynamicHarness starts a dynamic quorum (kraft.version 1) of ids: the
// nodes in initial are formatted with them as voters, the others start
// empty and find the leader through the bootstrap servers (every node).
// The first id has a short election timeout, the others a long one.
func newDynamicHarness(t *testing.T, ids, initial []int32) *harness {
	t.Helper()
	h := &harness{t: t, now: t0, voters: initial, ids: ids, nodes: map[int32]*hnode{}, cut: map[[2]int32]bool{}}
	h.config = func(id int32) raft.Config {
		c := raft.DefaultConfig()
		c.NodeID, c.ClusterID, c.Bootstrap, c.DirectoryID = id, "cluster", ids, dirOf(id)
		c.ElectionTimeout = 10 * time.Second
		if id == ids[0] {
			c.ElectionTimeout = 100 * time.Millisecond
		}
		return c
	}
	var set raft.VoterSet
	for _, id := range initial {
		set = append(set, voterOf(id))
	}
	for _, id := range ids {
		hn := &hnode{log: raft.NewMemoryLog(), store: &raft.MemoryQuorumStateStore{}}
		if slices.Contains(initial, id) {
			if err := raft.BootstrapVoters(hn.log, set, t0); err != nil {
				t.Fatal(err)
			}
		}
		h.nodes[id] = hn
		h.start(id)
	}
	return h
}

func (h *harness) expectVoters(id int32, want ...int32) {
	h.t.Helper()
	if st := h.status(id); !slices.Equal(st.Voters, want) || st.Voter != slices.Contains(want, id) {
		h.t.Fatalf("node %d has voters %v (voter %v), want %v", id, st.Voters, st.Voter, want)
	}
}

func (h *harness) addVoter(leader, id int32) (int64, error) {
	h.t.Helper()
	off, err := h.node(leader).AddVoter(h.now, h.status(leader).Epoch, voterOf(id))
	h.collect(leader)
	return off, err
}

// A node formatted alone leads at once; the others join as observers, and
// the leader adds them one at a time, each once it is caught up, with
// Kafka's refusals in between.
func TestAddVotersGrowsStandaloneQuorum(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1})
	h.elect(1)
	h.append(1, "a")
	h.advance(time.Second)
	for _, id := range []int32{1, 2, 3} {
		h.expectVoters(id, 1)
		if v := h.status(id).KRaftVersion; v != raft.KRaftVersion1 {
			t.Fatalf("node %d: kraft.version %d", id, v)
		}
	}

	if _, err := h.addVoter(1, 9); !errors.Is(err, raft.ErrNotCaughtUp) {
		t.Fatalf("add a node that never fetched: %v, want ErrNotCaughtUp", err)
	}
	if _, err := h.addVoter(1, 1); !errors.Is(err, raft.ErrDuplicateVoter) {
		t.Fatalf("add the leader: %v, want ErrDuplicateVoter", err)
	}
	old := voterOf(2)
	old.MaxVersion = raft.KRaftVersion0
	if _, err := h.node(1).AddVoter(h.now, h.status(1).Epoch, old); !errors.Is(err, raft.ErrUnsupportedKRaftVersion) {
		t.Fatalf("add a node without kraft.version 1: %v, want ErrUnsupportedKRaftVersion", err)
	}
	if _, err := h.node(1).AddVoter(h.now, h.status(1).Epoch+1, voterOf(2)); !errors.Is(err, raft.ErrNotLeader) {
		t.Fatalf("add in another epoch: %v, want ErrNotLeader", err)
	}
	other := voterOf(2)
	other.DirectoryID = dirOf(77)
	if _, err := h.node(1).AddVoter(h.now, h.status(1).Epoch, other); !errors.Is(err, raft.ErrNotCaughtUp) {
		t.Fatalf("add node 2 with another directory id: %v, want ErrNotCaughtUp", err)
	}

	off, err := h.addVoter(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	// In force on the leader as soon as it is appended.
	h.expectVoters(1, 1, 2)
	if got, ok := h.node(1).VoterChange(); !ok || got != off {
		t.Fatalf("VoterChange = %d, %v; want %d, true", got, ok, off)
	}
	if m := h.node(1).Metrics(); m.UncommittedVoterChange != 1 || m.NumberOfVoters != 2 {
		t.Fatalf("metrics: uncommitted-voter-change %d, number-of-voters %d", m.UncommittedVoterChange, m.NumberOfVoters)
	}
	if _, err := h.addVoter(1, 3); !errors.Is(err, raft.ErrVoterChangePending) {
		t.Fatalf("a second change before the first commits: %v, want ErrVoterChangePending", err)
	}
	h.advance(time.Second)
	if _, ok := h.node(1).VoterChange(); ok {
		t.Fatal("the change did not commit")
	}
	h.expectVoters(2, 1, 2)
	if _, err := h.addVoter(1, 3); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	for _, id := range []int32{1, 2, 3} {
		h.expectVoters(id, 1, 2, 3)
	}
	// DescribeQuorum v2 names each voter's directory id.
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = raft.DescribeQuorumVersion
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = raft.MetadataTopic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	p := h.request(1, -1, req).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
	if len(p.CurrentVoters) != 3 || len(p.Observers) != 0 {
		t.Fatalf("describe quorum: voters %+v, observers %+v", p.CurrentVoters, p.Observers)
	}
	for _, r := range p.CurrentVoters {
		if r.ReplicaDirectoryID != dirOf(r.ReplicaID) {
			t.Errorf("voter %d has directory id %x", r.ReplicaID, r.ReplicaDirectoryID)
		}
	}
	// The new voters count: with node 1 cut off, 2 and 3 elect a leader.
	h.isolate(1)
	h.advance(30 * time.Second)
	if st := h.status(2); st.LeaderID != 2 && st.LeaderID != 3 {
		t.Fatalf("no new leader among the added voters: %+v", st)
	}
}

// A leader that removes itself leads, without counting itself, until the
// change commits, then resigns; a voter of the new set takes over and the
// old leader follows as an observer.
func TestRemovedLeaderResignsOnceCommitted(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1, 2, 3})
	h.elect(1)
	epoch := h.status(1).Epoch
	if _, err := h.node(1).RemoveVoter(h.now, epoch, 1, dirOf(9)); !errors.Is(err, raft.ErrVoterNotFound) {
		t.Fatalf("remove with another directory id: %v, want ErrVoterNotFound", err)
	}
	if _, err := h.node(1).RemoveVoter(h.now, epoch, 7, raft.DirectoryID{}); !errors.Is(err, raft.ErrVoterNotFound) {
		t.Fatalf("remove a node that is no voter: %v, want ErrVoterNotFound", err)
	}
	h.manualFlush = true
	if _, err := h.node(1).RemoveVoter(h.now, epoch, 1, dirOf(1)); err != nil {
		t.Fatal(err)
	}
	h.collect(1)
	h.expectVoters(1, 2, 3)
	h.stabilize()
	// Not flushed: the leader serves the VotersRecord to nobody yet.
	for _, id := range []int32{2, 3} {
		h.expectVoters(id, 1, 2, 3)
	}
	if st := h.status(1); st.Role != raft.Leader {
		t.Fatalf("node 1 stopped leading before the change committed: %v", st.Role)
	}
	h.manualFlush = false
	h.flush(1)
	h.advance(40 * time.Second)
	st := h.status(2)
	if st.LeaderID != 2 && st.LeaderID != 3 || st.Epoch <= epoch {
		t.Fatalf("no new leader among the remaining voters: %+v", st)
	}
	if st1 := h.status(1); st1.Role != raft.Follower || st1.Voter || st1.LeaderID != st.LeaderID {
		t.Fatalf("old leader: %v, voter %v, following %d; want an observer following %d", st1.Role, st1.Voter, st1.LeaderID, st.LeaderID)
	}
	for _, id := range []int32{1, 2, 3} {
		h.expectVoters(id, 2, 3)
	}
}

// A VotersRecord that never committed goes away with the truncation that
// cuts it, and the voter set in force goes back with it.
func TestTruncationRevertsVoterSet(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3, 4}, []int32{1, 2, 3})
	h.elect(1)
	h.append(1, "a")
	h.advance(time.Second)
	if _, err := h.node(1).AddVoter(h.now, h.status(1).Epoch, voterOf(4)); err != nil {
		t.Fatal(err)
	}
	h.isolate(1)
	h.collect(1)
	h.expectVoters(1, 1, 2, 3, 4)
	h.advance(30 * time.Second)
	leader := h.status(2).LeaderID
	if leader != 2 && leader != 3 {
		t.Fatalf("no new leader: %+v", h.status(2))
	}
	h.append(leader, "b")
	h.heal()
	h.advance(5 * time.Second)
	if st := h.status(1); st.Role != raft.Follower || st.LeaderID != leader {
		t.Fatalf("node 1 is %v following %d, want a follower of %d", st.Role, st.LeaderID, leader)
	}
	for _, id := range []int32{1, 2, 3, 4} {
		h.expectVoters(id, 1, 2, 3)
	}
}

// A snapshot holds the kraft.version and the voter set at its end: a node
// that starts from it, and one restarting on it, know the voters.
func TestSnapshotCarriesVoterSet(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1})
	h.elect(1)
	h.advance(time.Second)
	if _, err := h.addVoter(1, 2); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	h.append(1, "a")
	h.advance(time.Second)
	end := h.nodes[1].l.next
	if err := h.node(1).CreateSnapshot(h.now, end, [][]byte{[]byte("state")}); err != nil {
		t.Fatal(err)
	}
	// Node 3 loses its disk and comes back empty: it fetches the snapshot.
	h.crash(3)
	h.nodes[3].log, h.nodes[3].store = raft.NewMemoryLog(), &raft.MemoryQuorumStateStore{}
	h.start(3)
	h.advance(2 * time.Second)
	if st := h.status(3); st.LogStartOffset != end || st.KRaftVersion != raft.KRaftVersion1 {
		t.Fatalf("node 3 starts at %d with kraft.version %d, want the snapshot at %d and 1", st.LogStartOffset, st.KRaftVersion, end)
	}
	h.expectVoters(3, 1, 2)
	// The leader restarts on its snapshot and its log.
	h.crash(1)
	h.start(1)
	h.expectVoters(1, 1, 2)
	if set, at := h.node(1).VotersAt(end - 1); !slices.Equal(set.IDs(), []int32{1, 2}) || at != end-1 {
		t.Fatalf("voters at %d: %v from %d", end-1, set, at)
	}
}

// A static quorum (kraft.version 0) keeps its configured voters and
// refuses changes.
func TestStaticQuorumRefusesVoterChanges(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, []int32{4})
	h.elect(1)
	h.advance(time.Second)
	epoch := h.status(1).Epoch
	if _, err := h.node(1).AddVoter(h.now, epoch, voterOf(4)); !errors.Is(err, raft.ErrStaticQuorum) {
		t.Fatalf("add: %v, want ErrStaticQuorum", err)
	}
	if _, err := h.node(1).RemoveVoter(h.now, epoch, 3, raft.DirectoryID{}); !errors.Is(err, raft.ErrStaticQuorum) {
		t.Fatalf("remove: %v, want ErrStaticQuorum", err)
	}
	for _, id := range []int32{1, 2, 3, 4} {
		if st := h.status(id); st.KRaftVersion != raft.KRaftVersion0 || !slices.Equal(st.Voters, []int32{1, 2, 3}) {
			t.Fatalf("node %d: kraft.version %d, voters %v", id, st.KRaftVersion, st.Voters)
		}
	}
	if err := raft.BootstrapVoters(h.nodes[1].log, raft.VoterSet{voterOf(1)}, h.now); err == nil {
		t.Fatal("BootstrapVoters wrote to a log that is not empty")
	}
}

// A leader that removed itself and stopped before any voter fetched the
// VotersRecord holds a record the voters lack; they still count on its
// vote, which its longer log refuses them. Being removed, it campaigns
// for the votes of the new set, is elected, commits its removal and
// resigns, and the remaining voter takes over.
func TestRemovedLeaderThatStoppedEarlyFinishesItsRemoval(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2}, []int32{1, 2})
	h.elect(1)
	h.append(1, "a")
	h.advance(time.Second)
	if _, err := h.node(1).RemoveVoter(h.now, h.status(1).Epoch, 1, dirOf(1)); err != nil {
		t.Fatal(err)
	}
	h.isolate(1)
	h.collect(1) // flushed, and fetched by no one
	h.crash(1)
	h.expectVoters(2, 1, 2)
	h.start(1)
	h.expectVoters(1, 2)
	h.heal()
	h.advance(60 * time.Second)
	if st := h.status(2); st.Role != raft.Leader {
		t.Fatalf("node 2 is %v in epoch %d, want the leader", st.Role, st.Epoch)
	}
	if st := h.status(1); st.Role != raft.Follower || st.Voter || st.LeaderID != 2 {
		t.Fatalf("node 1 is %v (voter %v) following %d, want an observer following 2", st.Role, st.Voter, st.LeaderID)
	}
	h.expectVoters(2, 2)
}

// A leader that led alone for longer than its check-quorum timeout keeps
// leading once a second voter is added: alone, nobody needed to fetch
// from it, so the timeout starts when it has someone to hear from (as
// Kafka's LeaderState resets its check-quorum timer while it is the only
// voter).
func TestStandaloneLeaderKeepsLeadingWhenItGetsAVoter(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2}, []int32{1})
	h.elect(1)
	h.append(1, "a")
	h.advance(30 * time.Second)
	epoch := h.status(1).Epoch
	if _, err := h.addVoter(1, 2); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	if st := h.status(1); st.Role != raft.Leader || st.Epoch != epoch {
		t.Fatalf("node 1 is %v in epoch %d after adding a voter, want Leader in epoch %d", st.Role, st.Epoch, epoch)
	}
	h.expectVoters(2, 1, 2)
}

// A voter that lost its disk comes back with a new directory id: it
// fetches the log as an observer, the leader counts its fetches toward
// nothing, it refuses a vote meant for its old folder, and it votes again
// once its old entry is removed and its new folder added.
func TestWipedVoterIsAnObserverUntilAddedAgain(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1, 2, 3})
	h.elect(1)
	h.append(1, "a")
	h.advance(time.Second)

	// Node 3's disk is replaced: an empty log, a new directory id.
	h.crash(3)
	h.nodes[3] = &hnode{log: raft.NewMemoryLog(), store: &raft.MemoryQuorumStateStore{}}
	config := h.config
	h.config = func(id int32) raft.Config {
		c := config(id)
		if id == 3 {
			c.DirectoryID = dirOf(33)
		}
		return c
	}
	h.start(3)
	h.advance(time.Second)
	if st := h.status(3); st.Voter || !slices.Equal(st.Voters, []int32{1, 2, 3}) || st.LogEndOffset != h.status(1).LogEndOffset {
		t.Fatalf("wiped node 3: voter %v, voters %v, log end %d (leader's %d)", st.Voter, st.Voters, st.LogEndOffset, h.status(1).LogEndOffset)
	}
	var rows []string
	for _, r := range h.status(1).Replicas {
		if r.NodeID == 3 {
			rows = append(rows, fmt.Sprintf("voter=%v dir=%x", r.Voter, r.DirectoryID))
		}
	}
	if want := []string{fmt.Sprintf("voter=true dir=%x", dirOf(3)), fmt.Sprintf("voter=false dir=%x", dirOf(33))}; !slices.Equal(rows, want) {
		t.Fatalf("leader's rows for node 3: %v, want %v", rows, want)
	}

	// Its fetches count toward nothing: with node 2 cut off, the leader
	// commits nothing new.
	h.isolate(2)
	hwm := h.status(1).HighWatermark
	h.append(1, "b")
	h.advance(200 * time.Millisecond)
	if got := h.status(1).HighWatermark; got != hwm {
		t.Fatalf("the high watermark moved from %d to %d on the wiped node's fetches", hwm, got)
	}
	h.heal()
	h.advance(time.Second)

	// A vote meant for its old folder is refused.
	req := kmsg.NewPtrVoteRequest()
	req.Version = raft.VoteVersion
	cid := "cluster"
	req.ClusterID = &cid
	req.VoterID = 3
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID = h.status(1).Epoch+1, 2
	p.LastOffsetEpoch, p.LastOffset = h.status(1).Epoch, h.status(1).LogEndOffset
	p.VoterDirectoryID = dirOf(3)
	rt := kmsg.NewVoteRequestTopic()
	rt.Topic = raft.MetadataTopic
	rt.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{rt}
	rp := h.request(3, 2, req).(*kmsg.VoteResponse).Topics[0].Partitions[0]
	if rp.VoteGranted || rp.ErrorCode != kerr.InvalidVoterKey.Code {
		t.Fatalf("vote for the old folder: granted %v, error %d; want refused with INVALID_VOTER_KEY (125)", rp.VoteGranted, rp.ErrorCode)
	}
	h.heal()
	h.elect(1)

	// Remove the old entry, add the new folder.
	if _, err := h.node(1).RemoveVoter(h.now, h.status(1).Epoch, 3, dirOf(3)); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	h.expectVoters(1, 1, 2)
	v := voterOf(3)
	v.DirectoryID = dirOf(33)
	if _, err := h.node(1).AddVoter(h.now, h.status(1).Epoch, v); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	h.expectVoters(3, 1, 2, 3)
	// It counts again: with node 1 cut off, 2 and 3 elect a leader.
	h.isolate(1)
	h.advance(30 * time.Second)
	if st := h.status(2); st.LeaderID != 2 && st.LeaderID != 3 {
		t.Fatalf("no new leader among 2 and the re-added 3: %+v", st)
	}
}
