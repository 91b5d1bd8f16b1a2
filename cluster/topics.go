package cluster

import (
	"context"
	"fmt"
	"github.com/dustin/go-humanize/english"
	"maps"
	"slices"
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
	// Configs are the topic's configs, written by the controller as
	// ConfigRecords with the topic.
	Configs map[string]string
}

// Bounds of a create-topic's configs: generous for a playground, and
// within what a Kafka string carries.
const (
	maxTopicConfigs      = 64
	maxTopicConfigKey    = 255
	maxTopicConfigValue  = 32767
	topicConfigsExample  = "--config min.insync.replicas=2"
	topicConfigKeyLetter = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
)

// checkTopicConfigs refuses configs no Kafka topic could have: too many,
// an empty or odd key, a value too long for the wire.
func checkTopicConfigs(a Action) error {
	if len(a.Configs) > maxTopicConfigs {
		return Errorf(ErrBadAction, "%s: %d configs, at most %d", a.Kind, len(a.Configs), maxTopicConfigs)
	}
	for _, k := range slices.Sorted(maps.Keys(a.Configs)) {
		switch {
		case k == "":
			return Errorf(ErrBadAction, "%s: a config needs a name, e.g. %s", a.Kind, topicConfigsExample)
		case len(k) > maxTopicConfigKey || strings.Trim(k, topicConfigKeyLetter) != "":
			return Errorf(ErrBadAction, "%s: bad config name %.100q: want letters, digits, '.', '_' or '-', e.g. %s", a.Kind, k, topicConfigsExample)
		case len(a.Configs[k]) > maxTopicConfigValue:
			return Errorf(ErrBadAction, "%s: config %s's value is %d bytes, at most %d", a.Kind, k, len(a.Configs[k]), maxTopicConfigValue)
		}
	}
	return nil
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
		for _, k := range slices.Sorted(maps.Keys(a.Configs)) {
			s += fmt.Sprintf(" --config %s=%s", k, a.Configs[k])
		}
		return s, true
	case ActDeleteTopic:
		return "topics delete " + a.Topic, true
	}
	return "", false
}

func (p *Playground) doTopic(ctx context.Context, a Action) (Result, error) {
	if !a.Node.IsZero() || !a.Peer.IsZero() || a.OneWay {
		return Result{}, Errorf(ErrBadAction, "%s takes a topic, not a node", a)
	}
	if strings.TrimSpace(a.Topic) == "" {
		return Result{}, Errorf(ErrBadAction, "%s: name the topic", a.Kind)
	}
	if a.Kind == ActDeleteTopic {
		if len(a.Configs) > 0 {
			return Result{}, Errorf(ErrBadAction, "%s takes no configs", a.Kind)
		}
		if err := p.engine.DeleteTopic(ctx, a.Topic); err != nil {
			return Result{}, fmt.Errorf("delete topic %s: %w", a.Topic, err)
		}
		msg := fmt.Sprintf("topic %s deleted", a.Topic)
		p.publish(EventTopicDeleted, 0, msg)
		return Result{Message: msg}, nil
	}
	spec := TopicSpec{Name: a.Topic, Partitions: orDefault(a.Partitions), ReplicationFactor: int16(orDefault(int32(a.ReplicationFactor))),
		Configs: maps.Clone(a.Configs)}
	if spec.Partitions < -1 || spec.ReplicationFactor < -1 {
		return Result{}, Errorf(ErrBadAction, "%s: partitions and replication factor must be at least 1", a)
	}
	if err := checkTopicConfigs(a); err != nil {
		return Result{}, err
	}
	if err := p.engine.CreateTopic(ctx, spec); err != nil {
		return Result{}, fmt.Errorf("create topic %s: %w", a.Topic, err)
	}
	msg := fmt.Sprintf("topic %s created", a.Topic)
	if v := p.View(); len(v.Topics) > 0 {
		if t, ok := v.Topic(a.Topic); ok && len(t.Partitions) > 0 {
			msg = fmt.Sprintf("topic %s created: %d %s, replication factor %d", a.Topic, len(t.Partitions), english.PluralWord(len(t.Partitions), "partition", ""), len(t.Partitions[0].Replicas))
		}
	}
	if len(spec.Configs) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(spec.Configs)) {
			kv = append(kv, k+"="+spec.Configs[k])
		}
		msg += ", configs " + strings.Join(kv, ", ")
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
