package quorum

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFranzGoClient: franz-go's own client, which nobody here wrote,
// negotiates ApiVersions with a node and gets DescribeQuorum answered: the
// leader's full replica table with the voters' endpoints, and a follower's
// bare NOT_LEADER_OR_FOLLOWER.
func TestFranzGoClient(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3, observers: 1})
	leader, epoch := c.leader(10 * time.Second)
	last := c.appendN(leader, 50, 100, 50, "kgo")
	c.waitFor("the leader to see every replica caught up", 5*time.Second, func() bool {
		rs := c.nodes[leader].Status().Replicas
		for _, r := range rs {
			if r.NodeID != leader && r.LogEndOffset <= last {
				return false
			}
		}
		return len(rs) == 4
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	describe := func(id int32) *kmsg.DescribeQuorumResponse {
		t.Helper()
		addr, _ := c.addr(id)
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
		if err != nil {
			t.Fatalf("ApiVersions to node %d: %v", id, err)
		}
		av := resp.(*kmsg.ApiVersionsResponse)
		var got []wire.APIRange
		for _, k := range av.ApiKeys {
			got = append(got, wire.APIRange{Key: k.ApiKey, MinVersion: k.MinVersion, MaxVersion: k.MaxVersion})
		}
		want := []wire.APIRange{
			{Key: kmsg.ApiVersions.Int16(), MaxVersion: new(kmsg.ApiVersionsRequest).MaxVersion()},
			{Key: kmsg.SASLHandshake.Int16(), MinVersion: 1, MaxVersion: 1},
			{Key: kmsg.SASLAuthenticate.Int16(), MaxVersion: 2},
		}
		for _, api := range VoterAPIs {
			api.MembersOnly = false // not on the wire
			want = append(want, api)
		}
		slices.SortFunc(want, func(a, b wire.APIRange) int { return int(a.Key - b.Key) })
		if av.ErrorCode != 0 || !slices.Equal(got, want) {
			t.Fatalf("ApiVersions from node %d: error %d, %v; want %v", id, av.ErrorCode, got, want)
		}

		req := kmsg.NewPtrDescribeQuorumRequest()
		tp := kmsg.NewDescribeQuorumRequestTopic()
		tp.Topic = raft.MetadataTopic
		tp.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		req.Topics = []kmsg.DescribeQuorumRequestTopic{tp}
		seeds := cl.SeedBrokers()
		resp, err = seeds[0].Request(ctx, req)
		if err != nil {
			t.Fatalf("DescribeQuorum to node %d: %v", id, err)
		}
		dq := resp.(*kmsg.DescribeQuorumResponse)
		if dq.Version != raft.DescribeQuorumVersion {
			t.Errorf("kgo used DescribeQuorum v%d, want v%d, the highest we serve", dq.Version, raft.DescribeQuorumVersion)
		}
		if dq.ErrorCode != 0 || len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
			t.Fatalf("DescribeQuorum from node %d: %+v", id, dq)
		}
		return dq
	}

	dq := describe(leader)
	// The network layer adds each voter's endpoint, as Kafka's tools
	// print it: CONTROLLER://host:port.
	if len(dq.Nodes) != len(c.voters) {
		t.Errorf("DescribeQuorum names %d voter endpoints, want %d: %+v", len(dq.Nodes), len(c.voters), dq.Nodes)
	}
	for _, n := range dq.Nodes {
		addr, _ := c.addr(n.NodeID)
		if len(n.Listeners) != 1 || n.Listeners[0].Name != "CONTROLLER" || net.JoinHostPort(n.Listeners[0].Host, fmt.Sprint(n.Listeners[0].Port)) != addr {
			t.Errorf("node %d's endpoint %+v, want CONTROLLER://%s", n.NodeID, n.Listeners, addr)
		}
	}
	p := dq.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LeaderID != leader || p.LeaderEpoch != epoch || p.HighWatermark <= last {
		t.Fatalf("leader's DescribeQuorum: %+v", p)
	}
	var voters []int32
	for _, r := range p.CurrentVoters {
		voters = append(voters, r.ReplicaID)
		if r.LogEndOffset <= last || r.LastFetchTimestamp <= 0 || r.LastCaughtUpTimestamp <= 0 {
			t.Errorf("voter %+v\n%s\n%s", r, c.describe(), c.eventLog())
		}
	}
	slices.Sort(voters)
	if !slices.Equal(voters, c.voters) {
		t.Errorf("voters %v, want %v", voters, c.voters)
	}
	if len(p.Observers) != 1 || p.Observers[0].ReplicaID != 101 || p.Observers[0].LogEndOffset <= last {
		t.Errorf("observers %+v", p.Observers)
	}

	for _, id := range c.voters {
		if id == leader {
			continue
		}
		p := describe(id).Topics[0].Partitions[0]
		// A bare NOT_LEADER_OR_FOLLOWER, as Kafka answers off the leader.
		if p.ErrorCode != 6 || len(p.CurrentVoters) != 0 {
			t.Errorf("follower %d's DescribeQuorum: error %s, voters %v", id, raft.ErrorName(p.ErrorCode), p.CurrentVoters)
		}
		break
	}
}
