package server

import (
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listOffsetsVersions are the ListOffsets versions Kafka 4.4 serves (v1
// on; v11 is what its replica fetchers send).
var listOffsetsVersions = wire.APIRange{Key: kmsg.ListOffsets.Int16(), MinVersion: 1, MaxVersion: 11}

// handleListOffsets is Kafka's handleListOffsetRequest on the leader:
// earliest is the log start; latest is the high watermark for a consumer
// and the log end for a replica (a follower fetcher resetting an out of
// range offset); other timestamps as partition.ListOffsets finds them.
func (rm *ReplicaManager) handleListOffsets(req *wire.Request) {
	req.Respond(rm.listOffsets(req.Body.(*kmsg.ListOffsetsRequest), req.Member))
}

// listOffsets answers r; member says the connection authenticated as a
// member, whose replica id is believed.
func (rm *ReplicaManager) listOffsets(r *kmsg.ListOffsetsRequest, member bool) *kmsg.ListOffsetsResponse {
	img := rm.img.Load()
	asReplica := r.ReplicaID >= 0 && member
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		rt.Topic = t.Topic
		topic := img.Topics().TopicByName(t.Topic)
		rt.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(t.Partitions))
		for j, lp := range t.Partitions {
			rp := &rt.Partitions[j]
			*rp = kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Timestamp, rp.Offset, rp.LeaderEpoch = lp.Partition, -1, -1, -1
			p, code := rm.replicaFor(topic, false, lp.Partition)
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			if r.ReplicaID == debuggingReplicaID && lp.Timestamp == partition.LatestTimestamp {
				// Any replica answers a debugging replica, leader or not
				// (Kafka's fetchOnlyFromLeader is false for it): its log end,
				// here with the epoch of its last batch, by which the
				// controller's recovery election compares logs (Kafka gives
				// the partition's leader epoch).
				rp.Offset, rp.LeaderEpoch = p.LogEndOffset(), p.LastEpoch()
				continue
			}
			to, err := p.ListOffsets(lp.Timestamp, lp.CurrentLeaderEpoch)
			if err != nil {
				rp.ErrorCode = partition.ErrorCode(err)
				continue
			}
			rp.Timestamp, rp.Offset, rp.LeaderEpoch = to.Timestamp, to.Offset, to.LeaderEpoch
			if asReplica && lp.Timestamp == partition.LatestTimestamp {
				rp.Offset = p.LogEndOffset()
			}
		}
	}
	return resp
}

// register serves the ReplicaManager's APIs on mux.
func (rm *ReplicaManager) register(mux *wire.Mux) error {
	for _, h := range []struct {
		api wire.APIRange
		fn  func(*wire.Request)
	}{
		{produceVersions, rm.handleProduce},
		{fetchVersions, rm.handleFetch},
		{listOffsetsVersions, rm.handleListOffsets},
		{offsetForLeaderEpochVersions, rm.handleOffsetForLeaderEpoch},
		{describeLogDirsVersions, rm.handleDescribeLogDirs},
	} {
		if err := mux.Handle(h.api, wire.HandlerFunc(h.fn)); err != nil {
			return err
		}
	}
	return nil
}
