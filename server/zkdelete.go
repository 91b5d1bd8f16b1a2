package server

import (
	"time"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// deleteTopicsNamed are the topics a DeleteTopics names, by name before
// v6 and by name or id from v6.
func deleteTopicsNamed(req *kmsg.DeleteTopicsRequest) []kmsg.DeleteTopicsRequestTopic {
	if req.Version >= 6 {
		return req.Topics
	}
	out := make([]kmsg.DeleteTopicsRequestTopic, len(req.TopicNames))
	for i := range req.TopicNames {
		out[i].Topic = &req.TopicNames[i]
	}
	return out
}

// deleteTopics is DeleteTopics on the controller broker (Kafka 3.9's
// ZkAdminManager.deleteTopics): each topic is marked in
// /admin/delete_topics, which the controller watches, and the answer
// waits until this broker's metadata no longer has it, up to the
// request's timeout.
func (b *ZkBrokerServer) deleteTopics(req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := kmsg.NewPtrDeleteTopicsResponse()
	img := b.s.servedImage()
	c := b.zk.Load()
	var marked []string
	for _, t := range deleteTopicsNamed(req) {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		name := ""
		switch {
		case t.Topic != nil:
			name = *t.Topic
		case record.Uuid(t.TopicID) != record.ZeroUuid:
			if topic := img.Topics().Topic(record.Uuid(t.TopicID)); topic != nil {
				name = topic.Name()
				rt.Topic = &name
			}
		}
		topic := img.Topics().TopicByName(name)
		switch {
		case topic == nil && record.Uuid(t.TopicID) != record.ZeroUuid:
			rt.ErrorCode = kerr.UnknownTopicID.Code
		case topic == nil:
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		default:
			rt.TopicID = topic.ID()
			if err := c.MarkForDeletion(name); err != nil {
				rt.ErrorCode = kerr.UnknownServerError.Code
				msg := err.Error()
				rt.ErrorMessage = &msg
				break
			}
			marked = append(marked, name)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	deadline := b.s.cfg.Clock.Now().Add(time.Duration(req.TimeoutMillis) * time.Millisecond)
	for len(marked) > 0 && !b.topicsGone(marked) {
		if req.TimeoutMillis <= 0 || !b.s.cfg.Clock.Now().Before(deadline) {
			markDeleteTimedOut(resp, marked)
			break
		}
		select {
		case <-b.ctx.Done():
			markDeleteTimedOut(resp, marked)
			return resp
		case <-b.s.cfg.Clock.After(20 * time.Millisecond):
		}
	}
	return resp
}

// topicsGone reports whether this broker's metadata has none of topics.
func (b *ZkBrokerServer) topicsGone(topics []string) bool {
	img := b.s.servedImage()
	for _, t := range topics {
		if img.Topics().TopicByName(t) != nil {
			return false
		}
	}
	return true
}

func markDeleteTimedOut(resp *kmsg.DeleteTopicsResponse, topics []string) {
	for i, t := range resp.Topics {
		for _, name := range topics {
			if t.Topic != nil && *t.Topic == name && t.ErrorCode == 0 {
				resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
			}
		}
	}
}
