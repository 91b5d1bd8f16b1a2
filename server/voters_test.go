package server

import (
	"context"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// dynamicController is controller id of a dynamic quorum whose initial
// controllers are initial: an initial one formats its log with them as
// dynamicGroup is the data folder, member secret and server group a
// dynamic quorum test starts its nodes in; the group is killed at the end.
func dynamicGroup(t *testing.T) (dir, secret string, g *Group) {
	t.Helper()
	dir = t.TempDir()
	secret, err := LoadSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	g = NewGroup()
	t.Cleanup(func() { g.KillAll() })
	return dir, secret, g
}

// the voter set, any other joins as an observer.
func dynamicController(t *testing.T, g *Group, dir, secret string, id int32, initial []int32) *Server {
	t.Helper()
	return dynamicNode(t, g, dir, secret, Controller, id, initial)
}

// dynamicNode is dynamicController for a node of either kind.
func dynamicNode(t *testing.T, g *Group, dir, secret string, kind Kind, id int32, initial []int32) *Server {
	t.Helper()
	rc := raft.DefaultConfig()
	rc.NodeID, rc.ClusterID = id, testClusterID
	rc.ElectionTimeout, rc.FetchTimeout, rc.RequestTimeout = 150*time.Millisecond, 600*time.Millisecond, 600*time.Millisecond
	rc.ElectionBackoffMax, rc.RetryBackoff, rc.FetchMaxWait = 150*time.Millisecond, 10*time.Millisecond, 100*time.Millisecond
	qc := quorum.Config{Raft: rc, Dir: NodeDir(dir, id), Flush: storage.FlushNever, Secret: secret}
	if err := dynamicQuorum(&qc, initial, testClusterID, dir); err != nil {
		t.Fatal(err)
	}
	s, err := g.Add(Config{Kind: kind, Raft: qc})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// leaderOf is the server that leads, among ss, nil if none does.
func leaderOf(ss ...*Server) *Server {
	for _, s := range ss {
		if st := s.Raft().Status(); s.Running() && st.Role == raft.Leader && st.HighWatermark >= 0 {
			return s
		}
	}
	return nil
}

// addVoter sends AddRaftVoter for s to the leader among ss until it is
// answered with no error; the leader refuses while s has not caught up.
func addVoter(t *testing.T, dir string, s *Server, ss ...*Server) {
	t.Helper()
	meta, err := ReadMetaProperties(NodeDir(dir, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	ep, ok := quorum.EndpointOf(s.Addr())
	if !ok {
		t.Fatalf("node %d listens at %q", s.ID(), s.Addr())
	}
	var last int16
	waitFor(t, "AddRaftVoter accepted", func() bool {
		l := leaderOf(ss...)
		if l == nil {
			return false
		}
		req := kmsg.NewPtrAddRaftVoterRequest()
		req.ClusterID = kmsg.StringPtr(testClusterID)
		req.TimeoutMillis = 5000
		req.VoterID, req.VoterDirectoryID = s.ID(), meta.DirectoryID
		lis := kmsg.NewAddRaftVoterRequestListener()
		lis.Name, lis.Host, lis.Port = ep.Name, ep.Host, ep.Port
		req.Listeners = append(req.Listeners, lis)
		req.AckWhenCommitted = true
		last = do(t, l.Addr(), req).(*kmsg.AddRaftVoterResponse).ErrorCode
		if last != 0 && last != kerr.RequestTimedOut.Code && last != kerr.NotLeaderForPartition.Code {
			t.Fatalf("AddRaftVoter %d: %v", s.ID(), kerr.ErrorForCode(last))
		}
		return last == 0
	})
}

func votersOn(s *Server) []int32 { return s.Raft().Status().Voters }

// A standalone controller grows into a quorum of three, one AddRaftVoter
// at a time, which elects a new leader when the first one is killed and
// then removes it.
func TestDynamicQuorumGrowsOverTheWire(t *testing.T) {
	dir, secret, g := dynamicGroup(t)
	c1 := dynamicController(t, g, dir, secret, 1, []int32{1})
	waitFor(t, "the standalone controller leads", func() bool { return leaderOf(c1) == c1 })
	if st := c1.Raft().Status(); st.KRaftVersion != raft.KRaftVersion1 || !slices.Equal(st.Voters, []int32{1}) {
		t.Fatalf("standalone controller: kraft.version %d, voters %v", st.KRaftVersion, st.Voters)
	}
	c2 := dynamicController(t, g, dir, secret, 2, []int32{1})
	c3 := dynamicController(t, g, dir, secret, 3, []int32{1})
	// A broker observes a dynamic quorum as a static one. It looks for
	// the leader only among its bootstrap servers, as Kafka's does, so it
	// lists every controller: the first one dies below.
	b := dynamicNode(t, g, dir, secret, Broker, 101, []int32{1, 2, 3})
	all := []*Server{c1, c2, c3}
	if st := c2.Raft().Status(); st.Voter {
		t.Fatalf("a joining controller votes before it is added: %+v", st.Status)
	}

	addVoter(t, dir, c2, all...)
	waitFor(t, "voters 1, 2 everywhere", func() bool {
		return slices.Equal(votersOn(c1), []int32{1, 2}) && slices.Equal(votersOn(c2), []int32{1, 2})
	})
	addVoter(t, dir, c3, all...)
	// The broker too: it knows the added voters from the log.
	waitFor(t, "voters 1, 2, 3 everywhere", func() bool {
		for _, s := range all {
			if !slices.Equal(votersOn(s), []int32{1, 2, 3}) || !s.Raft().Status().Voter {
				return false
			}
		}
		return slices.Equal(votersOn(b), []int32{1, 2, 3})
	})

	// DescribeQuorum lists every voter at the listener it was added with.
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = raft.DescribeQuorumVersion
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = raft.MetadataTopic
	topic.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	dq.Topics = append(dq.Topics, topic)
	resp := do(t, leaderOf(all...).Addr(), dq).(*kmsg.DescribeQuorumResponse)
	listed := map[int32]string{}
	for _, n := range resp.Nodes {
		for _, l := range n.Listeners {
			listed[n.NodeID] = net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
		}
	}
	for _, s := range all {
		if listed[s.ID()] != s.Addr() {
			t.Fatalf("DescribeQuorum lists node %d at %q, it listens at %s (nodes %v)", s.ID(), listed[s.ID()], s.Addr(), listed)
		}
	}

	// The first leader dies; the two added controllers elect one of them.
	epoch := c1.Raft().Status().Epoch
	if err := c1.Kill(); err != nil {
		t.Fatal(err)
	}
	var next *Server
	waitFor(t, "a new leader among the added controllers", func() bool {
		next = leaderOf(c2, c3)
		return next != nil && next.Raft().Status().Epoch > epoch
	})

	// It removes the dead controller.
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.ClusterID = kmsg.StringPtr(testClusterID)
	rm.VoterID = 1
	if code := do(t, next.Addr(), rm).(*kmsg.RemoveRaftVoterResponse).ErrorCode; code != 0 {
		t.Fatalf("RemoveRaftVoter 1: %v", kerr.ErrorForCode(code))
	}
	waitFor(t, "voters 2, 3, also on the broker", func() bool {
		return slices.Equal(votersOn(c2), []int32{2, 3}) && slices.Equal(votersOn(c3), []int32{2, 3}) && slices.Equal(votersOn(b), []int32{2, 3})
	})
	if b.Raft().Status().Voter {
		t.Fatal("the broker votes")
	}
	if code := do(t, next.Addr(), rm).(*kmsg.RemoveRaftVoterResponse).ErrorCode; code != kerr.VoterNotFound.Code {
		t.Fatalf("RemoveRaftVoter 1 again: %v, want VOTER_NOT_FOUND", kerr.ErrorForCode(code))
	}
}

// A static quorum's controllers answer the voter RPCs with
// UNSUPPORTED_VERSION, as Kafka's do under kraft.version 0.
func TestStaticQuorumRefusesVoterChanges(t *testing.T) {
	ts := startServers(t)
	var l *Server
	waitFor(t, "a leader", func() bool { l = leaderOf(ts.byID[1], ts.byID[2], ts.byID[3]); return l != nil })
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.VoterID = 3
	if code := do(t, l.Addr(), rm).(*kmsg.RemoveRaftVoterResponse).ErrorCode; code != kerr.UnsupportedVersion.Code {
		t.Fatalf("RemoveRaftVoter on a static quorum: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(code))
	}
}

// A leader that removes itself answers its RemoveRaftVoter with no error:
// the removal committed before it resigned.
func TestLeaderRemovesItself(t *testing.T) {
	dir, secret, g := dynamicGroup(t)
	c1 := dynamicController(t, g, dir, secret, 1, []int32{1})
	waitFor(t, "the standalone controller leads", func() bool { return leaderOf(c1) == c1 })
	c2 := dynamicController(t, g, dir, secret, 2, []int32{1})
	c3 := dynamicController(t, g, dir, secret, 3, []int32{1})
	all := []*Server{c1, c2, c3}
	addVoter(t, dir, c2, all...)
	addVoter(t, dir, c3, all...)
	waitFor(t, "voters 1, 2, 3 on the leader", func() bool { return slices.Equal(votersOn(c1), []int32{1, 2, 3}) })
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.ClusterID = kmsg.StringPtr(testClusterID)
	rm.VoterID = 1
	if resp := do(t, c1.Addr(), rm).(*kmsg.RemoveRaftVoterResponse); resp.ErrorCode != 0 {
		t.Fatalf("RemoveRaftVoter 1 on leader 1: %v: %v", kerr.ErrorForCode(resp.ErrorCode), *resp.ErrorMessage)
	}
	waitFor(t, "a leader among 2 and 3 with voters 2, 3", func() bool {
		l := leaderOf(c2, c3)
		return l != nil && slices.Equal(votersOn(l), []int32{2, 3})
	})
}

// describeQuorum is the leader among ss's DescribeQuorum (v2) partition.
func describeQuorum(t *testing.T, ss ...*Server) kmsg.DescribeQuorumResponseTopicPartition {
	t.Helper()
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = raft.DescribeQuorumVersion
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = raft.MetadataTopic
	topic.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	dq.Topics = append(dq.Topics, topic)
	return do(t, leaderOf(ss...).Addr(), dq).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
}

// Initial controllers name each other's directory ids, as
// kafka-storage format --initial-controllers does; one whose folder is
// formatted again starts with a new directory id and without the initial
// voter set, and fetches the log as an observer.
func TestWipedInitialControllerComesBackAnObserver(t *testing.T) {
	dir, secret, g := dynamicGroup(t)
	initial := []int32{1, 2, 3}
	var all []*Server
	for _, id := range initial {
		all = append(all, dynamicController(t, g, dir, secret, id, initial))
	}
	waitFor(t, "a leader", func() bool { return leaderOf(all...) != nil })
	dirOf := func(id int32) [16]byte {
		t.Helper()
		m, err := ReadMetaProperties(NodeDir(dir, id))
		if err != nil {
			t.Fatal(err)
		}
		return m.DirectoryID
	}
	for _, v := range describeQuorum(t, all...).CurrentVoters {
		if v.ReplicaDirectoryID != dirOf(v.ReplicaID) {
			t.Errorf("voter %d has directory id %x, its folder %x", v.ReplicaID, v.ReplicaDirectoryID, dirOf(v.ReplicaID))
		}
	}

	wiped := all[2]
	if leaderOf(all...) == wiped {
		wiped = all[1]
	}
	id := wiped.ID()
	old := dirOf(id)
	if err := wiped.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(NodeDir(dir, id)); err != nil {
		t.Fatal(err)
	}
	if err := Format(NodeDir(dir, id), testClusterID, id); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background(), wiped); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the wiped controller fetches the voter set", func() bool {
		return slices.Equal(votersOn(wiped), initial) && wiped.Raft().Status().LogEndOffset >= leaderOf(all...).Raft().Status().HighWatermark
	})
	if st := wiped.Raft().Status(); st.Voter {
		t.Fatalf("the wiped controller votes: %+v", st.Status)
	}
	waitFor(t, "the leader lists the wiped controller as an observer", func() bool {
		p := describeQuorum(t, all...)
		var voter, observer bool
		for _, v := range p.CurrentVoters {
			voter = voter || (v.ReplicaID == id && v.ReplicaDirectoryID == old)
		}
		for _, o := range p.Observers {
			observer = observer || (o.ReplicaID == id && o.ReplicaDirectoryID == dirOf(id))
		}
		return voter && observer
	})
	// Its log is the leader's: it wrote no initial voter set of its own.
	data, _, err := wiped.Raft().ReadLog(context.Background(), 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := leaderOf(all...).Raft().ReadLog(context.Background(), 0, len(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || string(data[:min(len(data), len(want))]) != string(want[:min(len(data), len(want))]) {
		t.Fatal("the wiped controller's log does not start as the leader's")
	}
}
