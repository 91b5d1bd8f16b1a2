package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerGroupCluster is groupCluster with consumer groups' heartbeats
// every 200 ms and sessions of 5 s.
func consumerGroupCluster(t *testing.T) *testServers {
	t.Helper()
	return groupClusterWith(t, func(c *Config) {
		c.Settings.GroupConsumerHeartbeatInterval = 200 * time.Millisecond
		c.Settings.GroupConsumerSessionTimeout = 5 * time.Second
	})
}

// nextGenConsumer is a kgo consumer of topic in group g that speaks the
// consumer group protocol (KIP-848) and commits by hand.
func nextGenConsumer(t *testing.T, seeds []string, g, topic string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(g), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.MetadataMinAge(50*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// describeConsumerGroup is ConsumerGroupDescribe of g at its
// coordinator, nil while there is none or it answers an error.
func describeConsumerGroup(t *testing.T, ts *testServers, seeds []string, g string) *kmsg.ConsumerGroupDescribeResponseGroup {
	t.Helper()
	coord := coordinatorOf(t, seeds[0], g)
	if coord < 0 || !slices.Contains(seeds, ts.byID[coord].Addr()) {
		return nil // none, or a broker the seeds' metadata does not know gone yet
	}
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{g}
	resp, ok := do(t, ts.byID[coord].Addr(), req).(*kmsg.ConsumerGroupDescribeResponse)
	if !ok || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		return nil
	}
	return &resp.Groups[0]
}

// kgo's KIP-848 consumers over real sockets: two share a topic, each
// record read once; ConsumerGroupDescribe shows them Stable with the
// partitions split; when the coordinator's broker is killed, the new
// coordinator loads the group with the members at their epochs, and
// consumption goes on, still each record once.
func TestConsumerGroupProtocolSharesAndSurvivesTheCoordinatorsKill(t *testing.T) {
	ts := consumerGroupCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(prod).CreateTopic(ctx, 4, 3, nil, "orders"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	first := groupValues("first", 100)
	if acked := produceValues(t, prod, "orders", first); len(acked) != len(first) {
		t.Fatalf("%d of %d acknowledged", len(acked), len(first))
	}
	a := nextGenConsumer(t, seeds, "next", "orders")
	defer a.Close()
	b := nextGenConsumer(t, seeds, "next", "orders")
	defer b.Close()
	gotA, gotB := map[string]int{}, map[string]int{}
	var epochs map[string]int32
	waitFor(t, "a Stable consumer group of two members sharing the partitions", func() bool {
		pollInto(t, a, gotA)
		pollInto(t, b, gotB)
		d := describeConsumerGroup(t, ts, seeds, "next")
		if d == nil || d.State != "Stable" || len(d.Members) != 2 {
			return false
		}
		epochs = map[string]int32{}
		for _, m := range d.Members {
			if len(m.Assignment.TopicPartitions) != 1 || len(m.Assignment.TopicPartitions[0].Partitions) != 2 || m.Assignment.TopicPartitions[0].Topic != "orders" {
				return false
			}
			epochs[m.MemberID] = m.MemberEpoch
		}
		return true
	})
	waitFor(t, "the first records read", func() bool {
		pollInto(t, a, gotA)
		pollInto(t, b, gotB)
		n := 0
		for _, v := range first {
			if gotA[v]+gotB[v] > 0 {
				n++
			}
		}
		return n == len(first)
	})
	for _, v := range first {
		if gotA[v]+gotB[v] != 1 {
			t.Fatalf("%s read %d times by A, %d by B", v, gotA[v], gotB[v])
		}
	}

	coord := coordinatorOf(t, seeds[0], "next")
	if err := ts.byID[coord].Kill(); err != nil {
		t.Fatal(err)
	}
	var alive []string
	for _, id := range []int32{101, 102, 103} {
		if id != coord {
			alive = append(alive, ts.byID[id].Addr())
		}
	}
	waitFor(t, "the new coordinator serving the group with its members at their epochs", func() bool {
		d := describeConsumerGroup(t, ts, alive, "next")
		if d == nil || len(d.Members) != 2 {
			return false
		}
		for _, m := range d.Members {
			if e, ok := epochs[m.MemberID]; !ok || e != m.MemberEpoch {
				t.Fatalf("member %s at epoch %d after the kill; was %v", m.MemberID, m.MemberEpoch, epochs)
			}
		}
		return true
	})
	prod2, err := kgo.NewClient(kgo.SeedBrokers(alive...), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod2.Close()
	after := groupValues("after", 100)
	if acked := produceValues(t, prod2, "orders", after); len(acked) != len(after) {
		t.Fatalf("%d of %d acknowledged after the kill", len(acked), len(after))
	}
	clear(gotA)
	clear(gotB)
	waitFor(t, "the records after the kill", func() bool {
		pollInto(t, a, gotA)
		pollInto(t, b, gotB)
		for _, v := range after {
			if gotA[v]+gotB[v] == 0 {
				return false
			}
		}
		return true
	})
	for _, v := range after {
		if gotA[v]+gotB[v] != 1 {
			t.Fatalf("%s read %d times by A, %d by B", v, gotA[v], gotB[v])
		}
	}
	for v := range gotA {
		if slices.Contains(first, v) {
			t.Fatalf("A read %s again after the kill", v)
		}
	}
	for v := range gotB {
		if slices.Contains(first, v) {
			t.Fatalf("B read %s again after the kill", v)
		}
	}
}
