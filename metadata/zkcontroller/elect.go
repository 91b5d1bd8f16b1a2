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
	var ws []*stateWrite
	for _, tp := range tps {
		s, ok := ctx.states[tp]
		if !ok || ctx.eligible(s.Leader) {
			continue
		}
		leader := ctx.firstEligibleInISR(tp, s)
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
		ws = append(ws, &stateWrite{tp: tp, next: next})
	}
	if !c.writeStates(b, ws) {
		return false
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
	var ws []*stateWrite
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
		ws = append(ws, &stateWrite{tp: tp, next: next})
	}
	return c.writeStates(b, ws)
}

// stateWrite is one partition's new state, and what writing it gave.
type stateWrite struct {
	tp      TopicPartition
	next    kafkazk.LeaderAndIsr
	written kafkazk.LeaderAndIsr
	err     error
}

// writeStates writes each partition's new state over the one the
// context holds, maxInFlight writes at a time as Kafka's asynchronous
// ZooKeeper client sends them, and queues each written state to the
// partition's replicas. A write that another came before is read back
// and left to the next event (Kafka retries it); it returns false only
// if the controller moved.
func (c *KafkaController) writeStates(b *requestBatch, ws []*stateWrite) bool {
	ctx := c.ctx
	writes := make([]func() error, len(ws))
	for i, w := range ws {
		writes[i] = func() error {
			w.written, w.err = c.cfg.ZK.UpdatePartitionState(ctx.seat, w.tp.Topic, w.tp.Partition, w.next)
			return nil
		}
	}
	_ = inFlight(writes)
	for _, w := range ws {
		if c.moved(w.err) {
			return false
		}
		if w.err != nil {
			c.log.Warn("cannot write the partition state", "partition", w.tp, "err", w.err)
			if errors.Is(w.err, kafkazk.ErrBadVersion) {
				if cur, ok, err := c.cfg.ZK.PartitionState(w.tp.Topic, w.tp.Partition); err == nil && ok {
					ctx.states[w.tp] = cur
				}
			}
			continue
		}
		prev := ctx.states[w.tp]
		ctx.states[w.tp] = w.written
		b.leaderAndIsrTo(ctx.replicas(w.tp), w.tp, false)
		if w.written.Leader != prev.Leader {
			c.emit(Event{Kind: LeaderChanged, Epoch: ctx.seat.Epoch, Partition: w.tp, Leader: w.written.Leader, LeaderEpoch: w.written.LeaderEpoch})
		}
	}
	return true
}
