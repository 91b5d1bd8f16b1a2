package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage/damagetest"
)

// A topic of replication factor 3 takes acknowledged records; its two
// followers stop, so the ISR shrinks to the leader, and the playground
// goes down. The leader's segment is damaged — a byte flipped, cut at a
// batch, cut to nothing — and the playground comes up again on the same
// folder. The damaged replica says what it lost, does not lead, and
// fetches it back from the followers' intact copies: every acknowledged
// record reads back, and no follower truncated its copy to the damage.
func TestRealEngineDamagedLeaderLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"byte flipped in the second batch", func(t *testing.T, path string) { damagetest.Flip(t, path, damagetest.BatchEnd(t, path, 1)+80) }},
		{"cut after the first batch", func(t *testing.T, path string) { damagetest.Cut(t, path, damagetest.BatchEnd(t, path, 1)) }},
		{"cut to nothing", func(t *testing.T, path string) { damagetest.Cut(t, path, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := openReal(t, 1, 3, dir)
			for _, b := range []string{"101", "102", "103"} {
				waitCond(t, p, "unfenced "+b)
			}
			do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 1, ReplicationFactor: 3})
			v := waitCond(t, p, "isr orders-0 size == 3")
			part, _ := v.Partition("orders", 0)
			leader := part.Leader
			const batches, perBatch = 3, 100
			produceBatches(t, p, batches, perBatch)
			for _, r := range part.Replicas {
				if r != leader {
					act(t, p, fmt.Sprintf("stop %d", r))
				}
			}
			waitCond(t, p, "isr orders-0 size == 1")
			nodeDir := server.NodeDir(dir, leader)
			poll.Until(t, 20*time.Second, "the leader's recovery point checkpointed", func() bool {
				b, _ := os.ReadFile(filepath.Join(nodeDir, "recovery-point-offset-checkpoint"))
				return strings.Contains(string(b), fmt.Sprintf("orders 0 %d\n", batches*perBatch))
			})
			p.Close()

			tc.damage(t, filepath.Join(nodeDir, "orders-0", "00000000000000000000.log"))
			p = openReal(t, 1, 3, dir)
			got := consumeAll(t, p, batches*perBatch)
			for i, v := range got {
				if want := fmt.Sprintf("r-%d", i); v != want {
					t.Fatalf("offset %d holds %q, want %q", i, v, want)
				}
			}
			var saw string
			poll.Until(t, 15*time.Second, "the damage in the event log and the view", func() bool {
				saw = ""
				for _, ev := range p.EventStream().Since(0) {
					if ev.Kind == cluster.EventReplicaDamaged && ev.Node == leader && strings.Contains(ev.Message, "orders-0") {
						saw = ev.Message
					}
				}
				v := p.View()
				part, _ := v.Partition("orders", 0)
				for _, r := range part.ReplicaStates {
					if r.Broker == leader {
						return saw != "" && r.Damage != "" && r.Repaired
					}
				}
				return false
			}, func() string { return describeNodes(p) })
			t.Log(saw)
		})
	}
}

// produceBatches sends n batches of per records, r-0 upwards, to orders-0,
// each acknowledged by all in-sync replicas before the next.
func produceBatches(t *testing.T, p *cluster.Playground, n, per int) {
	t.Helper()
	cl := brokerClient(t, p, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("orders"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for b := range n {
		recs := make([]*kgo.Record, per)
		for i := range recs {
			recs[i] = &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "r-%d", b*per+i)}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce batch %d: %v", b, err)
		}
	}
}

// consumeAll reads orders-0 from offset 0 until it has want records.
func consumeAll(t *testing.T, p *cluster.Playground, want int) []string {
	t.Helper()
	cl := brokerClient(t, p, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().At(0)}}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records back\n%s", len(got), want, describeNodes(p))
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// brokerClient is a franz-go client of the playground's brokers.
func brokerClient(t *testing.T, p *cluster.Playground, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	var seeds []string
	for _, n := range p.View().Nodes {
		if n.Kind == view.KindBroker && n.Listener != "" {
			seeds = append(seeds, n.Listener)
		}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ProducerLinger(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
