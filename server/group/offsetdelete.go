package group

import (
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleOffsetDelete deletes a group's committed offsets of some
// partitions by writing their tombstones (Kafka's
// OffsetMetadataManager.deleteOffsets). A partition of a topic the
// group's members subscribe to is GROUP_SUBSCRIBED_TO_TOPIC.
func (c *Coordinator) handleOffsetDelete(req *wire.Request) {
	c.offsetDelete(req.Body.(*kmsg.OffsetDeleteRequest), req.Respond)
}

// offsetDelete is handleOffsetDelete's work, answered through answer.
func (c *Coordinator) offsetDelete(r *kmsg.OffsetDeleteRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		answer(resp)
		return
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		resp.ErrorCode = code
		answer(resp)
		return
	}
	queued := false
	if code := s.do(func(time.Time) {
		var subscribed []string
		if cg := s.cgroups[r.Group]; cg != nil {
			subscribed = cg.subscribedTopicNames(s.c.topics())
		} else {
			g := s.groups[r.Group]
			if g == nil || g.State() == Dead {
				resp.ErrorCode = kerr.GroupIDNotFound.Code
				return
			}
			subscribed = g.subscribedTopics()
		}
		var recs []storage.Record
		var tps []TopicPartition
		for i, t := range resp.Topics {
			for j, p := range t.Partitions {
				if subscribed == nil || slices.Contains(subscribed, t.Topic) {
					resp.Topics[i].Partitions[j].ErrorCode = kerr.GroupSubscribedToTopic.Code
					continue
				}
				tp := TopicPartition{t.Topic, p.Partition}
				if _, ok := s.offsets[r.Group][tp]; ok {
					recs = append(recs, OffsetCommitRecord(r.Group, tp, nil))
					tps = append(tps, tp)
				}
			}
		}
		if len(recs) == 0 {
			return
		}
		queued = true
		// Gone now, as Kafka replays its own records when it writes
		// them: a commit after this one lands after the tombstones.
		for _, tp := range tps {
			delete(s.offsets[r.Group], tp)
		}
		s.queueLocked(recs, func(_ int64, code int16) {
			resp.ErrorCode = appendError(code, false)
			answer(resp)
		})
	}); code != 0 {
		resp.ErrorCode = code
	}
	if !queued {
		answer(resp)
	}
}

// subscribedTopics are the topics a consumer group's members subscribe
// to, empty for a group without members; nil when they cannot be known
// (another protocol type, or a subscription that does not decode), in
// which case every topic counts as subscribed.
func (g *Group) subscribedTopics() []string {
	if len(g.members) == 0 {
		return []string{}
	}
	if g.protocolType != ConsumerProtocolType || g.protocol == "" {
		return nil
	}
	out := []string{}
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil
		}
		out = append(out, meta.Topics...)
	}
	return out
}
