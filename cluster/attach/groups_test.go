package attach

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// attach reads a playground's consumer groups over the wire as the
// playground's own view has them: the coordinator and its partition of
// __consumer_offsets, the member with its partitions, the committed
// offsets and the lag; the coordinator's shard; and, once the
// coordinator is killed, the group at the partition's new leader.
func TestAttachReadsGroups(t *testing.T) {
	ctx := context.Background()
	cfg, err := cluster.NewConfig(1, 3, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	own := waitOwn(t, pg, "3 unfenced brokers", func(v *view.View) bool { return unfencedBrokers(v) == 3 })
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 2, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	waitOwn(t, pg, "orders on every broker", func(v *view.View) bool { tp, ok := v.Topic("orders"); return ok && len(tp.OnBrokers) == 3 })
	var brokers []string
	for _, n := range own.Nodes {
		if n.Kind == view.KindBroker {
			brokers = append(brokers, n.Listener)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pr, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := pr.ProduceSync(cctx, &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	pr.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("billing-1"),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.HeartbeatInterval(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for read := 0; read < 10; {
		if cctx.Err() != nil {
			t.Fatalf("the member read %d of 10 records", read)
		}
		pctx, pcancel := context.WithTimeout(cctx, time.Second)
		read += cl.PollFetches(pctx).NumRecords()
		pcancel()
	}
	if err := cl.CommitUncommittedOffsets(cctx); err != nil {
		t.Fatalf("commit: %v", err)
	}

	c, err := Dial(ctx, Config{Bootstrap: brokers, Interval: time.Hour, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := refreshUntil(t, c, "billing Stable with its commits", func(v *view.View) bool {
		g, ok := v.Group("billing")
		lag, known := g.TotalLag()
		return ok && g.State == view.GroupStable && len(g.Offsets) == 2 && known && lag == 0 && len(g.Members) == 1 && len(g.Members[0].Assigned) == 2
	})
	own = waitOwn(t, pg, "billing", func(v *view.View) bool { g, ok := v.Group("billing"); return ok && g.State == view.GroupStable })
	read, _ := v.Group("billing")
	ownGroup, _ := own.Group("billing")
	if read.Coordinator != ownGroup.Coordinator || read.OffsetsPartition != ownGroup.OffsetsPartition || read.Protocol != ownGroup.Protocol {
		t.Errorf("read coordinator %d (__consumer_offsets-%d, %s); the playground's %d (%d, %s)",
			read.Coordinator, read.OffsetsPartition, read.Protocol, ownGroup.Coordinator, ownGroup.OffsetsPartition, ownGroup.Protocol)
	}
	if read.Generation != -1 || read.Members[0].ClientID != "billing-1" {
		t.Errorf("generation %d (want -1, unknown on the wire), member %+v", read.Generation, read.Members[0])
	}
	for i, o := range read.Offsets {
		if w := ownGroup.Offsets[i]; o.Topic != w.Topic || o.Partition != w.Partition || o.Committed != w.Committed || o.HighWatermark != w.HighWatermark {
			t.Errorf("offset %+v; the playground's %+v", o, w)
		}
	}
	n, _ := v.Node(read.Coordinator)
	if n.Broker == nil || !hasShard(n.Broker.Coordinating, read.OffsetsPartition) {
		t.Errorf("coordinator %d's shards %+v lack __consumer_offsets-%d", read.Coordinator, n.Broker, read.OffsetsPartition)
	}

	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(read.Coordinator)}); err != nil {
		t.Fatal(err)
	}
	// The brokers apply the new leadership one after the other: the
	// group may be read at its new coordinator before the broker that
	// answers Metadata has it lead the partition.
	v = refreshUntil(t, c, "billing at another coordinator, which leads its partition", func(v *view.View) bool {
		g, ok := v.Group("billing")
		p, _ := v.Partition(view.OffsetsTopic, read.OffsetsPartition)
		return ok && g.Coordinator != read.Coordinator && p != nil && p.Leader == g.Coordinator
	})
	moved, _ := v.Group("billing")
	if p, ok := v.Partition(view.OffsetsTopic, read.OffsetsPartition); !ok || p.Leader != moved.Coordinator || moved.OffsetsPartition != read.OffsetsPartition {
		t.Errorf("billing at %d (__consumer_offsets-%d); the partition %+v", moved.Coordinator, moved.OffsetsPartition, p)
	}
	cl.Close()
}

func hasShard(shards []view.CoordinatorShard, partition int32) bool {
	for _, s := range shards {
		if s.Partition == partition {
			return true
		}
	}
	return false
}
