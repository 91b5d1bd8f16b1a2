package condition

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The evaluators of the conditions on the cluster's metadata: brokers'
// fencing, lifecycle and lag, topics and their partitions.

// brokerNode returns the node c names, which must be a broker.
func (c Condition) brokerNode(v *view.View) (*view.Node, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return nil, err
	}
	n, _ := v.Node(id)
	if !n.IsBroker() {
		return nil, fmt.Errorf("node %d is a %s; %s is about brokers", id, n.Kind, c.form.word)
	}
	return n, nil
}

// onBroker evaluates holds on the metadata of the broker c names, once
// anything is known of it.
func onBroker(holds func(Condition, *view.Broker) bool) evalFunc {
	return func(c Condition, v *view.View) (bool, string, error) {
		n, err := c.brokerNode(v)
		if err != nil {
			return false, "", err
		}
		if n.Broker == nil {
			return false, fmt.Sprintf("broker %d: nothing known yet", n.ID), nil
		}
		return holds(c, n.Broker), brokerSummary(n), nil
	}
}

func isFenced(_ Condition, b *view.Broker) bool   { return b.Registered && b.Fenced }
func isUnfenced(_ Condition, b *view.Broker) bool { return b.Registered && !b.Fenced }
func brokerIn(c Condition, b *view.Broker) bool   { return c.is(string(b.State)) }

// metadataLag does not hold while the lag is unknown (-1).
func metadataLag(c Condition, b *view.Broker) bool {
	return b.MetadataLag >= 0 && c.op.holds(b.MetadataLag, c.value.n)
}

// brokerSummary is one line about a broker's metadata.
func brokerSummary(n *view.Node) string {
	b := n.Broker
	fenced := "unfenced"
	switch {
	case !b.Registered:
		fenced = "not registered"
	case b.Fenced:
		fenced = "fenced"
	}
	state := string(b.State)
	if state == "" {
		state = string(n.State)
	}
	lag := "unknown"
	if b.MetadataLag >= 0 {
		lag = fmt.Sprint(b.MetadataLag)
	}
	return fmt.Sprintf("broker %d %s, %s, metadata lag %s", n.ID, state, fenced, lag)
}

// topicOnAllBrokers checks that every running broker has applied the
// topic's creation.
func topicOnAllBrokers(c Condition, v *view.View) (bool, string, error) {
	topic := c.field
	t, ok := v.Topic(topic)
	if !ok {
		if err := unknownTopic(v, topic, -1); err != nil {
			return false, "", err
		}
		return false, fmt.Sprintf("no topic %q in the committed metadata (no leader to serve it)", topic), nil
	}
	var missing []string
	running := 0
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Kind != view.KindBroker || n.State != view.StateRunning {
			continue
		}
		running++
		if !slices.Contains(t.OnBrokers, n.ID) {
			missing = append(missing, fmt.Sprint(n.ID))
		}
	}
	if len(missing) > 0 {
		return false, fmt.Sprintf("topic %s not yet on brokers %s", topic, strings.Join(missing, ",")), nil
	}
	return running > 0, fmt.Sprintf("topic %s on all %d running brokers", topic, running), nil
}

// onPartition evaluates f on the partition c names, once the committed
// metadata has it.
func onPartition(f func(Condition, *view.View, *view.Partition) (bool, string, error)) evalFunc {
	return func(c Condition, v *view.View) (bool, string, error) {
		p, ok := v.Partition(c.tp.Topic, c.tp.Partition)
		if !ok {
			if err := unknownTopic(v, c.tp.Topic, c.tp.Partition); err != nil {
				return false, "", err
			}
			return false, fmt.Sprintf("no partition %s in the committed metadata (no leader to serve it)", c.tp), nil
		}
		return f(c, v, p)
	}
}

// unknownTopic is the error of a condition on a topic, or on partition
// p (-1: none) of it, that the committed metadata lacks. Without a leader
// the playground's topics may be out of reach rather than gone: that is
// a condition that does not hold yet, not a mistake, and it is nil.
func unknownTopic(v *view.View, topic string, p int32) error {
	if v.LeaderID == view.NoLeader {
		return nil
	}
	t, ok := v.Topic(topic)
	if !ok {
		names := make([]string, len(v.Topics))
		for i := range v.Topics {
			names[i] = v.Topics[i].Name
		}
		known := "no topics yet"
		if len(names) > 0 {
			known = "topics: " + strings.Join(names, ", ")
		}
		return fmt.Errorf("%w %q (%s)", ErrUnknownTopic, topic, known)
	}
	return fmt.Errorf("%w %s-%d (topic %s has %s)", ErrUnknownPartition, topic, p, topic, partitionRange(len(t.Partitions)))
}

// partitionRange spells a topic's partitions: "partition 0",
// "partitions 0..2".
func partitionRange(n int) string {
	if n == 1 {
		return "partition 0"
	}
	return fmt.Sprintf("partitions 0..%d", n-1)
}

func partitionLeader(c Condition, v *view.View, p *view.Partition) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	return c.op.holds(int64(p.Leader), int64(id)), fmt.Sprintf("%s: %s", c.tp, p.Summary()), nil
}

func reassigned(c Condition, _ *view.View, p *view.Partition) (bool, string, error) {
	return !p.Reassigning(), fmt.Sprintf("%s: %s", c.tp, p.Summary()), nil
}

func isrSize(c Condition, _ *view.View, p *view.Partition) (bool, string, error) {
	return c.op.holds(int64(len(p.Isr)), c.value.n), fmt.Sprintf("%s: %s", c.tp, p.Summary()), nil
}

func lagWords(lag int64) string {
	if lag < 0 {
		return "an unknown part of the committed metadata"
	}
	return fmt.Sprintf("the last %d committed offsets", lag)
}
