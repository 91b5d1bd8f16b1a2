package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
	"github.com/kraftlab/kraftlab/internal/zookeeper/zktest"
	"github.com/kraftlab/kraftlab/metadata/zkcontroller"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// zkCluster is ZooKeeper-era brokers on a real ZooKeeper.
type zkCluster struct {
	rt    zookeeper.Runtime
	zk    *zookeeper.Server
	group *Group
}

// zkSessionTimeout is short, so that a killed broker's session expires
// within the tests' patience.
const zkSessionTimeout = 2 * time.Second

func startZkCluster(t *testing.T, brokers ...int32) *zkCluster {
	t.Helper()
	return startZkClusterWith(t, zkSessionTimeout, brokers...)
}

// startZkClusterWith starts brokers whose ZooKeeper sessions time out
// after session.
func startZkClusterWith(t *testing.T, session time.Duration, brokers ...int32) *zkCluster {
	t.Helper()
	rt, zs := zktest.Start(t)
	c := &zkCluster{rt: rt, zk: zs, group: NewGroup()}
	// Before ZooKeeper stops (cleanups run last first).
	t.Cleanup(func() {
		if err := c.group.KillAll(); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	secret, err := LoadSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range brokers {
		rc := raft.DefaultConfig()
		rc.NodeID, rc.ClusterID, rc.RequestTimeout = id, testClusterID, 2*time.Second
		cfg := Config{Kind: Broker,
			ZooKeeper: &ZooKeeperConfig{Addr: zs.Addr(), SessionTimeout: session},
			Raft:      quorum.Config{Raft: rc, Dir: NodeDir(dir, id), Flush: storage.FlushNever, Secret: secret, Counters: wire.NewCounters()}}
		cfg.Settings.ReplicaLagTimeMax = 2 * time.Second
		s, err := c.group.Add(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.group.Start(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// controller waits until one running broker is the active controller and
// every running broker's metadata names it, and returns it.
func (c *zkCluster) controller(t *testing.T, not int32) int32 {
	t.Helper()
	var active int32 = -1
	poll.Until(t, 30*time.Second, "a controller every broker knows", func() bool {
		active = -1
		for _, s := range c.group.Servers() {
			if !s.Running() {
				continue
			}
			if ctl := s.ZkBrokerServer().Controller(); ctl != nil && s.ID() != not {
				// Active from its election; done with its failover
				// once it has read the cluster and queued its pushes.
				if st := ctl.Status(); st.Active && st.LastFailover.Epoch == st.Epoch {
					active = s.ID()
				}
			}
		}
		if active < 0 {
			return false
		}
		for _, s := range c.group.Servers() {
			if s.Running() && s.ZkBrokerServer().ControllerID() != active {
				return false
			}
		}
		return true
	})
	return active
}

func (c *zkCluster) seeds() []string {
	var out []string
	for _, s := range c.group.Servers() {
		if s.Running() {
			out = append(out, s.Addr())
		}
	}
	return out
}

// A ZooKeeper-era cluster serves a real client end to end: one broker
// wins /controller, CreateTopics goes to it and its partitions get
// leaders by LeaderAndIsr; records produced with acks=all come back; and
// when the controller broker dies, its session expires, another broker
// wins /controller, and the partitions it led get new leaders.
func TestZkClusterServesAndFailsOver(t *testing.T) {
	c := startZkCluster(t, 1, 2, 3)
	first := c.controller(t, -1)

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds()...), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("t"),
		kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	created, err := adm.CreateTopic(ctx, 3, 3, nil, "t")
	if err != nil || created.Err != nil {
		t.Fatalf("create topic: %v %v", err, created.Err)
	}
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	got := 0
	for got < 10 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 10: %v", got, err)
		}
		got += fs.NumRecords()
	}

	// ZooKeeper's own CLI reads the registration in Kafka's format.
	out, err := c.rt.CLI(ctx, c.zk.Addr(), "get", "/brokers/ids/1")
	if err != nil || !strings.Contains(out, `"endpoints":["PLAINTEXT://127.0.0.1:`) || !strings.Contains(out, `"version":5`) {
		t.Fatalf("zkCli get /brokers/ids/1: %q, %v", out, err)
	}

	if err := c.group.Server(first).Kill(); err != nil {
		t.Fatal(err)
	}
	second := c.controller(t, first)
	// The controller is active as soon as it read the cluster, and
	// records its failover once it pushed and elected after that.
	var f zkcontroller.Failover
	poll.Until(t, 30*time.Second, "the new controller's failover to be recorded", func() bool {
		f = c.group.Server(second).ZkBrokerServer().Controller().Status().LastFailover
		return f.Epoch != 0
	})
	t.Logf("controller %d died; %d took over at epoch %d: read %d znodes (%d partitions) in %v, managing after %v",
		first, second, f.Epoch, f.Reads, f.Partitions, f.Read, f.Total)
	if f.Partitions != 3 || f.Epoch != 2 {
		t.Errorf("the failover read %d partitions at epoch %d, want 3 at epoch 2", f.Partitions, f.Epoch)
	}
	poll.Until(t, 30*time.Second, "no partition led by the dead broker", func() bool {
		img := c.group.Server(second).servedImage()
		tp := img.Topics().TopicByName("t")
		if tp == nil {
			return false
		}
		for _, p := range tp.PartitionIDs() {
			if tp.Partition(p).Leader == first || tp.Partition(p).Leader < 0 {
				return false
			}
		}
		return true
	})
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce after failover %d: %v", i, err)
		}
	}
}
