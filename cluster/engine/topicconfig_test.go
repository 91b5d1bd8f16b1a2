package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/storage"
)

// produceTo sends one batch with acks straight to broker addr, as a
// producer would to the partition's leader, and returns the partition's
// error code.
func produceTo(t *testing.T, addr, topic string, acks int16) int16 {
	t.Helper()
	// Produce v9 names its topic (v13 would need the topic id); kgo sends
	// its own acks setting, whatever the request says.
	ack := kgo.AllISRAcks()
	if acks == 1 {
		ack = kgo.LeaderAck()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V3_6_0()), kgo.RequiredAcks(ack), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: time.Now().UnixMilli()}, []storage.Record{{Value: []byte("v")}})
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("produce acks=%d to %s: %v", acks, addr, err)
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

// A topic created with min.insync.replicas=3 over three brokers, through
// the real engine: acks=all is accepted while the three replicas are in
// sync, refused with NOT_ENOUGH_REPLICAS once a follower's broker is
// killed and leaves the ISR, and acks=1 still goes through. The brokers
// run num.replica.fetchers=2 from --set: the topic's two partitions,
// whose hashes differ by one, replicate on both fetcher threads.
func TestRealEngineTopicConfigsAtCreation(t *testing.T) {
	cfg, err := cluster.NewConfig(1, 3, cluster.ProfileFast, []string{"num.replica.fetchers=2"}, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b)
	}
	res := do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "strict", Partitions: 2, ReplicationFactor: 3,
		Configs: map[string]string{"min.insync.replicas": "3"}})
	if !strings.Contains(res.Message, "configs min.insync.replicas=3") {
		t.Errorf("create message %q does not name the config", res.Message)
	}
	waitCond(t, p, "isr strict-1 size >= 3")
	v := waitCond(t, p, "isr strict-0 size >= 3")
	ids := map[int]bool{}
	poll.Until(t, 15*time.Second, "both fetcher threads replicating strict", func() bool {
		v = p.View()
		for idx := range int32(2) {
			part, _ := v.Partition("strict", idx)
			want := fmt.Sprintf("ReplicaFetcherThread-%d-%d", fetcher.FetcherID(fetcher.TopicPartition{Topic: "strict", Partition: idx}, 2), part.Leader)
			for _, nv := range v.Nodes {
				if nv.Broker == nil {
					continue
				}
				for _, th := range nv.Broker.Fetchers {
					for _, fp := range th.Partitions {
						if th.Name == want && fp.Topic == "strict" && fp.Partition == idx {
							ids[th.FetcherID] = true
						}
					}
				}
			}
		}
		return ids[0] && ids[1]
	}, func() string { return fmt.Sprintf("fetcher ids seen: %v", ids) })
	part, _ := v.Partition("strict", 0)
	leader := part.Leader
	addr := map[int32]string{}
	for _, n := range v.Nodes {
		addr[n.ID] = n.Listener
	}
	var last int16
	poll.Until(t, 15*time.Second, "an acks=all produce accepted with three in sync", func() bool {
		last = produceTo(t, addr[leader], "strict", -1)
		return last == 0
	}, func() string { return fmt.Sprintf("last error %d (leader %d at %s)", last, leader, addr[leader]) })
	follower := part.Replicas[0]
	if follower == leader {
		follower = part.Replicas[1]
	}
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref(fmt.Sprint(follower))})
	poll.Until(t, 15*time.Second, "the killed follower out of the ISR", func() bool {
		v := p.View()
		part, ok := v.Partition("strict", 0)
		return ok && len(part.Isr) == 2 && !slices.Contains(part.Isr, follower)
	})
	// A produce appended just before the leader learnt of the shrink
	// waits: under min ISR the high watermark stands still (Kafka's
	// Partition.maybeIncrementLeaderHW), so it times out; the next ones
	// are refused with NOT_ENOUGH_REPLICAS.
	poll.Until(t, 15*time.Second, "NOT_ENOUGH_REPLICAS for acks=all", func() bool {
		switch code := produceTo(t, addr[leader], "strict", -1); code {
		case kerr.NotEnoughReplicas.Code:
			return true
		case kerr.RequestTimedOut.Code, kerr.NotEnoughReplicasAfterAppend.Code:
			return false
		default:
			t.Fatalf("acks=all with two of three in sync: error %d", code)
			return false
		}
	})
	if code := produceTo(t, addr[leader], "strict", 1); code != 0 {
		t.Fatalf("acks=1 with two of three in sync: error %d", code)
	}
}
