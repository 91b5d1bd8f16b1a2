package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// throttleRig is a running cluster with topic "bulk" (one partition, RF 3)
// whose follower has been killed while 2 MB were produced, so it is out of
// the ISR and far behind.
type throttleRig struct {
	ts               *testServers
	adm              *kadm.Client
	leader, follower int32
	end              int64
}

const (
	testThrottleRate  = 50 << 10 // bytes/s
	testThrottleFetch = 16 << 10 // replica.fetch.max.bytes: one fetch's share
)

// newThrottleRig starts the rig. beforeKill runs once the leader and the
// follower are known (a broker's own config goes to that broker, so the
// follower's must be set while it runs), afterProduce once the follower
// is out of the ISR: the leader quota counts what in-sync followers
// fetch too, as Kafka's does, so 2 MB to them would use it up.
func newThrottleRig(t *testing.T, beforeKill, afterProduce func(r *throttleRig)) *throttleRig {
	t.Helper()
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101, 102, 103}, func(c *Config) {
		// The killed follower is fenced a few seconds on: its restart
		// registers, and replicates, only once its previous session ended.
		c.Settings.BrokerSessionTimeout = 3 * time.Second
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
		c.Settings.ReplicaFetchWaitMax = 100 * time.Millisecond
		c.Settings.ReplicaLagTimeMax = time.Second
		c.Settings.ReplicaFetchMaxBytes = testThrottleFetch
	})
	for _, id := range []int32{101, 102, 103} {
		b := ts.byID[id]
		waitFor(t, fmt.Sprintf("broker %d RUNNING", id), func() bool { return b.Lifecycle().State() == BrokerRunning })
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.brokerAddrs(101, 102, 103)...), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.MetadataMinAge(50*time.Millisecond), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(testThrottleFetch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	r := &throttleRig{ts: ts, adm: kadm.NewClient(cl)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if resp, err := r.adm.CreateTopic(ctx, 1, 3, nil, "bulk"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	waitFor(t, "bulk-0 led and replicated", func() bool {
		tp := ts.byID[1].image().Topics().TopicByName("bulk")
		if tp == nil || len(tp.Partition(0).Isr) != 3 {
			return false
		}
		r.leader = tp.Partition(0).Leader
		l, ok := ts.replica(r.leader, "bulk", 0)
		return ok && l.Role == 1
	})
	for _, id := range []int32{101, 102, 103} {
		if id != r.leader {
			r.follower = id
		}
	}
	beforeKill(r)
	if err := ts.byID[r.follower].Kill(); err != nil {
		t.Fatal(err)
	}
	// Random bytes, uncompressed, in batches no bigger than a fetch (a
	// first batch always comes whole): 2 MB on the wire.
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]*kgo.Record, 2000)
	for i := range recs {
		v := make([]byte, 1000)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = &kgo.Record{Topic: "bulk", Value: v}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	waitFor(t, "the killed follower out of the ISR", func() bool {
		return !slices.Contains(ts.byID[1].image().Topics().TopicByName("bulk").Partition(0).Isr, r.follower)
	})
	l, _ := ts.replica(r.leader, "bulk", 0)
	r.end = l.LogEndOffset
	afterProduce(r)
	return r
}

func (r *throttleRig) alter(t *testing.T, broker int32, topic string, key string, value *string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	op := kadm.SetConfig
	if value == nil {
		op = kadm.DeleteConfig
	}
	var resps kadm.AlterConfigsResponses
	var err error
	if topic != "" {
		resps, err = r.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: key, Value: value}}, topic)
	} else {
		resps, err = r.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: key, Value: value}}, broker)
	}
	if err != nil {
		t.Fatalf("alter %s: %v", key, err)
	}
	for _, resp := range resps {
		if resp.Err != nil {
			t.Fatalf("alter %s of %s: %v (%s)", key, resp.Name, resp.Err, resp.ErrMessage)
		}
	}
}

// bulkEnd is broker id's log end offset of bulk-0.
func (r *throttleRig) bulkEnd(id int32) int64 {
	rs, _ := r.ts.replica(id, "bulk", 0)
	return rs.LogEndOffset
}

