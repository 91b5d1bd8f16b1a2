package benchkit

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicEverywhereTimeout bounds waitTopicEverywhere.
const topicEverywhereTimeout = 30 * time.Second

// waitTopicEverywhere waits until every broker's Metadata answer holds
// topic with a leader for each of its partitions, asking each broker
// itself, and returns how many partitions it has. A consumer that starts before then may ask a leader for its
// offsets before that leader's own metadata holds the new topic, which it
// refuses, and franz-go waits a second before asking again: a stall of the
// client's making on both systems the benchmark compares, not the
// pipeline the end-to-end latency is to measure.
func waitTopicEverywhere(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, topicEverywhereTimeout)
	defer cancel()
	for {
		n, err := topicEverywhere(ctx, cl, topic)
		if n > 0 {
			return n, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return 0, fmt.Errorf("topic %s on every broker: %w", topic, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// topicEverywhere is topic's partition count if every broker's Metadata
// gives each of them a leader, else 0.
func topicEverywhere(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{t}
	first, err := req.RequestWith(ctx, cl)
	if err != nil || len(first.Brokers) == 0 {
		return 0, err
	}
	n := 0
	for _, b := range first.Brokers {
		r, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err != nil {
			return 0, err
		}
		if len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 || len(r.Topics[0].Partitions) == 0 {
			return 0, nil
		}
		for _, p := range r.Topics[0].Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return 0, nil
			}
		}
		if n != 0 && n != len(r.Topics[0].Partitions) {
			return 0, nil
		}
		n = len(r.Topics[0].Partitions)
	}
	return n, nil
}

// warmUpFollowers produces one warm-up record to each partition with
// acks=all through a client of its own, so that each returns once the
// partition's followers have fetched it. A follower whose first Fetch for
// a new partition reached the leader before the leader's own metadata
// made it leader backs off replica.fetch.backoff.ms (1 s), as Kafka's
// does; without this, the first second of an acks=1 case would measure
// that backoff rather than the pipeline.
func warmUpFollowers(ctx context.Context, seeds []string, topic string, partitions, size int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ClientID("kraftlab-bench-warm-up"))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, partitions)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(warmUpKey), Value: recordValue(size, int64(i), time.Now()), Partition: int32(i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("warm-up of every partition: %w", err)
	}
	return nil
}
