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
// itself. A consumer that starts before then may ask a leader for its
// offsets before that leader's own metadata holds the new topic, which it
// refuses, and franz-go waits a second before asking again: a stall of the
// client's making on both systems the benchmark compares, not the
// pipeline the end-to-end latency is to measure.
func waitTopicEverywhere(ctx context.Context, cl *kgo.Client, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, topicEverywhereTimeout)
	defer cancel()
	for {
		ok, err := topicEverywhere(ctx, cl, topic)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("topic %s on every broker: %w", topic, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func topicEverywhere(ctx context.Context, cl *kgo.Client, topic string) (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{t}
	first, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, err
	}
	if len(first.Brokers) == 0 {
		return false, nil
	}
	for _, b := range first.Brokers {
		r, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err != nil {
			return false, err
		}
		if len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 || len(r.Topics[0].Partitions) == 0 {
			return false, nil
		}
		for _, p := range r.Topics[0].Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false, nil
			}
		}
	}
	return true, nil
}
