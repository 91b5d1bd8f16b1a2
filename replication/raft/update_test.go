package raft_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newDescribingHarness is newDynamicHarness's quorum with nodes that know
// their own listeners (voterOf's), formatted as kraftlab's initial
// controllers are: voters named by id alone, with no listeners, no
// directory ids and kraft.version 0 to 0, which their updates fill in.
func newDescribingHarness(t *testing.T, ids []int32) *harness {
	t.Helper()
	h := &harness{t: t, now: t0, voters: ids, ids: ids, nodes: map[int32]*hnode{}, cut: map[[2]int32]bool{}}
	port := map[int32]uint16{}
	h.config = func(id int32) raft.Config {
		c := raft.DefaultConfig()
		c.NodeID, c.ClusterID, c.Bootstrap, c.DirectoryID = id, "cluster", ids, dirOf(id)
		c.Listeners = voterOf(id).Endpoints
		if p, ok := port[id]; ok {
			c.Listeners[0].Port = p
		}
		c.ElectionTimeout = 10 * time.Second
		if id == ids[0] {
			c.ElectionTimeout = 100 * time.Millisecond
		}
		return c
	}
	h.ports = port
	for _, id := range ids {
		hn := &hnode{log: raft.NewMemoryLog(), store: &raft.MemoryQuorumStateStore{}}
		if err := raft.BootstrapVoters(hn.log, raft.StaticVoters(ids), t0); err != nil {
			t.Fatal(err)
		}
		h.nodes[id] = hn
		h.start(id)
	}
	return h
}

// expectEntries checks every node's voter set against want's entries.
func (h *harness) expectEntries(want map[int32]raft.Voter) {
	h.t.Helper()
	for _, id := range h.ids {
		if h.node(id) == nil {
			continue
		}
		set := h.node(id).Voters()
		for vid, w := range want {
			v, ok := set.Voter(vid)
			if !ok || !(raft.VoterSet{v}).Equal(raft.VoterSet{w}) {
				h.t.Fatalf("node %d has voter %d as %+v, want %+v", id, vid, v, w)
			}
		}
	}
}

// Voters formatted without their listeners fill them in: the leader its
// own once its epoch has committed, each follower with UpdateRaftVoter a
// fetch timeout after it started following. A voter that comes back on
// another port updates its entry again.
func TestVotersUpdateTheirEntries(t *testing.T) {
	h := newDescribingHarness(t, []int32{1, 2, 3})
	updates := 0
	h.delivered = func(m raft.Message) {
		if m.Request != nil && m.Request.Key() == kmsg.UpdateRaftVoter.Int16() {
			updates++
		}
	}
	h.elect(1)
	h.advance(10 * time.Second)
	// Both followers send at once: one is refused while the other's
	// change is uncommitted, and tries again a fetch timeout later.
	if updates != 3 {
		t.Fatalf("%d UpdateRaftVoter requests, want 3", updates)
	}
	want := map[int32]raft.Voter{1: voterOf(1), 2: voterOf(2), 3: voterOf(3)}
	h.expectEntries(want)
	if _, ok := h.node(1).VoterChange(); ok {
		t.Fatal("an update is still uncommitted")
	}

	// Node 2 restarts listening elsewhere.
	h.crash(2)
	h.ports[2] = 9999
	h.start(2)
	h.advance(10 * time.Second)
	want[2].Endpoints[0].Port = 9999
	h.expectEntries(want)
	if updates != 4 {
		t.Fatalf("%d UpdateRaftVoter requests, want one more from node 2", updates)
	}
	if st := h.status(1); st.Role != raft.Leader {
		t.Fatalf("node 1 lost its leadership: %+v", st)
	}
	// With the entries right, nobody sends UpdateRaftVoter any more.
	h.advance(10 * time.Second)
	if got := h.pending(isKind(kmsg.UpdateRaftVoter.Int16())); len(got) > 0 {
		t.Fatalf("updates sent with the entries right: %v", got)
	}
}

func updateRequest(v raft.Voter, epoch int32) *kmsg.UpdateRaftVoterRequest {
	req := kmsg.NewPtrUpdateRaftVoterRequest()
	cluster := "cluster"
	req.ClusterID = &cluster
	req.CurrentLeaderEpoch = epoch
	req.VoterID, req.VoterDirectoryID = v.ID, v.DirectoryID
	for _, e := range v.Endpoints {
		l := kmsg.NewUpdateRaftVoterRequestListener()
		l.Name, l.Host, l.Port = e.Name, e.Host, e.Port
		req.Listeners = append(req.Listeners, l)
	}
	req.KRaftVersionFeature.MinSupportedVersion = int16(v.MinVersion)
	req.KRaftVersionFeature.MaxSupportedVersion = int16(v.MaxVersion)
	return req
}

