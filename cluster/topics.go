package cluster

import (
	"context"
	"fmt"
	"strings"
)

// The topic actions, named after their CLI lines "topics create" and
// "topics delete".
const (
	ActCreateTopic ActionKind = "create-topic"
	ActDeleteTopic ActionKind = "delete-topic"
)

// Events of the topic actions.
const (
	EventTopicCreated EventKind = "topic-created"
	EventTopicDeleted EventKind = "topic-deleted"
)

// TopicSpec is a topic to create. Partitions and ReplicationFactor -1 leave
// them to the controller's num.partitions and default.replication.factor,
// as Kafka's CreateTopics does.
type TopicSpec struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
}

// topicString spells the topic actions as their CLI lines.
func (a Action) topicString() (string, bool) {
	switch a.Kind {
	case ActCreateTopic:
		s := "topics create " + a.Topic
		if a.Partitions > 0 {
			s += fmt.Sprintf(" --partitions %d", a.Partitions)
		}
		if a.ReplicationFactor > 0 {
			s += fmt.Sprintf(" --replication-factor %d", a.ReplicationFactor)
		}
		return s, true
	case ActDeleteTopic:
		return "topics delete " + a.Topic, true
	}
	return "", false
}

func (p *Playground) doTopic(ctx context.Context, a Action) (Result, error) {
	if !a.Node.IsZero() || !a.Peer.IsZero() || a.OneWay {
		return Result{}, errorf(ErrBadAction, "%s takes a topic, not a node", a)
	}
	if strings.TrimSpace(a.Topic) == "" {
		return Result{}, errorf(ErrBadAction, "%s: name the topic", a.Kind)
	}
	if a.Kind == ActDeleteTopic {
		if err := p.engine.DeleteTopic(ctx, a.Topic); err != nil {
			return Result{}, fmt.Errorf("delete topic %s: %w", a.Topic, err)
		}
		msg := fmt.Sprintf("topic %s deleted", a.Topic)
		p.publish(EventTopicDeleted, 0, msg)
		return Result{Message: msg}, nil
	}
	spec := TopicSpec{Name: a.Topic, Partitions: orDefault(a.Partitions), ReplicationFactor: int16(orDefault(int32(a.ReplicationFactor)))}
	if spec.Partitions < -1 || spec.ReplicationFactor < -1 {
		return Result{}, errorf(ErrBadAction, "%s: partitions and replication factor must be at least 1", a)
	}
	if err := p.engine.CreateTopic(ctx, spec); err != nil {
		return Result{}, fmt.Errorf("create topic %s: %w", a.Topic, err)
	}
	msg := fmt.Sprintf("topic %s created", a.Topic)
	if v := p.View(); len(v.Topics) > 0 {
		if t, ok := v.Topic(a.Topic); ok && len(t.Partitions) > 0 {
			msg = fmt.Sprintf("topic %s created: %d partitions, replication factor %d", a.Topic, len(t.Partitions), len(t.Partitions[0].Replicas))
		}
	}
	p.publish(EventTopicCreated, 0, msg)
	return Result{Message: msg}, nil
}

// orDefault maps an unset count (0) to -1, the controller's default.
func orDefault(n int32) int32 {
	if n == 0 {
		return -1
	}
	return n
}