// holdsNearTheRate restarts the follower and checks, for a few seconds,
// that the side measured replicates at about the rate: the quota lets
// 10 windows' worth (Kafka's 11 one-second windows, all but one counted
// from the start) through, then holds the rest back. Lifting the
// throttle lets the follower catch up and rejoin the ISR.
func (r *throttleRig) holdsNearTheRate(t *testing.T, measured int32, rate func(ReplicaManagerStats) float64, lift func()) {
	t.Helper()
	if err := r.ts.byID[r.follower].Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	waitFor(t, "the follower fetching bulk-0", func() bool { return r.bulkEnd(r.follower) > 0 })
	if testing.Verbose() {
		t.Logf("fetching %v after the restart", time.Since(restarted))
	}
	// A rate is a bound over time: it is sampled at every poll for two
	// seconds, long enough for an unthrottled follower to copy 2 MB many
	// times over.
	start := time.Now()
	var got float64
	waitFor(t, "two seconds of throttled replication", func() bool {
		got = rate(r.ts.byID[measured].ReplicaManager().Stats())
		if got > testThrottleRate*1.3 {
			t.Fatalf("throttled replication at %.0f B/s, bound %d B/s", got, testThrottleRate)
		}
		if testing.Verbose() {
			t.Logf("%v: follower at %d of %d, %.0f B/s", time.Since(start).Round(10*time.Millisecond), r.bulkEnd(r.follower), r.end, got)
		}
		return time.Since(start) >= 2*time.Second
	})
	if got < testThrottleRate*0.5 {
		t.Fatalf("throttled replication at %.0f B/s: the follower hardly fetched (bound %d B/s)", got, testThrottleRate)
	}
	// 2 MB in the log, at most 10 windows of the rate plus a fetch or two
	// replicated: the follower is far behind.
	if end := r.bulkEnd(r.follower); end >= r.end {
		t.Fatalf("follower at %d of %d: not throttled", end, r.end)
	}
	lift()
	lifted := time.Now()
	waitFor(t, "the follower caught up once the throttle is lifted", func() bool { return r.bulkEnd(r.follower) == r.end })
	if testing.Verbose() {
		t.Logf("caught up %v after the throttle was lifted", time.Since(lifted))
	}
	waitFor(t, "the follower back in the ISR", func() bool {
		return slices.Contains(r.ts.byID[1].image().Topics().TopicByName("bulk").Partition(0).Isr, r.follower)
	})
}

// follower.replication.throttled.rate on the follower's broker and
// follower.replication.throttled.replicas naming it, set with kadm's
// AlterConfigs through Kafka's path (IncrementalAlterConfigs forwarded to
// the controller, ConfigRecords, the broker's ReplicaManager), hold a
// lagging follower's fetches near the rate.
func TestFollowerThrottleHoldsALaggingFollowerNearTheRate(t *testing.T) {
	r := newThrottleRig(t, func(r *throttleRig) {
		rate := fmt.Sprint(testThrottleRate)
		r.alter(t, r.follower, "", "follower.replication.throttled.rate", &rate)
		replicas := fmt.Sprintf("0:%d", r.follower)
		r.alter(t, 0, "bulk", "follower.replication.throttled.replicas", &replicas)
	}, func(*throttleRig) {})
	r.holdsNearTheRate(t, r.follower, func(s ReplicaManagerStats) float64 { return s.FollowerThrottledBytesPerSec }, func() {
		r.alter(t, 0, "bulk", "follower.replication.throttled.replicas", nil)
	})
}

// The leader's side: leader.replication.throttled.rate on the leader's
// broker and leader.replication.throttled.replicas "*" leave the
// partition's records out of the lagging follower's fetch answers while
// the leader quota is exceeded.
func TestLeaderThrottleHoldsALaggingFollowerNearTheRate(t *testing.T) {
	r := newThrottleRig(t, func(*throttleRig) {}, func(r *throttleRig) {
		rate := fmt.Sprint(testThrottleRate)
		r.alter(t, r.leader, "", "leader.replication.throttled.rate", &rate)
		all := "*"
		r.alter(t, 0, "bulk", "leader.replication.throttled.replicas", &all)
	})
	r.holdsNearTheRate(t, r.leader, func(s ReplicaManagerStats) float64 { return s.LeaderThrottledBytesPerSec }, func() {
		r.alter(t, r.leader, "", "leader.replication.throttled.rate", nil)
	})
}
