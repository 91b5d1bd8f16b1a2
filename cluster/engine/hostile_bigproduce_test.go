package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// TestHostileBigProduce: franz-go with its defaults produces one 600 KB
// record to each of two partitions led by the same broker. Both batches
// go in one Produce request of about 1.2 MB; the review saw it never
// acknowledged, because brokers capped request frames at 1 MiB where
// Kafka's socket.request.max.bytes is 100 MiB.
func TestHostileBigProduce(t *testing.T) {
	ht := openHostile(t)
	const topic = "big"
	// franz-go's defaults, but for the partitioner.
	cl, err := kgo.NewClient(kgo.SeedBrokers(ht.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 6, 1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	poll.Until(t, hostileRecovery, "every partition of "+topic+" led", func() bool {
		v := ht.p.View()
		tp, ok := v.Topic(topic)
		if !ok || len(tp.Partitions) != 6 {
			return false
		}
		for _, p := range tp.Partitions {
			if p.Leader < 0 {
				return false
			}
		}
		return true
	})
	// Two partitions with the same leader.
	leaders := map[int32]int32{}
	var pair []int32
	for p := range int32(6) {
		_, id := ht.partitionLeader(t, topic, p)
		if q, ok := leaders[id]; ok {
			pair = []int32{q, p}
			break
		}
		leaders[id] = p
	}
	if pair == nil {
		t.Fatalf("no two partitions of %s share a leader: %v", topic, leaders)
	}
	value := incompressible(600_000)
	start := time.Now()
	// An idempotent producer retries a record in flight until it is
	// acknowledged, whatever its context says: wait for it here.
	produced := make(chan error, 1)
	go func() {
		produced <- cl.ProduceSync(ctx,
			&kgo.Record{Topic: topic, Partition: pair[0], Value: value},
			&kgo.Record{Topic: topic, Partition: pair[1], Value: value}).FirstErr()
	}()
	select {
	case err := <-produced:
		if err != nil {
			t.Fatalf("two 600 KB records to partitions %v: %v", pair, err)
		}
	case <-time.After(hostileRecovery):
		cl.Close() // fails the records
		<-produced
		t.Fatalf("two 600 KB records to partitions %v not acknowledged within %v", pair, hostileRecovery)
	}
	t.Logf("two 600 KB records to partitions %v of one broker acknowledged in %v", pair, time.Since(start).Round(time.Millisecond))
	ht.checkServing(t, "after a 1.2 MB Produce")
}
