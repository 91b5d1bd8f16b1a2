package zkcontroller

import (
	"context"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProducerIDBlockSize is how many producer ids one block hands a broker
// (Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const ProducerIDBlockSize = 1000

// AlterPartition applies a leader's ISR changes (Kafka's
// processAlterPartition): each is written to the partition's state
// znode, conditional on the partition epoch (its zkVersion) the leader
// named, at the same leader epoch; every broker then hears the new
// state by UpdateMetadata, the leader also by the answer.
func (c *KafkaController) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	return call(ctx, c, func() *kmsg.AlterPartitionResponse { return c.alterPartition(req) })
}

func (c *KafkaController) alterPartition(req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	resp := kmsg.NewPtrAlterPartitionResponse()
	if resp.ErrorCode = c.checkBroker(req.BrokerID, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	cc := c.ctx
	b := newBatch(cc, c.cfg.NodeID)
	var changed []TopicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.Topic, rt.TopidID = t.Topic, t.TopicID
		name := t.Topic
		if req.Version >= 2 {
			n, ok := cc.byTopicID(record.Uuid(t.TopicID))
			name = n
			if !ok {
				name = ""
			}
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = p.Partition
			if name == "" {
				rp.ErrorCode = kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			tp := TopicPartition{name, p.Partition}
			isr := p.NewISR
			if req.Version >= 3 {
				isr = nil
				for _, m := range p.NewEpochISR {
					isr = append(isr, m.BrokerID)
				}
			}
			s, code := c.alterOne(tp, req.BrokerID, p, isr)
			rp.ErrorCode = code
			if code == 0 {
				rp.LeaderID, rp.LeaderEpoch, rp.ISR, rp.PartitionEpoch = s.Leader, s.LeaderEpoch, s.ISR, s.ZkVersion
				if s.Recovering {
					rp.LeaderRecoveryState = 1
				}
				changed = append(changed, tp)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if c.ctx == nil {
		// A write found a newer controller: none of this stands.
		resp.Topics, resp.ErrorCode = nil, kerr.NotController.Code
		return resp
	}
	if len(changed) > 0 {
		b.updateMetadataTo(cc.liveIDs(), changed...)
		c.send(b)
	}
	return resp
}

// alterOne checks and writes one partition's ISR change.
func (c *KafkaController) alterOne(tp TopicPartition, leader int32, p kmsg.AlterPartitionRequestTopicPartition, isr []int32) (kafkazk.LeaderAndIsr, int16) {
	cc := c.ctx
	s, ok := cc.states[tp]
	switch {
	case !ok:
		return s, kerr.UnknownTopicOrPartition.Code
	case p.PartitionEpoch > s.ZkVersion || p.LeaderEpoch > s.LeaderEpoch:
		return s, kerr.NotController.Code
	case p.LeaderEpoch < s.LeaderEpoch:
		return s, kerr.FencedLeaderEpoch.Code
	case s.Leader == leader && slices.Equal(s.ISR, isr) && s.Recovering == (p.LeaderRecoveryState == 1):
		return s, 0
	case p.PartitionEpoch < s.ZkVersion:
		return s, kerr.InvalidUpdateVersion.Code
	case s.Leader != leader:
		return s, kerr.NotLeaderForPartition.Code
	}
	for _, r := range isr {
		if !cc.eligible(r) {
			return s, kerr.IneligibleReplica.Code
		}
	}
	next := s
	next.ISR, next.ControllerEpoch = slices.Clone(isr), cc.seat.Epoch
	next.Recovering = p.LeaderRecoveryState == 1
	next.ZkVersion = p.PartitionEpoch
	written, err := c.cfg.ZK.UpdatePartitionState(cc.seat, tp.Topic, tp.Partition, next)
	if c.moved(err) {
		return s, kerr.NotController.Code
	}
	if err != nil {
		c.log.Warn("cannot write an ISR change", "partition", tp, "err", err)
		return s, kerr.InvalidUpdateVersion.Code
	}
	cc.states[tp] = written
	return written, 0
}

// ControlledShutdown moves broker's leaderships away before it stops
// (Kafka's doControlledShutdown): it leads nothing it can hand over, and
// leaves the ISRs it follows in, told by StopReplica. The answer lists
// the partitions it still leads, those with no other replica to take
// them.
func (c *KafkaController) ControlledShutdown(ctx context.Context, req *kmsg.ControlledShutdownRequest) (*kmsg.ControlledShutdownResponse, error) {
	return call(ctx, c, func() *kmsg.ControlledShutdownResponse { return c.controlledShutdown(req) })
}

func (c *KafkaController) controlledShutdown(req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse {
	resp := kmsg.NewPtrControlledShutdownResponse()
	cc := c.ctx
	id := req.BrokerID
	switch {
	case cc == nil:
		resp.ErrorCode = kerr.NotController.Code
		return resp
	case !cc.isLive(id):
		resp.ErrorCode = kerr.BrokerNotAvailable.Code
		return resp
	case req.BrokerEpoch != -1 && req.BrokerEpoch < cc.live[id].Epoch:
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return resp
	}
	cc.shuttingDown[id] = true
	b := newBatch(cc, c.cfg.NodeID)
	// As Kafka's, the leaderships move first, in one pipelined batch of
	// writes, then the broker leaves the ISRs it follows in, in another.
	var moves []*stateWrite
	var followed []TopicPartition
	for _, tp := range cc.partitionsOn(id) {
		if len(cc.replicas(tp)) < 2 {
			continue
		}
		s := cc.states[tp]
		if s.Leader != id {
			b.stopReplicaTo(id, tp)
			followed = append(followed, tp)
			continue
		}
		leader := cc.firstEligibleInISR(tp, s)
		if leader == noLeader {
			continue
		}
		next := s
		next.Leader, next.LeaderEpoch, next.ControllerEpoch = leader, s.LeaderEpoch+1, cc.seat.Epoch
		next.ISR = slices.DeleteFunc(slices.Clone(s.ISR), func(r int32) bool { return cc.shuttingDown[r] })
		moves = append(moves, &stateWrite{tp: tp, next: next})
	}
	if !c.writeStates(b, moves) || !c.removeFromISR(id, followed, b) {
		resp.ErrorCode = kerr.NotController.Code
		return resp
	}
	c.send(b)
	for _, tp := range cc.partitionsOn(id) {
		if cc.states[tp].Leader == id && len(cc.replicas(tp)) > 1 {
			r := kmsg.NewControlledShutdownResponsePartitionsRemaining()
			r.Topic, r.Partition = tp.Topic, tp.Partition
			resp.PartitionsRemaining = append(resp.PartitionsRemaining, r)
		}
	}
	return resp
}

// AllocateProducerIDs hands a broker its next block of producer ids from
// /latest_producer_id_block (Kafka's ZkProducerIdManager behind the
// controller).
func (c *KafkaController) AllocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) (*kmsg.AllocateProducerIDsResponse, error) {
	return call(ctx, c, func() *kmsg.AllocateProducerIDsResponse {
		resp := kmsg.NewPtrAllocateProducerIDsResponse()
		if resp.ErrorCode = c.checkBroker(req.BrokerID, req.BrokerEpoch); resp.ErrorCode != 0 {
			return resp
		}
		blk, err := c.cfg.ZK.AllocateProducerIDs(req.BrokerID, ProducerIDBlockSize)
		if err != nil {
			c.log.Warn("cannot allocate producer ids", "broker", req.BrokerID, "err", err)
			resp.ErrorCode = kerr.UnknownServerError.Code
			return resp
		}
		resp.ProducerIDStart, resp.ProducerIDLen = blk.Start, int32(blk.End-blk.Start+1)
		return resp
	})
}

// checkBroker is the error a request from broker id at epoch gets before
// anything else: NOT_CONTROLLER off the active controller, and
// STALE_BROKER_EPOCH unless the broker is live at exactly that epoch.
func (c *KafkaController) checkBroker(id int32, epoch int64) int16 {
	switch {
	case c.ctx == nil:
		return kerr.NotController.Code
	case !c.ctx.isLive(id) || c.ctx.live[id].Epoch != epoch:
		return kerr.StaleBrokerEpoch.Code
	}
	return 0
}
