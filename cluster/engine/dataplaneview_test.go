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

// The real engine's view of the data plane: records a Kafka client
// produced reach every replica, the partition's high watermark is the
// leader's, each follower's broker runs a ReplicaFetcherThread for the
// leader with the partition in it, caught up, and the leader knows each
// follower's log end from its fetches.
func TestRealEngineDataPlaneView(t *testing.T) {
	p := openReal(t, 1, 3, "")
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 1, ReplicationFactor: 3})
	v := waitCond(t, p, "topic orders on all brokers")
	var seeds []string
	for _, n := range v.Nodes {
		if n.Kind == view.KindBroker {
			seeds = append(seeds, n.Listener)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 20
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "order %d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	var saw string
	poll.Until(t, 15*time.Second, "every replica and fetcher at the high watermark", func() bool {
		v = p.View()
		part, ok := v.Partition("orders", 0)
		if !ok {
			return false
		}
		saw = fmt.Sprintf("%+v", *part)
		if part.HighWatermark != n || len(part.ReplicaStates) != 3 {
			return false
		}
		for _, r := range part.ReplicaStates {
			if !r.Hosted || r.LogEndOffset != n || r.Leading != (r.Broker == part.Leader) {
				return false
			}
			if r.Broker != part.Leader && r.LeaderLogEndOffset != n {
				return false
			}
		}
		for _, nv := range v.Nodes {
			if nv.Broker == nil || nv.ID == part.Leader {
				continue
			}
			want := fmt.Sprintf("ReplicaFetcherThread-0-%d", part.Leader)
			found := false
			for _, th := range nv.Broker.Fetchers {
				for _, fp := range th.Partitions {
					if th.Name == want && fp.Topic == "orders" && fp.State == view.FetchStateFetching && fp.FetchOffset == n && fp.Lag == 0 && fp.Records == n {
						found = true
					}
				}
			}
			if !found {
				saw = fmt.Sprintf("broker %d fetchers %+v", nv.ID, nv.Broker.Fetchers)
				return false
			}
		}
		return true
	}, func() string { return saw })
}
