package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/server/group"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetsCommitTimeout is offsets.commit.timeout.ms, Kafka's 5 s: how
// long a write to __consumer_offsets waits for its replicas.
const offsetsCommitTimeout = 5 * time.Second

// offsetsLog is the group coordinator's access to the offsets partitions
// through the broker's ReplicaManager: its writes take the produce path,
// acks=all, so the partitions' followers fetch them as any other records.
type offsetsLog struct{ rm *ReplicaManager }

// Append produces records to partition p of __consumer_offsets.
func (l offsetsLog) Append(p int32, records []storage.Record, done func(base int64, code int16)) {
	batch := storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: l.rm.clock.Now().UnixMilli()}, records)
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = 9, -1, int32(offsetsCommitTimeout/time.Millisecond)
	t := kmsg.NewProduceRequestTopic()
	t.Topic = group.OffsetsTopic
	tp := kmsg.NewProduceRequestTopicPartition()
	tp.Partition, tp.Records = p, batch
	t.Partitions = []kmsg.ProduceRequestTopicPartition{tp}
	r.Topics = []kmsg.ProduceRequestTopic{t}
	l.rm.appendRecords(r, true, func(resp kmsg.Response) {
		rp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		done(rp.BaseOffset, rp.ErrorCode)
	})
}

// errNotHosted is Read's and Bounds' error for a partition the broker
// does not host.
var errNotHosted = errors.New("not hosted here")

func (l offsetsLog) partition(p int32) (*partition.Partition, error) {
	part := l.rm.partitionByName(group.OffsetsTopic, p)
	if part == nil {
		return nil, fmt.Errorf("%s-%d: %w", group.OffsetsTopic, p, errNotHosted)
	}
	return part, nil
}

// Read reads partition p as a consumer does, below its high watermark.
func (l offsetsLog) Read(p int32, offset int64) ([]byte, error) {
	part, err := l.partition(p)
	if err != nil {
		return nil, err
	}
	res, err := part.Read(partition.FetchParams{
		ReplicaID: -1, ReplicaEpoch: -1, FetchOffset: offset, CurrentLeaderEpoch: partition.NoEpoch,
		LastFetchedEpoch: partition.NoEpoch, MaxBytes: 1 << 20, Isolation: partition.IsolationHighWatermark,
	})
	return res.Records, err
}

// Bounds are partition p's offsets.
func (l offsetsLog) Bounds(p int32) (int64, int64, int64, error) {
	part, err := l.partition(p)
	if err != nil {
		return 0, 0, 0, err
	}
	return part.LogStartOffset(), part.HighWatermark(), part.LogEndOffset(), nil
}

// newGroupCoordinator makes the broker's group coordinator; the
// ReplicaManager tells it which offsets partitions it leads after each
// image it applied.
func (s *Server) newGroupCoordinator(rm *ReplicaManager) *group.Coordinator {
	st := s.cfg.Settings
	delay := st.GroupInitialRebalanceDelay
	if delay == 0 && st.OffsetsTopicNumPartitions == 0 {
		// A Config without settings takes Kafka's defaults.
		delay = DefaultGroupInitialRebalanceDelay
	}
	session, interval := st.GroupConsumerSessionTimeout, st.GroupConsumerHeartbeatInterval
	if session <= 0 {
		session = DefaultGroupConsumerSessionTimeout
	}
	if interval <= 0 {
		interval = DefaultGroupConsumerHeartbeatInterval
	}
	c := group.New(group.Config{
		BrokerID: s.id, Log: offsetsLog{rm}, Clock: s.cfg.Clock, Logger: s.log,
		Timing: group.Timing{InitialRebalanceDelay: delay, ConsumerSessionTimeout: session, ConsumerHeartbeatInterval: interval},
		Topics: func() group.Topics { return imageTopics{rm.AppliedImage().Topics()} },
		NumPartitions: func() int32 {
			if t := rm.AppliedImage().Topics().TopicByName(group.OffsetsTopic); t != nil {
				return int32(t.NumPartitions())
			}
			return 0
		},
		PartitionExists: func(topic string, p int32) bool {
			t := rm.AppliedImage().Topics().TopicByName(topic)
			return t != nil && t.Partition(p) != nil
		},
	})
	rm.setOnApplied(func(img *image.MetadataImage) { c.Elect(rm.ledOffsetsPartitions(img)) })
	return c
}

// ledOffsetsPartitions are the partitions of __consumer_offsets that this
// broker leads as img says and its replica agrees, with their leader
// epochs.
func (rm *ReplicaManager) ledOffsetsPartitions(img *image.MetadataImage) map[int32]int32 {
	out := map[int32]int32{}
	t := img.Topics().TopicByName(group.OffsetsTopic)
	if t == nil {
		return out
	}
	for idx, reg := range t.Partitions() {
		if reg.Leader != rm.id {
			continue
		}
		p := rm.partitionByName(group.OffsetsTopic, idx)
		if p == nil {
			continue
		}
		if st := p.State(); st.Role == partition.RoleLeader && st.LeaderEpoch == reg.LeaderEpoch {
			out[idx] = reg.LeaderEpoch
		}
	}
	return out
}

// imageTopics is a metadata image's topics as the group coordinator
// reads them.
type imageTopics struct{ t *image.TopicsImage }

func (it imageTopics) info(t *image.TopicImage) (group.TopicInfo, bool) {
	if t == nil {
		return group.TopicInfo{}, false
	}
	return group.TopicInfo{Name: t.Name(), ID: t.ID(), Partitions: int32(t.NumPartitions())}, true
}

// ByName is the topic named name.
func (it imageTopics) ByName(name string) (group.TopicInfo, bool) {
	return it.info(it.t.TopicByName(name))
}

// ByID is the topic of id.
func (it imageTopics) ByID(id [16]byte) (group.TopicInfo, bool) { return it.info(it.t.Topic(id)) }

// Names are every topic's name.
func (it imageTopics) Names() []string { return it.t.Names() }
