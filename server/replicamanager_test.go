package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// replicatedCluster runs three controllers and brokers 101..103 with
// short sessions, so a killed broker is fenced quickly.
func replicatedCluster(t *testing.T) *testServers {
	t.Helper()
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101, 102, 103}, func(c *Config) {
		c.Settings.BrokerSessionTimeout = 1500 * time.Millisecond
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
		c.Settings.ReplicaFetchWaitMax = 100 * time.Millisecond
	})
	for _, id := range []int32{101, 102, 103} {
		b := ts.byID[id]
		waitFor(t, fmt.Sprintf("broker %d RUNNING", id), func() bool { return b.Lifecycle().State() == BrokerRunning })
	}
	return ts
}

func (ts *testServers) brokerAddrs(ids ...int32) []string {
	var out []string
	for _, id := range ids {
		out = append(out, ts.byID[id].Addr())
	}
	return out
}

// replica is broker id's replica of topic's partition idx, as its
// ReplicaManager reports it.
func (ts *testServers) replica(id int32, topic string, idx int32) (ReplicaStats, bool) {
	rm := ts.byID[id].ReplicaManager()
	if rm == nil {
		return ReplicaStats{}, false
	}
	for _, r := range rm.Stats().Partitions {
		if r.Topic == topic && r.Partition == idx {
			return r, true
		}
	}
	return ReplicaStats{}, false
}

// produceValues sends values with acks=all and returns those the brokers
// acknowledged.
func produceValues(t *testing.T, cl *kgo.Client, topic string, values []string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(v), Value: []byte(v)}
	}
	acked := map[string]bool{}
	for _, r := range cl.ProduceSync(ctx, recs...) {
		if r.Err == nil {
			acked[string(r.Record.Value)] = true
		}
	}
	return acked
}

// consumeAll reads topic from the start until want records came, and
// returns how many times each value was read.
func consumeAll(t *testing.T, seeds []string, topic string, want int) map[string]int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seen := map[string]int{}
	n := 0
	for n < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before the deadline", n, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			n++
		})
	}
	return seen
}

