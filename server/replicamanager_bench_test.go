package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkAcksAllProduce measures one acks=all produce of one record,
// answered once both followers of a partition replicated on three
// brokers fetched it: the round trip a parked follower fetch shortens.
// The idempotent case is kgo's default, so each batch also passes the
// leader's producer-state check.
func BenchmarkAcksAllProduce(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"plain", []kgo.Opt{kgo.DisableIdempotentWrite()}},
		{"idempotent", nil},
	} {
		b.Run(tc.name, func(b *testing.B) { benchAcksAllProduce(b, tc.opts...) })
	}
}

func benchAcksAllProduce(b *testing.B, opts ...kgo.Opt) {
	ts := startClusterWith(b, 600*time.Millisecond, []int32{101, 102, 103}, func(c *Config) {
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
	})
	for _, id := range []int32{101, 102, 103} {
		s := ts.byID[id]
		waitFor(b, "broker RUNNING", func() bool { return s.Lifecycle().State() == BrokerRunning })
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(ts.brokerAddrs(101, 102, 103)...),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("bench"), kgo.ProducerLinger(0)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, "bench"); err != nil {
		b.Fatal(err)
	}
	// The first produce waits for the topic to be everywhere.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
}
