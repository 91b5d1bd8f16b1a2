package zkcontroller

import (
	"errors"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
)

// electOffline elects a leader for each of tps whose leader is not
// eligible (Kafka's triggerOnlinePartitionStateChange with the offline
// election): the first replica in assignment order that is eligible and
// in the ISR. A partition with none stays without a live leader and is
// left as it is. It returns false if the controller moved.
func (c *KafkaController) electOffline(tps []TopicPartition) bool {
	ctx := c.ctx
	b := newBatch(ctx, c.cfg.NodeID)
	for _, tp := range tps {
		s, ok := ctx.states[tp]
		if !ok || ctx.eligible(s.Leader) {
			continue
		}
		leader := int32(noLeader)
		for _, r := range ctx.replicas(tp) {
			if ctx.eligible(r) && slices.Contains(s.ISR, r) {
				leader = r
				break
			}
		}
		if leader == noLeader {
			continue
		}
		next := s
		next.Leader, next.LeaderEpoch, next.ControllerEpoch = leader, s.LeaderEpoch+1, ctx.seat.Epoch
		next.ISR = nil
		for _, r := range s.ISR {
			if ctx.eligible(r) {
				next.ISR = append(next.ISR, r)
			}
		}
		if !c.writeState(b, tp, next) {
			return false
		}
	}
	c.send(b)
	return true
}

// removeFromISR takes broker id out of tps' ISRs and leadership (Kafka's
// OfflineReplica transition): the leader epoch goes up, and an ISR of
// one keeps its last member, so that the partition knows which replica
// had everything. It returns false if the controller moved.
func (c *KafkaController) removeFromISR(id int32, tps []TopicPartition, b *requestBatch) bool {
	ctx := c.ctx
	for _, tp := range tps {
		s, ok := ctx.states[tp]
		if !ok || !slices.Contains(s.ISR, id) && s.Leader != id {
			continue
		}
		next := s
		next.ControllerEpoch, next.LeaderEpoch = ctx.seat.Epoch, s.LeaderEpoch+1
		if s.Leader == id {
			next.Leader = noLeader
		}
		if len(s.ISR) > 1 {
			next.ISR = slices.DeleteFunc(slices.Clone(s.ISR), func(r int32) bool { return r == id })
		}
		if !c.writeState(b, tp, next) {
			return false
		}
	}
	return true
}

// writeState writes tp's new state over the one the context holds, and
// queues it to the partition's replicas. A write that another came
// before is read back and left to the next event (Kafka retries it);
// it returns false only if the controller moved.
func (c *KafkaController) writeState(b *requestBatch, tp TopicPartition, next kafkazk.LeaderAndIsr) bool {
	ctx := c.ctx
	prev := ctx.states[tp]
	s, err := c.cfg.ZK.UpdatePartitionState(ctx.seat, tp.Topic, tp.Partition, next)
	if c.moved(err) {
		return false
	}
	if err != nil {
		c.log.Warn("cannot write the partition state", "partition", tp, "err", err)
		if errors.Is(err, kafkazk.ErrBadVersion) {
			if cur, ok, err := c.cfg.ZK.PartitionState(tp.Topic, tp.Partition); err == nil && ok {
				ctx.states[tp] = cur
			}
		}
		return true
	}
	ctx.states[tp] = s
	b.leaderAndIsrTo(ctx.replicas(tp), tp, false)
	if s.Leader != prev.Leader {
		c.emit(Event{Kind: LeaderChanged, Epoch: ctx.seat.Epoch, Partition: tp, Leader: s.Leader, LeaderEpoch: s.LeaderEpoch})
	}
	return true
}
