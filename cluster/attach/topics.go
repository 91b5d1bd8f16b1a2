package attach

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// readTopics reads every topic's partitions from the brokers (Metadata),
// their eligible leader replicas where the brokers serve
// DescribeTopicPartitions, and each partition's high watermark.
func (p *poller) readTopics(ctx context.Context, r *reading) {
	if p.brokers == nil {
		return
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // every topic
	resp, err := p.brokers.Request(ctx, req)
	if err != nil {
		r.fail("Metadata: %v", err)
		return
	}
	r.unread[partTopics] = false
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			r.fail("Metadata of topic %s: %v", *t.Topic, err)
			continue
		}
		vt := view.Topic{Name: *t.Topic, ID: uuidString(t.TopicID), Partitions: []view.Partition{}}
		for _, pt := range t.Partitions {
			// Elr stays nil, unknown, until DescribeTopicPartitions
			// says; HighWatermark -1 until ListOffsets does.
			vt.Partitions = append(vt.Partitions, view.Partition{
				Partition: pt.Partition, Leader: pt.Leader, LeaderEpoch: pt.LeaderEpoch, PartitionEpoch: -1,
				Replicas: orEmpty(pt.Replicas), Isr: orEmpty(pt.ISR), HighWatermark: -1, ReplicaStates: []view.PartitionReplica{},
			})
		}
		slices.SortFunc(vt.Partitions, func(a, b view.Partition) int { return int(a.Partition - b.Partition) })
		r.v.Topics = append(r.v.Topics, vt)
	}
	topics := map[string]*view.Topic{}
	for i := range r.v.Topics {
		topics[r.v.Topics[i].Name] = &r.v.Topics[i]
	}
	if len(topics) == 0 {
		return
	}
	p.readELR(ctx, r, topics)
	ends, err := kadm.NewClient(p.brokers).ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
	if err != nil {
		r.fail("ListOffsets: %v", err)
		return
	}
	ends.Each(func(o kadm.ListedOffset) {
		if p := partitionOf(topics, o.Topic, o.Partition); p != nil && o.Err == nil {
			p.HighWatermark = o.Offset
		}
	})
}

func partitionOf(topics map[string]*view.Topic, topic string, partition int32) *view.Partition {
	t := topics[topic]
	if t == nil {
		return nil
	}
	for i := range t.Partitions {
		if t.Partitions[i].Partition == partition {
			return &t.Partitions[i]
		}
	}
	return nil
}

// readELR fills the eligible leader replicas (KIP-966) from
// DescribeTopicPartitions, page by page. A broker older than Kafka 3.8
// does not serve it: the partitions' ELRs stay unknown.
func (p *poller) readELR(ctx context.Context, r *reading, topics map[string]*view.Topic) {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		t := kmsg.NewDescribeTopicPartitionsRequestTopic()
		t.Topic = name
		req.Topics = append(req.Topics, t)
	}
	for pages := 0; pages < 10_000; pages++ {
		resp, err := p.brokers.Request(ctx, req)
		if err != nil {
			if !errors.Is(err, kerr.UnsupportedVersion) && !strings.Contains(err.Error(), "too old") {
				r.fail("DescribeTopicPartitions: %v", err)
			}
			return
		}
		dtp := resp.(*kmsg.DescribeTopicPartitionsResponse)
		for _, t := range dtp.Topics {
			if t.Topic == nil {
				continue
			}
			for _, pt := range t.Partitions {
				if p := partitionOf(topics, *t.Topic, pt.Partition); p != nil {
					p.Elr, p.LastKnownElr = orEmpty(pt.EligibleLeaderReplicas), orEmpty(pt.LastKnownELR)
				}
			}
		}
		if dtp.NextCursor == nil {
			return
		}
		req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: dtp.NextCursor.Topic, Partition: dtp.NextCursor.Partition}
	}
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
