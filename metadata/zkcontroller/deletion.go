package zkcontroller

// deleteMarked is the watch on /admin/delete_topics firing (Kafka's
// TopicDeletion event and TopicDeletionManager): every broker is told
// the topic's partitions are being deleted (UpdateMetadata with leader
// -2), its live replicas to delete their logs (StopReplica), and its
// znodes go, its mark last. A replica on a broker that is down keeps its
// log: kraftlab does not wait for it as Kafka does.
func (c *KafkaController) deleteMarked() {
	if c.ctx == nil {
		return
	}
	ctx := c.ctx
	names, w, err := c.cfg.ZK.TopicsToDelete()
	if err != nil {
		c.log.Warn("cannot read the topics to delete", "err", err)
		c.retryLater(c.deleteMarked)
		return
	}
	c.watch(w, c.deleteMarked)
	b := newBatch(ctx, c.cfg.NodeID)
	for _, t := range names {
		a, known := ctx.topics[t]
		if known {
			for _, p := range a.Partitions() {
				tp := TopicPartition{t, p}
				if s, ok := ctx.states[tp]; ok {
					s.Leader = leaderDuringDelete
					ctx.states[tp] = s
					b.updateMetadataTo(ctx.liveIDs(), tp)
					for _, r := range a.Replicas[p] {
						if ctx.isLive(r) {
							b.stopReplicaTo(r, tp)
						}
					}
				}
			}
			b.deleting = true
		}
		// The UpdateMetadata and StopReplica are built now, from the
		// context; the topic leaves it after.
		c.send(b)
		b = newBatch(ctx, c.cfg.NodeID)
		err := c.cfg.ZK.DeleteTopic(ctx.seat, t)
		if c.moved(err) {
			return
		}
		if err != nil {
			c.log.Warn("cannot delete the topic's znodes", "topic", t, "err", err)
			continue
		}
		if known {
			for _, p := range a.Partitions() {
				delete(ctx.states, TopicPartition{t, p})
			}
			delete(ctx.topics, t)
			c.log.Info("deleted topic", "topic", t)
		}
	}
}
