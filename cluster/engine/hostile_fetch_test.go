package engine_test

import (
	"context"
	"crypto/rand"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The hostile review's Fetch: v12 naming one 300 MB partition seven times
// with MaxBytes and PartitionMaxBytes 2^31-1 built a 2.1 GB answer (RSS
// 639 MB -> 9.6 GB, OOM-killed in a 3 GiB cgroup). Now the answer names
// the partition once and holds at most fetch.max.bytes plus one batch
// (kgo's batches are at most about 1 MB).
// Sized down: an 8 MiB partition and fetch.max.bytes lowered to 1 MiB
// stand for 300 MB and 55 MiB.
func TestHostileFetchAmplification(t *testing.T) {
	const fetchMax = 1 << 20
	ht := openHostile(t, "fetch.max.bytes=1048576")
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	const topic = "big"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	const records, size = 128, 64 << 10 // 8 MiB that no codec shrinks
	for i := range records {
		value := make([]byte, size)
		rand.Read(value)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce %d: %v", i, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pt := ht.leaderOf(t, cl, topic)
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.ReplicaID, r.MaxBytes, r.MaxWaitMillis = 12, -1, math.MaxInt32, 0
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	for range 7 {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LastFetchedEpoch = 0, math.MaxInt32, -1, -1
		ft.Partitions = append(ft.Partitions, fp)
	}
	r.Topics = []kmsg.FetchRequestTopic{ft}
	raw, err := kgo.NewClient(kgo.SeedBrokers(ht.brokers...), kgo.MaxVersions(pinFetch(12)), kgo.BrokerMaxReadBytes(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	resp := request[*kmsg.FetchResponse](t, raw, pt.leader, r)
	answers, bytes := 0, 0
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			answers++
			bytes += len(p.RecordBatches)
		}
	}
	t.Logf("a partition of %d bytes named 7 times: %d answers, %d bytes", records*size, answers, bytes)
	if answers != 1 || bytes > fetchMax+2<<20 {
		t.Errorf("%d answers, %d bytes: want one of at most fetch.max.bytes %d plus a batch", answers, bytes, fetchMax)
	}
	ht.checkServing(t, "after the fetch")
}

// pinFetch is kgo's versions with Fetch at most v: v12 names topics.
func pinFetch(v int16) *kversion.Versions {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.Fetch.Int16(), v)
	return vs
}
