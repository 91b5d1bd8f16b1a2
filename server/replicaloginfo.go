package server

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
)

// replicaLogInfoVersion is the ListOffsets version the controller asks
// with: one that carries the answer's leader epoch.
const replicaLogInfoVersion = 7

// replicaLogInfo is the controller's question for a recovery election,
// asked through its connections to the brokers: a ListOffsets for the
// latest offset as a debugging replica, which any replica answers with its
// log end and the epoch of its last batch (see listOffsets).
func replicaLogInfo(brokers *brokerChannel) controller.ReplicaLogInfo {
	return func(ctx context.Context, broker int32, topic string, partition int32) (controller.LogInfo, error) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.ReplicaID = replicaLogInfoVersion, debuggingReplicaID
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = partition, -1, -1
		rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
		req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
		resp, err := brokers.send(ctx, broker, req)
		if err != nil {
			return controller.LogInfo{}, err
		}
		lr := resp.(*kmsg.ListOffsetsResponse)
		if len(lr.Topics) != 1 || len(lr.Topics[0].Partitions) != 1 {
			return controller.LogInfo{}, fmt.Errorf("broker %d answered %d topics for one", broker, len(lr.Topics))
		}
		p := lr.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			return controller.LogInfo{}, fmt.Errorf("broker %d: %w", broker, kerr.ErrorForCode(p.ErrorCode))
		}
		return controller.LogInfo{LastEpoch: p.LeaderEpoch, LogEndOffset: p.Offset}, nil
	}
}

// brokerAddr is broker id's listener in the node's metadata image.
func (s *Server) brokerAddr(id int32) (string, bool) { return brokerListener(s.image(), id) }

// brokerListener is the PLAINTEXT listener img registers for broker id.
func brokerListener(img *image.MetadataImage, id int32) (string, bool) {
	b := img.Cluster().Broker(id)
	if b == nil {
		return "", false
	}
	ep, ok := b.Listener(listenerName)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s:%d", ep.Host, ep.Port), true
}
