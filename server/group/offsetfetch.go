package group

import (
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchTopic is the partitions an OffsetFetch asks for in one topic.
type fetchTopic struct {
	topic      string
	partitions []int32
}

// handleOffsetFetch answers the committed offsets of one group (v1-v7) or
// of several (v8+), of the topics named or, when none are, of every
// topic the group committed to.
func (c *Coordinator) handleOffsetFetch(req *wire.Request) {
	c.offsetFetch(req.Body.(*kmsg.OffsetFetchRequest), req.Respond)
}

// offsetFetch is handleOffsetFetch's work, answered through answer.
func (c *Coordinator) offsetFetch(r *kmsg.OffsetFetchRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrOffsetFetchResponse()
	defer answer(resp)
	if r.Version >= 8 {
		for _, rg := range r.Groups {
			var topics []fetchTopic
			all := rg.Topics == nil
			for _, t := range rg.Topics {
				topics = append(topics, fetchTopic{t.Topic, t.Partitions})
			}
			code, got := c.fetchOffsets(rg.Group, topics, all, rg.MemberID, rg.MemberEpoch)
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = rg.Group, code
			for _, t := range got {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return
	}
	var topics []fetchTopic
	for _, t := range r.Topics {
		topics = append(topics, fetchTopic{t.Topic, t.Partitions})
	}
	// Before v2 a null topic list is not "all topics".
	code, got := c.fetchOffsets(r.Group, topics, r.Topics == nil && r.Version >= 2, nil, -1)
	resp.ErrorCode, resp.Topics = code, got
	if code != 0 && r.Version < 2 {
		// v1 has no group error: every partition carries it.
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
	}
}

// fetchOffsets is one group's answer: its error code and the offsets,
// -1 for a partition without one. A consumer group's member asks with
// its id and epoch (v9+).
func (c *Coordinator) fetchOffsets(group string, topics []fetchTopic, all bool, memberID *string, memberEpoch int32) (int16, []kmsg.OffsetFetchResponseTopic) {
	unknown := func() []kmsg.OffsetFetchResponseTopic {
		var out []kmsg.OffsetFetchResponseTopic
		for _, t := range topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.topic
			for _, p := range t.partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, -1, -1, kmsg.StringPtr("")
				rt.Partitions = append(rt.Partitions, rp)
			}
			out = append(out, rt)
		}
		return out
	}
	if group == "" {
		return kerr.InvalidGroupID.Code, unknown()
	}
	s, code := c.shardFor(group)
	if code != 0 {
		return code, unknown()
	}
	var out []kmsg.OffsetFetchResponseTopic
	var memberCode int16
	if code := s.do(func(time.Time) {
		if cg := s.cgroups[group]; cg != nil {
			if memberCode = cg.ValidateFetch(memberID, memberEpoch); memberCode != 0 {
				return
			}
		}
		os := s.offsets[group]
		if all {
			byTopic := map[string][]int32{}
			for tp := range os {
				byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
			}
			topics = nil
			for t, ps := range byTopic {
				slices.Sort(ps)
				topics = append(topics, fetchTopic{t, ps})
			}
			slices.SortFunc(topics, func(a, b fetchTopic) int {
				if a.topic < b.topic {
					return -1
				}
				if a.topic > b.topic {
					return 1
				}
				return 0
			})
		}
		out = unknown()
		for i, t := range topics {
			for j, p := range t.partitions {
				if cm, ok := os[TopicPartition{t.topic, p}]; ok {
					rp := &out[i].Partitions[j]
					rp.Offset, rp.LeaderEpoch, rp.Metadata = cm.Offset, cm.LeaderEpoch, kmsg.StringPtr(cm.Metadata)
				}
			}
		}
	}); code != 0 {
		return code, unknown()
	}
	if memberCode != 0 {
		return memberCode, unknown()
	}
	return 0, out
}
