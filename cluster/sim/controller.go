package sim

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/metasim"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/datasim"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controller is the real control plane as the data plane sees it: the
// partitions as the committed metadata log holds them, and the brokers'
// AlterPartition sent to the active controller they know.
type controller struct {
	ms      *metasim.Sim
	topicID record.Uuid
}

var _ datasim.Controller = (*controller)(nil)

// Partition implements datasim.Controller from the committed image.
func (c *controller) Partition(idx int32) datasim.Registration {
	return registrationOf(c.ms.Committed(), c.topicID, idx)
}

// registrationOf is partition idx of the topic in img; no leader and no
// replicas if the image does not hold it.
func registrationOf(img *image.MetadataImage, topicID record.Uuid, idx int32) datasim.Registration {
	t := img.Topics().Topic(topicID)
	if t == nil || t.Partition(idx) == nil {
		return datasim.Registration{Leader: -1, LeaderEpoch: -1, PartitionEpoch: -1}
	}
	p := t.Partition(idx)
	return datasim.Registration{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
		Replicas: append([]int32(nil), p.Replicas...), ISR: append([]int32(nil), p.Isr...)}
}

// AlterPartition implements datasim.Controller: an AlterPartition v3 for
// the one partition, as the server's ISR loop sends it, answered by the
// QuorumController the broker knows as active.
func (c *controller) AlterPartition(from, idx int32, prop partition.Proposal, answer func(isr []int32, partitionEpoch int32, err error)) {
	epoch := c.ms.BrokerEpoch(from)
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = from, epoch
	t := kmsg.NewAlterPartitionRequestTopic()
	t.TopicID = c.topicID
	t.Partitions = append(t.Partitions, prop.AlterPartition(idx, from, epoch))
	req.Topics = append(req.Topics, t)
	c.ms.AlterPartition(from, req, func(resp *kmsg.AlterPartitionResponse, err error) {
		if err != nil {
			answer(nil, 0, err)
			return
		}
		if resp.ErrorCode != 0 {
			answer(nil, 0, kerr.ErrorForCode(resp.ErrorCode))
			return
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			answer(nil, 0, kerr.UnknownServerError)
			return
		}
		rp := resp.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 {
			answer(nil, 0, kerr.ErrorForCode(rp.ErrorCode))
			return
		}
		answer(rp.ISR, rp.PartitionEpoch, nil)
	})
}
