package zkcontroller

import (
	"slices"
)

// brokersChanged is the watch on /brokers/ids firing (Kafka's
// BrokerChange): the brokers that went are failed, the new ones
// started, and one that came back in a new session (a larger epoch) is
// both.
func (c *KafkaController) brokersChanged() {
	if c.ctx == nil {
		return
	}
	ctx := c.ctx
	ids, w, err := c.cfg.ZK.BrokerIDs()
	if err != nil {
		c.log.Warn("cannot read the brokers", "err", err)
		c.retryLater(c.brokersChanged)
		return
	}
	c.watch(w, c.brokersChanged)
	var dead, born []int32
	for _, id := range ctx.liveIDs() {
		if !slices.Contains(ids, id) {
			dead = append(dead, id)
		}
	}
	for _, id := range ids {
		b, ok, err := c.cfg.ZK.Broker(id)
		if err != nil || !ok {
			continue
		}
		old, was := ctx.live[id]
		switch {
		case !was:
			born = append(born, id)
		case b.Epoch > old.Epoch:
			dead = append(dead, id)
			born = append(born, id)
		}
	}
	if len(dead) > 0 && !c.brokersFailed(dead) {
		return
	}
	if len(born) > 0 {
		// The new registrations take effect after the failures, which
		// dropped them.
		for _, id := range born {
			b, ok, err := c.cfg.ZK.Broker(id)
			if err == nil && ok {
				ctx.live[id] = b
			}
		}
		c.brokersStarted(born)
	}
}

// brokersFailed handles brokers whose registration went (Kafka's
// onBrokerFailure): their partitions elect new leaders, their replicas
// leave the ISRs, and every broker hears it. It returns false if the
// controller moved.
func (c *KafkaController) brokersFailed(dead []int32) bool {
	ctx := c.ctx
	for _, id := range dead {
		c.ch.remove(id)
		delete(ctx.live, id)
		delete(ctx.shuttingDown, id)
	}
	var led []TopicPartition
	for _, tp := range ctx.partitions() {
		if slices.Contains(dead, ctx.states[tp].Leader) {
			led = append(led, tp)
		}
	}
	if !c.electOffline(led) {
		return false
	}
	b := newBatch(ctx, c.cfg.NodeID)
	for _, id := range dead {
		if !c.removeFromISR(id, ctx.partitionsOn(id), b) {
			return false
		}
	}
	// The others learn that the brokers are gone even if no partition
	// changed.
	b.updateMetadataTo(ctx.liveIDs())
	c.send(b)
	return true
}

// brokersStarted handles new registrations (Kafka's onBrokerStartup):
// the others hear of the new brokers, each new one gets the whole
// state and its replicas' LeaderAndIsr, and partitions that had no live
// leader try again.
func (c *KafkaController) brokersStarted(born []int32) {
	ctx := c.ctx
	b := newBatch(ctx, c.cfg.NodeID)
	var others []int32
	for _, id := range ctx.liveIDs() {
		if !slices.Contains(born, id) {
			others = append(others, id)
		}
	}
	b.updateMetadataTo(others)
	for _, id := range born {
		c.ch.add(ctx.live[id])
		b.updateMetadataTo([]int32{id}, ctx.partitions()...)
	}
	for _, id := range born {
		for _, tp := range ctx.partitionsOn(id) {
			b.leaderAndIsrTo([]int32{id}, tp, false)
		}
	}
	c.send(b)
	if c.electOffline(ctx.partitions()) {
		c.initNewPartitions()
	}
}
