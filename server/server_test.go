package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testClusterID = "kraftlab-server-test"

// testServers runs controllers 1..3 and broker 101 on loopback, as one
// Group; byID is the group's members, for the tests' convenience.
type testServers struct {
	secret   string
	counters *wire.Counters
	group    *Group
	byID     map[int32]*Server
}

func startServers(t *testing.T) *testServers {
	t.Helper()
	return startServersFetchTimeout(t, 600*time.Millisecond)
}

// startServersFetchTimeout starts them with controller.quorum.fetch.timeout.ms
// at fetchTimeout, the time a leader keeps leading without its followers.
func startServersFetchTimeout(t *testing.T, fetchTimeout time.Duration) *testServers {
	t.Helper()
	return startServersWith(t, fetchTimeout, nil)
}

// startServersWith starts them with tweak applied to each server's Config.
func startServersWith(t *testing.T, fetchTimeout time.Duration, tweak func(*Config)) *testServers {
	t.Helper()
	return startClusterWith(t, fetchTimeout, []int32{101}, tweak)
}

// startClusterWith starts controllers 1..3 and the given brokers (ids
// above 100).
func startClusterWith(t testing.TB, fetchTimeout time.Duration, brokers []int32, tweak func(*Config)) *testServers {
	t.Helper()
	ts := &testServers{group: NewGroup(), byID: map[int32]*Server{}, counters: wire.NewCounters()}
	voters := []int32{1, 2, 3}
	dir := t.TempDir()
	var err error
	if ts.secret, err = LoadSecret(dir); err != nil {
		t.Fatal(err)
	}
	for _, id := range append([]int32{1, 2, 3}, brokers...) {
		rc := raft.DefaultConfig()
		rc.NodeID, rc.Voters, rc.ClusterID = id, voters, testClusterID
		rc.ElectionTimeout, rc.FetchTimeout, rc.RequestTimeout = 150*time.Millisecond, fetchTimeout, 600*time.Millisecond
		rc.ElectionBackoffMax, rc.RetryBackoff, rc.FetchMaxWait = 150*time.Millisecond, 10*time.Millisecond, 100*time.Millisecond
		kind := Controller
		if id > 100 {
			kind = Broker
		}
		cfg := Config{Kind: kind, Raft: quorum.Config{Raft: rc, Dir: NodeDir(dir, id), Flush: storage.FlushNever, Secret: ts.secret, Counters: ts.counters}}
		if tweak != nil {
			tweak(&cfg)
		}
		s, err := ts.group.Add(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.group.Start(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		ts.byID[id] = s
	}
	// Also ends the restarts of a node that stopped on a disk fault.
	t.Cleanup(func() { ts.group.KillAll() })
	return ts
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, cond)
}

func do(t *testing.T, addr string, req kmsg.Request) kmsg.Response {
	t.Helper()
	c, err := wire.NewClient(wire.ClientConfig{From: 900, To: 0, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, req)
	if err != nil {
		t.Fatalf("%s to %s: %v", kmsg.NameForKey(req.Key()), addr, err)
	}
	return resp
}

func apiKeys(t *testing.T, addr string) []int16 {
	t.Helper()
	av := do(t, addr, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 {
		t.Fatalf("ApiVersions from %s: error %d", addr, av.ErrorCode)
	}
	var keys []int16
	for _, k := range av.ApiKeys {
		keys = append(keys, k.ApiKey)
	}
	return keys
}

// A controller advertises the quorum's RPCs, the quorum controller's and
// Envelope, for what brokers forward;
// a broker's raft client is client-only, so the broker advertises none of
// the quorum's over a real socket, and serves Metadata, the forwarded
// controller APIs, its ReplicaManager's Produce, Fetch, ListOffsets and
// OffsetForLeaderEpoch, and FindCoordinator with the group coordinator's
// APIs instead.
func TestBrokerServesNoVoterAPIs(t *testing.T) {
	ts := startServers(t)
	want := []int16{kmsg.ApiVersions.Int16(), kmsg.SASLHandshake.Int16(), kmsg.SASLAuthenticate.Int16(), kmsg.DescribeCluster.Int16(), kmsg.Envelope.Int16()}
	for _, api := range append(slices.Clone(quorum.VoterAPIs), controller.APIs...) {
		want = append(want, api.Key)
	}
	slices.Sort(want)
	if got := apiKeys(t, ts.byID[1].Addr()); !slices.Equal(got, want) {
		t.Errorf("controller 1 advertises %v, want %v", got, want)
	}
	broker := apiKeys(t, ts.byID[101].Addr())
	for _, api := range []kmsg.Key{kmsg.Vote, kmsg.BeginQuorumEpoch, kmsg.EndQuorumEpoch, kmsg.FetchSnapshot} {
		if slices.Contains(broker, api.Int16()) {
			t.Errorf("broker advertises %s: %v", kmsg.NameForKey(api.Int16()), broker)
		}
	}
	for _, api := range []kmsg.Key{kmsg.DescribeQuorum, kmsg.Metadata, kmsg.DescribeCluster, kmsg.CreateTopics, kmsg.DeleteTopics, kmsg.CreatePartitions, kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.OffsetForLeaderEpoch, kmsg.InitProducerID,
		kmsg.FindCoordinator, kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.ListGroups, kmsg.DescribeGroups, kmsg.DeleteGroups, kmsg.OffsetDelete, kmsg.ConsumerGroupHeartbeat, kmsg.ConsumerGroupDescribe} {
		if !slices.Contains(broker, api.Int16()) {
			t.Errorf("broker does not advertise %s: %v", kmsg.NameForKey(api.Int16()), broker)
		}
	}
	for _, api := range []kmsg.Key{kmsg.BrokerRegistration, kmsg.BrokerHeartbeat, kmsg.AlterPartition} {
		if slices.Contains(broker, api.Int16()) {
			t.Errorf("broker advertises the controller's %s: %v", kmsg.NameForKey(api.Int16()), broker)
		}
	}
}

// A broker forwards DescribeQuorum to the leader and relays its answer:
// the leader's replica table, with the broker among the observers.
func TestBrokerForwardsDescribeQuorum(t *testing.T) {
	ts := startServers(t)
	waitFor(t, "the broker to follow a leader", func() bool {
		st := ts.byID[101].Raft().Status()
		return st.LeaderID > 0 && st.Role == raft.Follower
	})
	req := kmsg.NewPtrDescribeQuorumRequest()
	tp := kmsg.NewDescribeQuorumRequestTopic()
	tp.Topic = raft.MetadataTopic
	tp.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{tp}
	var p kmsg.DescribeQuorumResponseTopicPartition
	waitFor(t, "a DescribeQuorum answer naming the broker as observer", func() bool {
		dq := do(t, ts.byID[101].Addr(), req).(*kmsg.DescribeQuorumResponse)
		if dq.ErrorCode != 0 || len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
			return false
		}
		p = dq.Topics[0].Partitions[0]
		return p.ErrorCode == 0 && len(p.Observers) == 1 && p.Observers[0].ReplicaID == 101
	})
	if p.LeaderID < 1 || p.LeaderID > 3 || len(p.CurrentVoters) != 3 {
		t.Errorf("forwarded answer: %+v", p)
	}
}

// Kill closes the listener with the node; a restart listens on the same
// address, and a graceful stop closes it too.
func TestLifecycleActsOnTheWholeServer(t *testing.T) {
	ts := startServers(t)
	s := ts.byID[101]
	addr := s.Addr()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if st := s.Raft().Status(); s.Running() || st.Running() {
		t.Fatal("killed server still running")
	}
	if err := s.Kill(); err == nil {
		t.Error("second kill succeeded")
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != addr {
		t.Errorf("restarted on %s, want %s", s.Addr(), addr)
	}
	apiKeys(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Error("stopped server still running")
	}
}

// A group's members find each other through its address book: the
// broker follows the controllers' leader; a member is added once, and
// never with peers of its own.
func TestGroupAddressBook(t *testing.T) {
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101}, nil)
	waitFor(t, "the broker observing the leader", func() bool {
		st := ts.byID[101].Raft().Status()
		return st.LeaderID >= 1 && st.LeaderID <= 3
	})
	for id, s := range ts.byID {
		if a, ok := ts.group.Peer(id); !ok || a != s.Addr() {
			t.Fatalf("peer %d: %q %v, want %q", id, a, ok, s.Addr())
		}
	}
	cfg := ts.byID[101].cfg
	cfg.Raft.Peers = nil
	if _, err := ts.group.Add(cfg); err == nil {
		t.Fatal("node 101 added twice")
	}
	cfg.Raft.Raft.NodeID = 102
	cfg.Raft.Peers = func(int32) (string, bool) { return "", false }
	if _, err := ts.group.Add(cfg); err == nil {
		t.Fatal("a member with peers of its own added")
	}
}
