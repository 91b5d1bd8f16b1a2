package server

import (
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetForLeaderEpochVersions are the OffsetForLeaderEpoch versions
// Kafka 4.4 serves.
var offsetForLeaderEpochVersions = wire.APIRange{Key: kmsg.OffsetForLeaderEpoch.Int16(), MinVersion: 2, MaxVersion: 4}

// debuggingReplicaID is the replica id of a tool that may ask any replica,
// not only the leader (Kafka's DEBUGGING_REPLICA_ID, the default before v3).
const debuggingReplicaID = -2

func (rm *ReplicaManager) handleOffsetForLeaderEpoch(req *wire.Request) {
	req.Respond(rm.offsetForLeaderEpoch(req.Body.(*kmsg.OffsetForLeaderEpochRequest)))
}

// offsetForLeaderEpoch is Kafka's ReplicaManager.lastOffsetForLeaderEpoch:
// for each partition, the largest epoch at most the one asked for and
// where it ended, as a consumer checks for truncation after a leader
// change. Only the leader answers, except to a debugging tool.
func (rm *ReplicaManager) offsetForLeaderEpoch(r *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	img := rm.img.Load()
	replicaID := int32(debuggingReplicaID)
	if r.Version >= 3 {
		replicaID = r.ReplicaID
	}
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		rt.Topic = t.Topic
		topic := img.Topics().TopicByName(t.Topic)
		rt.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(t.Partitions))
		for j, op := range t.Partitions {
			rp := &rt.Partitions[j]
			*rp = kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.LeaderEpoch, rp.EndOffset = op.Partition, -1, -1
			p, code := rm.replicaFor(topic, false, op.Partition)
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			eo, err := p.LastOffsetForLeaderEpoch(op.CurrentLeaderEpoch, op.LeaderEpoch, replicaID != debuggingReplicaID)
			if err != nil {
				rp.ErrorCode = partition.ErrorCode(err)
				continue
			}
			rp.LeaderEpoch, rp.EndOffset = eo.Epoch, eo.EndOffset
		}
	}
	return resp
}
