package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// reassignThrottle is the test's replication throttle, in bytes a second:
// with the 1 MB the partition holds, the new replica spends seconds
// throttled after the quota's first ten windows.
const reassignThrottle = 64 << 10

// A partition moves from one broker to another with a throttle, as
// kafka-reassign-partitions --execute --throttle moves it: the throttle
// configs are set, the new replica joins the replicas as adding and
// fetches THROTTLED outside the ISR, and once it is in sync the
// reassignment completes: the replica being removed leaves the replicas
// and deletes its log. --verify then removes the throttle configs.
func TestRealEngineReassignsWithAThrottle(t *testing.T) {
	cfg, err := cluster.NewConfig(1, 4, cluster.ProfileFast, []string{"replica.fetch.max.bytes=16384"}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := openWith(t, cfg)
	for _, b := range []string{"101", "102", "103", "104"} {
		waitCond(t, p, "unfenced "+b)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "mv", Partitions: 1, ReplicationFactor: 3})
	v := waitCond(t, p, "isr mv-0 size == 3")
	part, _ := v.Partition("mv", 0)
	leader := part.Leader
	var adding, removing int32 = -1, -1
	for _, b := range []int32{101, 102, 103, 104} {
		if !slices.Contains(part.Replicas, b) {
			adding = b
		}
	}
	for _, r := range part.Replicas {
		if r != leader {
			removing = r
		}
	}
	target := slices.DeleteFunc(slices.Clone(part.Replicas), func(r int32) bool { return r == removing })
	target = append(target, adding)

	produceBulk(t, listener(v, leader), "mv", 1000)
	waitCond(t, p, "in-sync mv-0")

	res := do(t, p, cluster.Action{Kind: cluster.ActReassign, TopicPartitions: []string{"mv-0"}, Replicas: target, Throttle: reassignThrottle})
	t.Log(res.Message)
	for _, b := range []int32{101, 102, 103, 104} {
		want := ""
		if slices.Contains(part.Replicas, b) || b == adding {
			want = strconv.Itoa(reassignThrottle)
		}
		for _, key := range []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate"} {
			if got := dynamicConfig(t, v, b, "", key); got != want {
				t.Errorf("broker %d's %s %q, want %q", b, key, got, want)
			}
		}
	}
	leaders := make([]string, len(part.Replicas))
	for i, r := range sorted(part.Replicas) {
		leaders[i] = fmt.Sprintf("0:%d", r)
	}
	if got, want := dynamicConfig(t, v, 0, "mv", "leader.replication.throttled.replicas"), strings.Join(leaders, ","); got != want {
		t.Errorf("leader.replication.throttled.replicas %q, want %q", got, want)
	}
	if got, want := dynamicConfig(t, v, 0, "mv", "follower.replication.throttled.replicas"), fmt.Sprintf("0:%d", adding); got != want {
		t.Errorf("follower.replication.throttled.replicas %q, want %q", got, want)
	}

	// While it catches up, the new replica is adding, outside the ISR,
	// and its fetcher THROTTLED.
	var saw string
	poll.Until(t, 20*time.Second, "the adding replica fetching THROTTLED outside the ISR", func() bool {
		v := p.View()
		part, _ := v.Partition("mv", 0)
		fp, ok := fetcherPartition(&v, adding, "mv", 0)
		saw = fmt.Sprintf("%s; fetcher %+v", part.Summary(), fp)
		return ok && fp.Throttled && slices.Equal(part.AddingReplicas, []int32{adding}) && !slices.Contains(part.Isr, adding)
	}, func() string { return "last saw: " + saw })

	v = waitCond(t, p, "reassigned mv-0")
	part, _ = v.Partition("mv", 0)
	if !slices.Equal(part.Replicas, target) || !slices.Equal(sorted(part.Isr), sorted(target)) {
		t.Fatalf("after the reassignment: %s, want replicas and isr %v", part.Summary(), target)
	}
	poll.Until(t, 15*time.Second, "the removed replica's log deleted", func() bool {
		v := p.View()
		part, _ := v.Partition("mv", 0)
		for _, r := range part.ReplicaStates {
			if r.Broker == removing {
				return false
			}
		}
		_, fetching := fetcherPartition(&v, removing, "mv", 0)
		return !fetching
	}, func() string { return describeNodes(p) })

	// kafka-reassign-partitions asks each replica's broker for its log
	// directory (DescribeLogDirs) before it moves anything.
	dirs := describeLogDirs(t, listener(v, adding), adding)
	if lp, ok := dirs.LookupPartition("mv", 0); !ok || lp.Size <= 0 {
		t.Fatalf("DescribeLogDirs of broker %d: mv-0 %+v, %v", adding, lp, ok)
	}

	res = do(t, p, cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignVerify, TopicPartitions: []string{"mv-0"}})
	t.Log(res.Message)
	// The answer came once the controller committed the deletions; a
	// broker describes its configs from its own image, so wait for it.
	poll.Until(t, 10*time.Second, "the throttle configs removed", func() bool {
		for _, b := range []int32{101, 102, 103, 104} {
			if dynamicConfig(t, v, b, "", "follower.replication.throttled.rate") != "" || dynamicConfig(t, v, b, "", "leader.replication.throttled.rate") != "" {
				return false
			}
		}
		return dynamicConfig(t, v, 0, "mv", "follower.replication.throttled.replicas") == "" &&
			dynamicConfig(t, v, 0, "mv", "leader.replication.throttled.replicas") == ""
	})
}

// produceBulk writes n records of 1000 random bytes to topic, in batches
// of 16 KB, acks=all.
func produceBulk(t *testing.T, addr, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := make([]byte, 1000)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = &kgo.Record{Topic: topic, Value: v}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func listener(v view.View, id int32) string {
	for _, n := range v.Nodes {
		if n.ID == id {
			return n.Listener
		}
	}
	return ""
}

// fetcherPartition is broker id's fetcher partition topic-p, if it
// fetches it.
func fetcherPartition(v *view.View, id int32, topic string, p int32) (view.FetcherPartition, bool) {
	for _, n := range v.Nodes {
		if n.ID != id || n.Broker == nil {
			continue
		}
		for _, th := range n.Broker.Fetchers {
			for _, fp := range th.Partitions {
				if fp.Topic == topic && fp.Partition == p {
					return fp, true
				}
			}
		}
	}
	return view.FetcherPartition{}, false
}

// dynamicConfig is key's dynamic value on broker id (topic ""), or on
// topic, as a broker's DescribeConfigs tells it; "" when unset.
func dynamicConfig(t *testing.T, v view.View, id int32, topic, key string) string {
	t.Helper()
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(listener(v, 101), listener(v, 102)))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rcs kadm.ResourceConfigs
	if topic != "" {
		rcs, err = adm.DescribeTopicConfigs(ctx, topic)
	} else {
		rcs, err = adm.DescribeBrokerConfigs(ctx, id)
	}
	if err != nil {
		t.Fatalf("DescribeConfigs: %v", err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("DescribeConfigs of %s: %v", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == key && (c.Source == kmsg.ConfigSourceDynamicBrokerConfig || c.Source == kmsg.ConfigSourceDynamicTopicConfig) {
				return c.MaybeValue()
			}
		}
	}
	return ""
}

func describeLogDirs(t *testing.T, addr string, id int32) kadm.DescribedLogDirs {
	t.Helper()
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dirs, err := adm.DescribeBrokerLogDirs(ctx, id, nil)
	if err != nil {
		t.Fatalf("DescribeLogDirs of broker %d: %v", id, err)
	}
	return dirs
}

func sorted(a []int32) []int32 { return slices.Sorted(slices.Values(a)) }
