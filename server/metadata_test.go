package server

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker registers with the active controller, catches up and is
// unfenced; a real Kafka admin client then lists it and creates a topic
// through it (the broker forwards CreateTopics), every node's loader
// applies the topic, and a broker that stops heartbeating is fenced and
// loses its leaderships.
func TestBrokersRegisterAndServeKafkaClients(t *testing.T) {
	ts := startServersWith(t, 600*time.Millisecond, func(c *Config) {
		c.Settings.BrokerSessionTimeout = 1500 * time.Millisecond
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
	})
	b := ts.byID[101]
	waitFor(t, "broker 101 RUNNING", func() bool { return b.Lifecycle().State() == BrokerRunning })
	// RUNNING comes with the heartbeat answer; the broker's own image, which
	// its Metadata answers from, learns of the unfencing when its loader
	// applies the record, a moment later.
	waitFor(t, "broker 101 unfenced in its own image", func() bool {
		r := b.image().Cluster().Broker(101)
		return r != nil && !r.Fenced
	})

	// A short metadata age: kadm answers ListTopics from kgo's cache of
	// the last Metadata (here ListBrokers', from before the topic).
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	brokers, err := adm.ListBrokers(ctx)
	if err != nil || len(brokers) != 1 || brokers[0].NodeID != 101 || brokers[0].Port == 0 {
		t.Fatalf("ListBrokers = %+v, %v; want broker 101 at its port", brokers, err)
	}
	resp, err := adm.CreateTopic(ctx, 2, 1, nil, "orders")
	if err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	for _, id := range []int32{1, 2, 3, 101} {
		s := ts.byID[id]
		waitFor(t, "the topic served by every node", func() bool { return s.servedImage().Topics().TopicByName("orders") != nil })
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil || !topics.Has("orders") || len(topics["orders"].Partitions) != 2 {
		t.Fatalf("ListTopics = %+v, %v", topics, err)
	}
	if p := topics["orders"].Partitions[0]; p.Leader != 101 || len(p.ISR) != 1 {
		t.Fatalf("orders-0 = %+v, want led by 101", p)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err == nil {
		t.Fatal("a second CreateTopic of orders succeeded")
	}

	// Silence: the broker's heartbeats stop, and the active controller
	// fences it after the session timeout; its partition loses its leader.
	b.Lifecycle().Close()
	waitFor(t, "broker 101 fenced in the committed metadata", func() bool {
		r := ts.byID[1].image().Cluster().Broker(101)
		return r != nil && r.Fenced
	})
	waitFor(t, "orders-0 without a leader", func() bool {
		tp := ts.byID[101].image().Topics().TopicByName("orders")
		return tp != nil && !tp.Partition(0).HasLeader()
	})
}

// A controller answers DescribeCluster for --bootstrap-controller
// clients: the voters at their listeners, the quorum's leader as the
// active controller; asked for brokers, it says it is a controller.
func TestControllersDescribeThemselves(t *testing.T) {
	ts := startServers(t)
	waitFor(t, "metadata.version on controller 1", func() bool {
		_, ok := ts.byID[1].image().Features().MetadataVersion()
		return ok && ts.byID[1].Raft().Status().LeaderID > 0
	})
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType = 2, 2
	resp := do(t, ts.byID[1].Addr(), req).(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != 0 || len(resp.Brokers) != 3 || resp.ControllerID != ts.byID[1].Raft().Status().LeaderID || resp.EndpointType != 2 {
		t.Fatalf("DescribeCluster of the controllers = %+v", resp)
	}
	for _, b := range resp.Brokers {
		if addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); addr != ts.byID[b.NodeID].Addr() {
			t.Errorf("controller %d listed at %s, listens on %s", b.NodeID, addr, ts.byID[b.NodeID].Addr())
		}
	}
	req.EndpointType = 1
	if resp := do(t, ts.byID[1].Addr(), req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.MismatchedEndpointType.Code {
		t.Fatalf("asked for brokers, a controller answered %+v", resp)
	}
}
