package zkcontroller

import (
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
)

// topicsChanged is the watch on /brokers/topics firing (Kafka's
// TopicChange): new topics are read and their partitions made.
func (c *KafkaController) topicsChanged() {
	if c.ctx == nil {
		return
	}
	ctx := c.ctx
	names, w, err := c.cfg.ZK.Topics()
	if err != nil {
		c.log.Warn("cannot read the topics", "err", err)
		c.retryLater(c.topicsChanged)
		return
	}
	c.watch(w, c.topicsChanged)
	for _, t := range names {
		if _, known := ctx.topics[t]; known {
			continue
		}
		a, ok, w, err := c.cfg.ZK.AssignmentW(t)
		if err != nil {
			c.log.Warn("cannot read a new topic", "topic", t, "err", err)
			continue
		}
		if ok {
			ctx.topics[t] = a
			c.watchAssignment(ctx, t, w)
		}
	}
	c.initNewPartitions()
}

// watchAssignment re-reads topic's assignment once w fires, while ctx is
// still the controller's: a watch left from an earlier term dies out.
func (c *KafkaController) watchAssignment(ctx *controllerContext, topic string, w <-chan zk.Event) {
	c.watch(w, func() {
		if c.ctx == ctx {
			c.partitionsChanged(topic)
		}
	})
}

// partitionsChanged is the watch on a topic's assignment firing (Kafka's
// PartitionModifications): partitions it now has that the controller
// does not are made, as a new topic's are. A topic gone, or one the
// controller has not learned yet, is left to the topics' watch.
func (c *KafkaController) partitionsChanged(topic string) {
	ctx := c.ctx
	a, ok, w, err := c.cfg.ZK.AssignmentW(topic)
	if err != nil {
		c.log.Warn("cannot read a topic's assignment", "topic", topic, "err", err)
		c.retryLater(func() {
			if c.ctx == ctx {
				c.partitionsChanged(topic)
			}
		})
		return
	}
	known, learned := ctx.topics[topic]
	if !ok || !learned {
		return
	}
	c.watchAssignment(ctx, topic, w)
	grown := kafkazk.Assignment{Topic: known.Topic, ID: known.ID, Replicas: maps.Clone(known.Replicas)}
	added := 0
	for p, rs := range a.Replicas {
		if _, ok := grown.Replicas[p]; !ok {
			grown.Replicas[p] = rs
			added++
		}
	}
	if added == 0 {
		return // Kafka 3.9 acts only on added partitions
	}
	c.log.Info("new partitions", "topic", topic, "added", added)
	ctx.topics[topic] = grown
	c.initNewPartitions()
}

// initNewPartitions gives each assigned partition without a state its
// first one (Kafka's NewPartition to OnlinePartition): the first live
// replica leads, the live replicas are the ISR, at leader epoch 0; the
// replicas hear it as new ones. A partition with no live replica stays
// new until one comes.
func (c *KafkaController) initNewPartitions() {
	ctx := c.ctx
	if ctx == nil {
		return
	}
	b := newBatch(ctx, c.cfg.NodeID)
	for _, t := range sortedTopics(ctx) {
		a := ctx.topics[t]
		for _, p := range a.Partitions() {
			tp := TopicPartition{t, p}
			if _, ok := ctx.states[tp]; ok {
				continue
			}
			var live []int32
			for _, r := range a.Replicas[p] {
				if ctx.eligible(r) {
					live = append(live, r)
				}
			}
			if len(live) == 0 {
				continue
			}
			s, err := c.cfg.ZK.CreatePartitionState(ctx.seat, t, p, firstState(live, ctx.seat.Epoch))
			if c.moved(err) {
				return
			}
			if err != nil {
				c.log.Warn("cannot create the partition state", "partition", tp, "err", err)
				continue
			}
			ctx.states[tp] = s
			b.leaderAndIsrTo(live, tp, true)
			c.emit(Event{Kind: LeaderChanged, Epoch: ctx.seat.Epoch, Partition: tp, Leader: s.Leader, LeaderEpoch: s.LeaderEpoch})
		}
	}
	c.send(b)
}

func sortedTopics(ctx *controllerContext) []string {
	names := make([]string, 0, len(ctx.topics))
	for t := range ctx.topics {
		names = append(names, t)
	}
	slices.Sort(names)
	return names
}
