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
)

// The test servers run the fast profile's flush never (startClusterWith):
// nothing is fsynced, and a kill (storage's crash) keeps what the logs
// marked flushed, as a process kill keeps what the page cache holds.

// createReplicated creates topic with one partition on replicas brokers
// and waits until each of them hosts it.
func createReplicated(t *testing.T, ts *testServers, cl *kgo.Client, topic string, brokers []int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, int16(len(brokers)), nil, topic); err != nil {
		t.Fatalf("CreateTopic %s: %v (%s)", topic, err, resp.ErrMessage)
	}
	for _, id := range brokers {
		waitFor(t, fmt.Sprintf("broker %d hosting %s-0", id, topic), func() bool {
			r, ok := ts.replica(id, topic, 0)
			return ok && r.Role != partition.RoleNone
		})
	}
}

func acksAllProducer(t *testing.T, seeds []string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func values(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

// A broker killed and restarted keeps its partition log up to (at least)
// the high watermark it had before the kill: under flush never the leader
// marks each append flushed, as the metadata quorum marks its own.
func TestKilledBrokerKeepsItsPartitionRecordsUnderFlushNever(t *testing.T) {
	ts := startServersWith(t, 600*time.Millisecond, func(c *Config) {
		c.Settings.BrokerSessionTimeout = 1500 * time.Millisecond
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
	})
	b := ts.byID[101]
	waitFor(t, "broker 101 RUNNING", func() bool { return b.Lifecycle().State() == BrokerRunning })
	cl := acksAllProducer(t, ts.brokerAddrs(101))
	createReplicated(t, ts, cl, "kept", []int32{101})
	vs := values("kept", 200)
	if acked := produceValues(t, cl, "kept", vs); len(acked) != len(vs) {
		t.Fatalf("%d of %d records acknowledged", len(acked), len(vs))
	}
	before, _ := ts.replica(101, "kept", 0)
	if before.HighWatermark < int64(len(vs)) {
		t.Fatalf("high watermark %d after %d acknowledged records", before.HighWatermark, len(vs))
	}

	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var after ReplicaStats
	waitFor(t, "broker 101 leading kept-0 again", func() bool {
		r, ok := ts.replica(101, "kept", 0)
		after = r
		return ok && r.Role == partition.RoleLeader
	})
	// Nothing produces after the restart, so the log end is what the
	// kill left.
	if after.LogEndOffset < before.HighWatermark {
		t.Fatalf("after the kill the log ends at %d, below the high watermark %d it had", after.LogEndOffset, before.HighWatermark)
	}
	seen := consumeAll(t, ts.brokerAddrs(101), "kept", len(vs))
	for _, v := range vs {
		if seen[v] == 0 {
			t.Fatalf("acknowledged %s lost", v)
		}
	}
}

// Killing every replica of a partition loses no acknowledged record: the
// followers are killed and fenced first, the leader goes on alone with
// acks=all (the ISR is itself) and is killed last, so after the restart it
// is the only replica eligible to lead and its log alone holds the later
// records; consuming from the start then reads every acknowledged one.
func TestKillingEveryReplicaLosesNoAcknowledgedRecord(t *testing.T) {
	ts := replicatedCluster(t)
	brokers := []int32{101, 102, 103}
	seeds := ts.brokerAddrs(brokers...)
	cl := acksAllProducer(t, seeds)
	createReplicated(t, ts, cl, "all", brokers)
	vs := values("replicated", 300)
	acked := produceValues(t, cl, "all", vs)
	if len(acked) != len(vs) {
		t.Fatalf("%d of %d records acknowledged with every broker up", len(acked), len(vs))
	}

	isr := func() []int32 { return ts.byID[1].image().Topics().TopicByName("all").Partition(0).Isr }
	leader := ts.byID[1].image().Topics().TopicByName("all").Partition(0).Leader
	for _, id := range brokers {
		if id != leader {
			if err := ts.byID[id].Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the ISR shrunk to the leader", func() bool { return slices.Equal(isr(), []int32{leader}) })
	alone := values("alone", 100)
	for v := range produceValues(t, cl, "all", alone) {
		acked[v] = true
	}
	if len(acked) != len(vs)+len(alone) {
		t.Fatalf("%d of %d records acknowledged by the leader alone", len(acked)-len(vs), len(alone))
	}
	before, _ := ts.replica(leader, "all", 0)
	if err := ts.byID[leader].Kill(); err != nil {
		t.Fatal(err)
	}

	for _, id := range brokers {
		if err := ts.byID[id].Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var after ReplicaStats
	waitFor(t, fmt.Sprintf("broker %d leading all-0 again", leader), func() bool {
		r, ok := ts.replica(leader, "all", 0)
		after = r
		return ok && r.Role == partition.RoleLeader
	})
	if after.LogEndOffset < before.HighWatermark {
		t.Fatalf("after the kill the leader's log ends at %d, below the high watermark %d it had", after.LogEndOffset, before.HighWatermark)
	}
	seen := consumeAll(t, seeds, "all", len(acked))
	for v := range acked {
		if seen[v] == 0 {
			t.Errorf("acknowledged %s lost", v)
		}
	}
}