// The leader answers UpdateRaftVoter with Kafka's error codes.
func TestUpdateRaftVoterRefusals(t *testing.T) {
	h := newDescribingHarness(t, []int32{1, 2, 3})
	h.elect(1)
	h.advance(10 * time.Second)
	epoch := h.status(1).Epoch
	code := func(to int32, req *kmsg.UpdateRaftVoterRequest) string {
		t.Helper()
		resp, ok := h.request(to, 2, req).(*kmsg.UpdateRaftVoterResponse)
		if !ok {
			t.Fatalf("no UpdateRaftVoter response")
		}
		if resp.CurrentLeader.LeaderID != 1 || resp.CurrentLeader.LeaderEpoch != epoch {
			t.Errorf("answer names leader %d in epoch %d", resp.CurrentLeader.LeaderID, resp.CurrentLeader.LeaderEpoch)
		}
		if resp.CurrentLeader.Port != int32(voterOf(1).Endpoints[0].Port) {
			t.Errorf("answer names the leader at port %d", resp.CurrentLeader.Port)
		}
		return raft.ErrorName(resp.ErrorCode)
	}
	moved := voterOf(2)
	moved.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 7777}}
	for _, c := range []struct {
		name string
		to   int32
		req  func() *kmsg.UpdateRaftVoterRequest
		want string
	}{
		{"another cluster", 1, func() *kmsg.UpdateRaftVoterRequest {
			r := updateRequest(moved, epoch)
			other := "other"
			r.ClusterID = &other
			return r
		}, "INCONSISTENT_CLUSTER_ID"},
		{"an old epoch", 1, func() *kmsg.UpdateRaftVoterRequest { return updateRequest(moved, epoch-1) }, "FENCED_LEADER_EPOCH"},
		{"a later epoch", 1, func() *kmsg.UpdateRaftVoterRequest { return updateRequest(moved, epoch+1) }, "UNKNOWN_LEADER_EPOCH"},
		{"a follower", 3, func() *kmsg.UpdateRaftVoterRequest { return updateRequest(moved, epoch) }, "NOT_LEADER_OR_FOLLOWER"},
		{"no directory id", 1, func() *kmsg.UpdateRaftVoterRequest {
			v := moved
			v.DirectoryID = raft.DirectoryID{}
			return updateRequest(v, epoch)
		}, "INVALID_REQUEST"},
		{"no default listener", 1, func() *kmsg.UpdateRaftVoterRequest {
			v := moved
			v.Endpoints = []raft.Endpoint{{Name: "OTHER", Host: "127.0.0.1", Port: 1}}
			return updateRequest(v, epoch)
		}, "INVALID_REQUEST"},
		{"an empty version range", 1, func() *kmsg.UpdateRaftVoterRequest {
			v := moved
			v.MinVersion, v.MaxVersion = 1, 0
			return updateRequest(v, epoch)
		}, "INVALID_REQUEST"},
		{"no kraft.version 1", 1, func() *kmsg.UpdateRaftVoterRequest {
			v := moved
			v.MaxVersion = 0
			return updateRequest(v, epoch)
		}, "INVALID_REQUEST"},
		{"no such voter", 1, func() *kmsg.UpdateRaftVoterRequest {
			v := voterOf(9)
			return updateRequest(v, epoch)
		}, "VOTER_NOT_FOUND"},
		{"another directory id", 1, func() *kmsg.UpdateRaftVoterRequest {
			v := moved
			v.DirectoryID = dirOf(77)
			return updateRequest(v, epoch)
		}, "VOTER_NOT_FOUND"},
		{"the update", 1, func() *kmsg.UpdateRaftVoterRequest { return updateRequest(moved, epoch) }, "NONE"},
		{"a second change before the first commits", 1, func() *kmsg.UpdateRaftVoterRequest { return updateRequest(voterOf(3), epoch) }, "REQUEST_TIMED_OUT"},
	} {
		if got := code(c.to, c.req()); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// Answered before it commits, in force at once on the leader.
	if v, _ := h.node(1).Voters().Voter(2); v.Endpoints[0].Port != 7777 {
		t.Fatalf("the leader's entry for node 2: %+v", v)
	}
	if _, ok := h.node(1).VoterChange(); !ok {
		t.Fatal("the update is not pending")
	}
}

// A static quorum (kraft.version 0) keeps no voter set in its log: the
// leader checks the request and answers it, and nothing changes.
func TestUpdateRaftVoterStaticQuorum(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	h.elect(1)
	epoch := h.status(1).Epoch
	end := h.node(1).Status().LogEndOffset
	for _, c := range []struct {
		v    raft.Voter
		want string
	}{{voterOf(2), "NONE"}, {voterOf(9), "VOTER_NOT_FOUND"}} {
		resp := h.request(1, 2, updateRequest(c.v, epoch)).(*kmsg.UpdateRaftVoterResponse)
		if got := raft.ErrorName(resp.ErrorCode); got != c.want {
			t.Errorf("update voter %d: %s, want %s", c.v.ID, got, c.want)
		}
	}
	if got := h.node(1).Status().LogEndOffset; got != end {
		t.Fatalf("the log grew from %d to %d", end, got)
	}
	if !slices.Equal(h.status(1).Voters, []int32{1, 2, 3}) {
		t.Fatalf("voters %v", h.status(1).Voters)
	}
}
