package cache

import (
	"slices"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MaxRequestPartitionSizeLimit is max.request.partition.size.limit's
// default: the most partitions one DescribeTopicPartitions answer holds,
// whatever the request's ResponsePartitionLimit.
const MaxRequestPartitionSizeLimit = 2000

// DescribeTopicPartitions answers KIP-966's DescribeTopicPartitions from
// img, as Kafka 4.4's DescribeTopicPartitionsRequestHandler and
// KRaftMetadataCache.describeTopicResponse do with no authorizer: the
// topics named (every topic if none), from the cursor on, sorted by name,
// each partition with its leader, replicas, ISR, offline replicas and
// eligible leader replicas (ELR and LastKnownELR, which Metadata does not
// carry: kafka-topics --describe prints them from here). At most
// min(ResponsePartitionLimit, MaxRequestPartitionSizeLimit) partitions
// (at least 1) are answered; NextCursor says where to go on. A named topic
// that does not exist gets UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION
// for a name no topic may have); when every topic is asked, those are
// left out. A cursor whose topic is not among those named, or whose
// partition is negative, fails the request with INVALID_REQUEST, every
// named topic carrying it.
func DescribeTopicPartitions(img *image.MetadataImage, listener string, req *kmsg.DescribeTopicPartitionsRequest) *kmsg.DescribeTopicPartitionsResponse {
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	resp.Version = req.GetVersion()
	all := len(req.Topics) == 0
	cursorTopic := ""
	if req.Cursor != nil {
		cursorTopic = req.Cursor.Topic
	}
	var names []string
	if all {
		for _, n := range img.Topics().Names() {
			if n >= cursorTopic {
				names = append(names, n)
			}
		}
	} else {
		for _, t := range req.Topics {
			if t.Topic >= cursorTopic {
				names = append(names, t.Topic)
			}
		}
		if req.Cursor != nil && !slices.Contains(names, req.Cursor.Topic) {
			return describeTopicPartitionsError(req, kerr.InvalidRequest)
		}
	}
	if req.Cursor != nil && req.Cursor.Partition < 0 {
		return describeTopicPartitionsError(req, kerr.InvalidRequest)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	remaining := max(min(MaxRequestPartitionSizeLimit, int(req.ResponsePartitionLimit)), 1)
	for _, name := range names {
		if remaining == 0 {
			// The cursor points at the start of the next topic, whether
			// or not it exists.
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name}
			break
		}
		start := int32(0)
		if req.Cursor != nil && name == req.Cursor.Topic {
			start = req.Cursor.Partition
		}
		t := img.Topics().TopicByName(name)
		if t == nil {
			if all {
				continue
			}
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic = kmsg.StringPtr(name)
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if !validTopicName(name) {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			rt.IsInternal = IsInternal(name)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic, rt.TopicID, rt.IsInternal = kmsg.StringPtr(name), t.ID(), IsInternal(name)
		rt.AuthorizedOperations = topicOperations
		count := int32(t.NumPartitions())
		upper := min(int64(count), int64(start)+int64(remaining))
		rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		for id := start; int64(id) < upper; id++ {
			if p := t.Partition(id); p != nil {
				rt.Partitions = append(rt.Partitions, describePartition(img, id, p, listener))
			}
		}
		resp.Topics = append(resp.Topics, rt)
		if upper < int64(count) {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: int32(upper)}
			break
		}
		remaining -= len(rt.Partitions)
	}
	return resp
}

// describePartition is KRaftMetadataCache's
// partitionMetadataForDescribeTopicResponse for one partition.
func describePartition(img *image.MetadataImage, id int32, p *image.PartitionRegistration, listener string) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	rp.Partition, rp.LeaderEpoch = id, p.LeaderEpoch
	rp.Replicas, rp.ISR = nonNil(slices.Clone(p.Replicas)), nonNil(slices.Clone(p.Isr))
	rp.EligibleLeaderReplicas = nonNil(slices.Clone(p.Elr))
	rp.LastKnownELR = nonNil(slices.Clone(p.LastKnownElr))
	rp.OfflineReplicas = offlineReplicas(img, p, listener)
	rp.LeaderID = -1
	if b := img.Cluster().Broker(p.Leader); b != nil && hasListener(b, listener) {
		rp.LeaderID = p.Leader
	}
	return rp
}

// describeTopicPartitionsError is DescribeTopicPartitionsRequest's
// getErrorResponse: every named topic with the error.
func describeTopicPartitionsError(req *kmsg.DescribeTopicPartitionsRequest, err *kerr.Error) *kmsg.DescribeTopicPartitionsResponse {
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	resp.Version = req.GetVersion()
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic, rt.ErrorCode = kmsg.StringPtr(t.Topic), err.Code
		rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
