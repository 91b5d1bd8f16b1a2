package tui

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// replicaBroker is the broker the replication recording kills and starts
// again: its follower replicas leave the ISRs and come back.
const replicaBroker = 103

// TestRecordReplication records the data plane of a real fast-profile
// cluster: a topic of replication factor 3 that a Kafka client
// (franz-go, acks=all) writes to the whole time, every replica caught up;
// then broker 103 killed, fenced and dropped from every ISR while the
// others go on; then 103 started again, its fetchers catching up until it
// rejoins every ISR. KRAFTLAB_TUI_RECORD=1 go test -run TestRecordReplication ./tui
func TestRecordReplication(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, "testdata/replication*.json", "the real engine, 3 controllers and 3 brokers, profile fast, a franz-go producer (acks=all)")
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
	stop := produce(t, seeds, "orders")
	defer stop()

	rec.until("records on every replica", 30*time.Second, func(v *view.View) bool { return allCaughtUp(v, "orders", 100) })
	rec.cut()
	rec.frames(3 * time.Second)
	steady := rec.cut()
	steady.Select = replicaBroker
	rec.save("replication", steady)

	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(replicaBroker)}); err != nil {
		t.Fatal(err)
	}
	rec.until("broker 103 out of every ISR", 30*time.Second, func(v *view.View) bool { return !inAnyIsr(v, "orders", replicaBroker) })
	rec.frames(2 * time.Second)
	down := rec.cut()
	down.Select = replicaBroker
	rec.save("replica-down", down)

	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(replicaBroker)}); err != nil {
		t.Fatal(err)
	}
	rec.until("broker 103 back in every ISR", 60*time.Second, func(v *view.View) bool { return inEveryIsr(v, "orders", replicaBroker) })
	rec.frames(2 * time.Second)
	back := rec.cut()
	back.Select = replicaBroker
	rec.save("replica-rejoin", back)

	// Slow the link between 103 and the leader of a partition whose
	// preferred replica is 103: the thread that fetches from that leader
	// answers late and its partitions fall behind, while 103's thread for
	// the other leader keeps up; acks=all holds the high watermark back.
	slowFrom, tp := preferredElsewhere(rec.last, "orders", replicaBroker)
	if slowFrom < 0 {
		t.Fatalf("no partition of orders prefers 103 and is led elsewhere: %+v", rec.last.Topics)
	}
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActLink, Node: condition.NodeID(replicaBroker), Peer: condition.NodeID(slowFrom), DelayMs: 400}); err != nil {
		t.Fatal(err)
	}
	rec.until("103 behind on "+tp.String(), 30*time.Second, func(v *view.View) bool { return behind(v, "orders", replicaBroker) > 5 })
	rec.frames(2 * time.Second)
	slow := rec.cut()
	slow.Select = replicaBroker
	rec.save("replica-slow", slow)

	// Kill that leader: the controller elects the first live replica of
	// the ISR in replica order, 103, whose log is the shorter; the other
	// follower's log ends past it, in the old epoch, so it truncates to
	// the new leader's log end (a DivergingEpoch) before it fetches again.
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(slowFrom)}); err != nil {
		t.Fatal(err)
	}
	rec.until("a follower of "+tp.String()+" truncated", 30*time.Second, func(v *view.View) bool { return truncations(v, tp) > 0 })
	rec.frames(2 * time.Second)
	trunc := rec.cut()
	trunc.Select = replicaBroker
	rec.save("replica-truncate", trunc)
}

// preferredElsewhere finds a partition of topic whose first replica is id
// but which another broker leads, and returns that leader.
func preferredElsewhere(v view.View, topic string, id int32) (int32, view.TopicPartition) {
	t, ok := v.Topic(topic)
	if !ok {
		return -1, view.TopicPartition{}
	}
	for _, p := range t.Partitions {
		if len(p.Replicas) > 0 && p.Replicas[0] == id && p.Leader != id && p.Leader != view.NoLeader {
			return p.Leader, view.TopicPartition{Topic: topic, Partition: p.Partition}
		}
	}
	return -1, view.TopicPartition{}
}

// truncations counts the truncations of partition tp in every broker's
// fetchers.
func truncations(v *view.View, tp view.TopicPartition) int64 {
	var n int64
	for _, node := range v.Nodes {
		if node.Broker == nil {
			continue
		}
		for _, t := range node.Broker.Fetchers {
			for _, p := range t.Partitions {
				if p.Topic == tp.Topic && p.Partition == tp.Partition {
					n += p.Truncations
				}
			}
		}
	}
	return n
}

// behind is how far broker id's replicas of topic are behind their
// leaders' log ends, at most.
func behind(v *view.View, topic string, id int32) int64 {
	tp, ok := v.Topic(topic)
	if !ok {
		return 0
	}
	most := int64(0)
	for _, p := range tp.Partitions {
		lead, mine := int64(-1), int64(-1)
		for _, r := range p.ReplicaStates {
			if r.Broker == p.Leader && r.Hosted {
				lead = r.LogEndOffset
			}
			if r.Broker == id && r.Hosted {
				mine = r.LogEndOffset
			}
		}
		if lead >= 0 && mine >= 0 {
			most = max(most, lead-mine)
		}
	}
	return most
}

// produce writes records to topic with acks=all, about a hundred a second
// spread over its three partitions, until the returned func is called.
func produce(t *testing.T, seeds []string, topic string) (stop func()) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: fmt.Appendf(nil, "order %d", i)}, func(_ *kgo.Record, err error) {
				if err != nil && ctx.Err() == nil {
					t.Logf("produce: %v", err)
				}
			})
		}
	})
	return func() {
		cancel()
		wg.Wait()
		cl.Close()
	}
}

// allCaughtUp says every partition of topic has at least n records below
// its high watermark and every replica holds them all.
func allCaughtUp(v *view.View, topic string, n int64) bool {
	tp, ok := v.Topic(topic)
	if !ok {
		return false
	}
	for _, p := range tp.Partitions {
		if p.HighWatermark < n || len(p.Isr) != len(p.Replicas) {
			return false
		}
		for _, r := range p.ReplicaStates {
			if !r.Hosted || r.LogEndOffset < n {
				return false
			}
		}
	}
	return true
}

func inAnyIsr(v *view.View, topic string, id int32) bool {
	tp, ok := v.Topic(topic)
	if !ok {
		return false
	}
	for _, p := range tp.Partitions {
		if slices.Contains(p.Isr, id) {
			return true
		}
	}
	return false
}

func inEveryIsr(v *view.View, topic string, id int32) bool {
	tp, ok := v.Topic(topic)
	if !ok {
		return false
	}
	for _, p := range tp.Partitions {
		if !slices.Contains(p.Isr, id) {
			return false
		}
	}
	return true
}