// Real Kafka clients produce with acks=all to a topic of three partitions
// replicated on three brokers and consume every record; the followers'
// fetchers bring every replica to its leader's log end. A partition
// leader's broker is killed: the controller fences it and moves the
// leadership, the producer goes on, and reading everything again finds
// every acknowledged record exactly once.
func TestProduceReplicateConsumeAndFailOver(t *testing.T) {
	ts := replicatedCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	adm, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(adm).CreateTopic(ctx, 3, 3, nil, "orders"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	for _, id := range []int32{101, 102, 103} {
		for p := range int32(3) {
			waitFor(t, fmt.Sprintf("broker %d hosting orders-%d", id, p), func() bool {
				r, ok := ts.replica(id, "orders", p)
				return ok && r.Role != partition.RoleNone
			})
		}
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var values []string
	for i := range 1000 {
		values = append(values, fmt.Sprintf("first-%04d", i))
	}
	acked := produceValues(t, prod, "orders", values)
	if len(acked) != len(values) {
		t.Fatalf("%d of %d records acknowledged with every broker up", len(acked), len(values))
	}
	seen := consumeAll(t, seeds, "orders", len(values))
	for _, v := range values {
		if seen[v] != 1 {
			t.Fatalf("%s read %d times", v, seen[v])
		}
	}

	// Every follower holds its leader's log.
	leaders := map[int32]int32{}
	for p := range int32(3) {
		waitFor(t, fmt.Sprintf("orders-%d replicated to every follower", p), func() bool {
			var leo []int64
			for _, id := range []int32{101, 102, 103} {
				r, ok := ts.replica(id, "orders", p)
				if !ok {
					return false
				}
				if r.Role == partition.RoleLeader {
					leaders[p] = id
				}
				leo = append(leo, r.LogEndOffset)
			}
			return leo[0] > 0 && leo[0] == leo[1] && leo[1] == leo[2]
		})
	}

	victim := leaders[0]
	if err := ts.byID[victim].Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "orders-0 led by a live broker", func() bool {
		tp := ts.byID[1].image().Topics().TopicByName("orders")
		l := tp.Partition(0).Leader
		return l >= 0 && l != victim
	})
	var more []string
	for i := range 300 {
		more = append(more, fmt.Sprintf("second-%04d", i))
	}
	for v := range produceValues(t, prod, "orders", more) {
		acked[v] = true
	}
	if len(acked) < len(values)+len(more) {
		t.Errorf("%d of %d records acknowledged after the failover", len(acked), len(values)+len(more))
	}
	var live []string
	for _, id := range []int32{101, 102, 103} {
		if id != victim {
			live = append(live, ts.byID[id].Addr())
		}
	}
	seen = consumeAll(t, live, "orders", len(acked))
	for v := range acked {
		if seen[v] != 1 {
			t.Errorf("acknowledged %s read %d times", v, seen[v])
		}
	}
	if extra := len(seen) - len(acked); extra != 0 {
		t.Errorf("%d values read that were never acknowledged", extra)
	}
}

// A follower that stops fetching (its broker killed, but not fenced: the
// session is long) leaves the ISR by the leader's AlterPartition after
// replica.lag.time.max.ms, and an acks=all produce waiting for it then
// completes; with min.insync.replicas=3 the leader refuses acks=all
// (NOT_ENOUGH_REPLICAS). Restarted, the follower catches up and the
// leader asks the controller to take it back.
func TestLeaderShrinksAndExpandsTheISR(t *testing.T) {
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101, 102, 103}, func(c *Config) {
		// Long enough for the leader to shrink the ISR (replica.lag.time.max.ms)
		// before the controller fences the killed follower; short enough
		// for its restart, refused registration while its previous
		// session lasts, to rejoin within the wait.
		c.Settings.BrokerSessionTimeout = 5 * time.Second
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
		c.Settings.ReplicaFetchWaitMax = 100 * time.Millisecond
		c.Settings.ReplicaLagTimeMax = time.Second
	})
	for _, id := range []int32{101, 102, 103} {
		b := ts.byID[id]
		waitFor(t, fmt.Sprintf("broker %d RUNNING", id), func() bool { return b.Lifecycle().State() == BrokerRunning })
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.brokerAddrs(101, 102, 103)...), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, c := range []struct {
		name string
		cfg  map[string]*string
	}{{"isr", nil}, {"strict", map[string]*string{"min.insync.replicas": kmsg.StringPtr("3")}}} {
		if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, c.cfg, c.name); err != nil {
			t.Fatalf("CreateTopic %s: %v (%s)", c.name, err, resp.ErrMessage)
		}
	}
	isr := func() []int32 {
		tp := ts.byID[1].image().Topics().TopicByName("isr")
		if tp == nil {
			return nil
		}
		return tp.Partition(0).Isr
	}
	// The follower killed leads neither partition.
	leads := map[int32]bool{}
	for _, name := range []string{"isr", "strict"} {
		waitFor(t, "a leader hosting "+name+"-0", func() bool {
			tp := ts.byID[1].image().Topics().TopicByName(name)
			if tp == nil {
				return false
			}
			l := tp.Partition(0).Leader
			r, ok := ts.replica(l, name, 0)
			leads[l] = true
			return ok && r.Role == partition.RoleLeader
		})
	}
	var follower int32
	for _, id := range []int32{101, 102, 103} {
		if !leads[id] {
			follower = id
		}
	}
	if err := ts.byID[follower].Kill(); err != nil {
		t.Fatal(err)
	}
	// As in Kafka, a follower that held the leader's log end stays in
	// sync while nothing is produced; the acks=all produce waits until the
	// leader has it removed, then is acknowledged.
	if acked := produceValues(t, cl, "isr", []string{"a", "b", "c"}); len(acked) != 3 {
		t.Fatalf("%d of 3 acknowledged with a shrunk ISR", len(acked))
	}
	waitFor(t, "the killed follower out of the ISR", func() bool { return len(isr()) == 2 && !slices.Contains(isr(), follower) })
	// "strict" wants all three replicas in sync for acks=all.
	strictLeader := ts.byID[1].image().Topics().TopicByName("strict").Partition(0).Leader
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 12, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "strict"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch("refused")
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	// The first may be appended while the ISR still holds three and then
	// wait: NOT_ENOUGH_REPLICAS_AFTER_APPEND (20) if the high watermark
	// reached it before the shrink, else REQUEST_TIMED_OUT (7), since the
	// high watermark stands still under min.insync.replicas (Kafka's
	// checkEnoughReplicasReachOffset waits for it either way).
	waitFor(t, "NOT_ENOUGH_REPLICAS from strict-0's leader", func() bool {
		resp := do(t, ts.byID[strictLeader].Addr(), req).(*kmsg.ProduceResponse)
		switch code := resp.Topics[0].Partitions[0].ErrorCode; code {
		case 19:
			return true
		case 20, 7:
			return false
		default:
			t.Fatalf("acks=all to strict-0 with a follower gone: error %d", code)
			return false
		}
	})
	if err := ts.byID[follower].Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted follower back in the ISR", func() bool { return len(isr()) == 3 })
	r, _ := ts.replica(follower, "isr", 0)
	if r.LogEndOffset < 3 {
		t.Fatalf("back in the ISR holding %d records, want 3", r.LogEndOffset)
	}
}
