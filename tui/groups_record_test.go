package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// recordedGroup is the consumer group the groups recording follows.
const recordedGroup = "billing"

// TestRecordGroups records a consumer group on a real fast-profile
// cluster: a franz-go member of group billing reads a topic of 3
// partitions, commits and stays in the group, then 30 more records leave
// it lagging; then the broker coordinating the group (the leader of its
// __consumer_offsets partition) is killed, and the group follows that
// partition's leadership to another broker.
// KRAFTLAB_TUI_RECORD=1 go test -run TestRecordGroups ./tui
func TestRecordGroups(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, "testdata/groups*.json", "the real engine, 3 controllers and 3 brokers, profile fast, a franz-go member of group billing")
	pg := rec.pg
	rec.until("the brokers unfenced", 30*time.Second, func(v *view.View) bool { return unfencedBrokers(v) == 3 })
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	rec.until("the topic on every broker", 30*time.Second, func(v *view.View) bool {
		tp, ok := v.Topic("orders")
		return ok && len(tp.OnBrokers) == 3
	})
	var seeds []string
	for _, n := range rec.last.Nodes {
		if n.Kind == view.KindBroker {
			seeds = append(seeds, n.Listener)
		}
	}
	produceN(t, seeds, "orders", 60)

	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(recordedGroup), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("billing-1"),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.HeartbeatInterval(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	read := 0
	deadline := time.Now().Add(30 * time.Second)
	for read < 60 {
		if time.Now().After(deadline) {
			t.Fatalf("the member read %d of 60 records", read)
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		read += cl.PollFetches(pctx).NumRecords()
		cancel()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	rec.until("billing Stable with its commits, no lag", 30*time.Second, func(v *view.View) bool {
		g, ok := v.Group(recordedGroup)
		lag, known := g.TotalLag()
		return ok && g.State == view.GroupStable && len(g.Offsets) == 3 && known && lag == 0
	})
	rec.cut()
	produceN(t, seeds, "orders", 30)
	rec.until("billing 30 behind", 30*time.Second, func(v *view.View) bool {
		g, ok := v.Group(recordedGroup)
		lag, known := g.TotalLag()
		return ok && known && lag == 30
	})
	rec.frames(time.Second)
	steady := rec.cut()
	g, _ := rec.last.Group(recordedGroup)
	coordinator := g.Coordinator
	steady.Select = coordinator
	rec.save("groups", steady)

	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(coordinator)}); err != nil {
		t.Fatal(err)
	}
	rec.until("billing coordinated by another broker, Stable again", 60*time.Second, func(v *view.View) bool {
		g, ok := v.Group(recordedGroup)
		return ok && g.Coordinator != coordinator && g.State == view.GroupStable
	})
	rec.frames(time.Second)
	moved := rec.cut()
	moved.Select = coordinator
	rec.save("groups-moved", moved)
}

// produceN writes n records to topic, round the partitions, and waits for
// them all.
func produceN(t *testing.T, seeds []string, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "order %d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
}
