package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// The view shows a consumer group as its coordinator holds it: the
// broker leading the group's __consumer_offsets partition, the member
// with the partitions it was assigned, the committed offsets and the lag
// behind each partition's high watermark; when the member leaves, the
// group is Empty and keeps its offsets.
func TestViewShowsConsumerGroups(t *testing.T) {
	p := openReal(t, 1, 3, "")
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 2, ReplicationFactor: 3})
	v := waitCond(t, p, "topic orders on all brokers")
	var seeds []string
	for _, n := range v.Nodes {
		if n.Kind == view.KindBroker {
			seeds = append(seeds, n.Listener)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func(n int) {
		t.Helper()
		pr, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()))
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		for i := range n {
			if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprint(i)), Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	produce(10)

	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("billing-1"),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.HeartbeatInterval(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	read := 0
	poll.Until(t, 20*time.Second, "the member read the 10 records", func() bool {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		defer pcancel()
		fs := cl.PollFetches(pctx)
		read += fs.NumRecords()
		return read >= 10
	})
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}

	var g view.Group
	poll.Until(t, 10*time.Second, "billing Stable with its commits, no lag", func() bool {
		v := p.View()
		gp, ok := v.Group("billing")
		if !ok {
			return false
		}
		g = *gp
		lag, known := g.TotalLag()
		return g.State == view.GroupStable && len(g.Offsets) == 2 && known && lag == 0
	})
	v = p.View()
	offsets, _ := v.Partition(view.OffsetsTopic, g.OffsetsPartition)
	if offsets == nil || g.Coordinator != offsets.Leader {
		t.Fatalf("coordinator %d, offsets partition %d: %+v", g.Coordinator, g.OffsetsPartition, offsets)
	}
	if g.ProtocolType != "consumer" || len(g.Members) != 1 || g.Members[0].ClientID != "billing-1" || len(g.Members[0].Assigned) != 2 {
		t.Fatalf("members: %+v (protocol type %q)", g.Members, g.ProtocolType)
	}
	var committed int64
	for _, o := range g.Offsets {
		committed += o.Committed
	}
	if committed != 10 {
		t.Fatalf("committed offsets add up to %d, want 10: %+v", committed, g.Offsets)
	}
	var shard *view.CoordinatorShard
	for _, n := range v.Nodes {
		if n.ID == g.Coordinator && n.Broker != nil {
			for i := range n.Broker.Coordinating {
				if n.Broker.Coordinating[i].Partition == g.OffsetsPartition {
					shard = &n.Broker.Coordinating[i]
				}
			}
		}
	}
	if shard == nil || shard.Loading || shard.Groups < 1 {
		t.Fatalf("the coordinator's shard of partition %d: %+v", g.OffsetsPartition, shard)
	}

	produce(5)
	poll.Until(t, 10*time.Second, "billing lags by the 5 new records", func() bool {
		v := p.View()
		gp, ok := v.Group("billing")
		lag, known := gp.TotalLag()
		return ok && known && lag == 5
	})

	cl.Close()
	poll.Until(t, 10*time.Second, "billing Empty with its offsets kept", func() bool {
		v := p.View()
		gp, ok := v.Group("billing")
		return ok && gp.State == view.GroupEmpty && len(gp.Members) == 0 && len(gp.Offsets) == 2
	})
}
