package condition

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The conditions on the cluster's metadata: brokers' fencing, lifecycle
// and lag, topics and their partitions.
const (
	condFenced condKind = iota + 100
	condUnfenced
	condBrokerState
	condMetadataLag
	condTopicOnAllBrokers
	condPartitionLeader
	condIsrSize
)

// metadataForms are the metadata conditions' lines of Forms.
const metadataForms = `  fenced NODE | unfenced NODE   the committed metadata has broker NODE fenced (unfenced)
  broker NODE state [!=] STATE   STATE: STARTING RECOVERY RUNNING PENDING_CONTROLLED_SHUTDOWN SHUTTING_DOWN
  metadata-lag NODE OP V         offsets of the committed metadata log broker NODE has not applied
  topic T on all brokers         every running broker's metadata has topic T
  partition-leader T-P OP N      partition P of topic T is led by (not by) broker N; OP is == or !=
  isr T-P size OP V              the size of partition T-P's in-sync replica set`

// parseMetadataCondition parses the conditions that start with word, or
// reports ok false when word starts none of them.
func parseMetadataCondition(word string, t []string) (c Condition, ok bool, err error) {
	switch word {
	case "fenced", "unfenced":
		if len(t) != 2 {
			return Condition{}, true, fmt.Errorf("want %s NODE, e.g. %s 101", word, word)
		}
		ref, err := ParseNodeRef(t[1])
		k := condFenced
		if word == "unfenced" {
			k = condUnfenced
		}
		return Condition{kind: k, node: ref}, true, err
	case "broker":
		if len(t) < 4 || !strings.EqualFold(t[2], "state") {
			return Condition{}, true, errors.New("want broker NODE state [!=] STATE")
		}
		ref, err := ParseNodeRef(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		o, words := opEq, t[3:]
		if len(words) == 2 {
			if o, err = parseOp(words[0], opEq, opNe); err != nil {
				return Condition{}, true, err
			}
			words = words[1:]
		}
		if len(words) != 1 {
			return Condition{}, true, errors.New("want broker NODE state [!=] STATE")
		}
		list := view.Names(view.BrokerStates())
		i := slices.IndexFunc(list, func(s string) bool { return strings.EqualFold(s, words[0]) })
		if i < 0 {
			return Condition{}, true, fmt.Errorf("unknown broker state %q; want one of %s", words[0], strings.Join(list, ", "))
		}
		return Condition{kind: condBrokerState, node: ref, op: o, field: list[i]}, true, nil
	case "metadata-lag":
		if len(t) != 4 {
			return Condition{}, true, errors.New("want metadata-lag NODE OP V, e.g. metadata-lag 101 == 0")
		}
		ref, err := ParseNodeRef(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		o, err := parseOp(t[2])
		if err != nil {
			return Condition{}, true, err
		}
		v, err := parseOperand(t[3], false)
		return Condition{kind: condMetadataLag, node: ref, op: o, value: v}, true, err
	case "topic":
		if len(t) != 5 || !strings.EqualFold(t[2], "on") || !strings.EqualFold(t[3], "all") || !strings.EqualFold(t[4], "brokers") {
			return Condition{}, true, errors.New("want topic T on all brokers")
		}
		return Condition{kind: condTopicOnAllBrokers, field: t[1]}, true, nil
	case "partition-leader":
		if len(t) != 4 {
			return Condition{}, true, errors.New("want partition-leader TOPIC-P == N or != N, e.g. partition-leader orders-0 != 101")
		}
		tp, err := view.ParseTopicPartition(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		o, err := parseOp(t[2], opEq, opNe)
		if err != nil {
			return Condition{}, true, err
		}
		ref, err := parseNodeOperand(t[3])
		return Condition{kind: condPartitionLeader, tp: tp, op: o, node: ref}, true, err
	case "isr":
		if len(t) != 5 || !strings.EqualFold(t[2], "size") {
			return Condition{}, true, errors.New("want isr TOPIC-P size OP V, e.g. isr orders-0 size >= 2")
		}
		tp, err := view.ParseTopicPartition(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		o, err := parseOp(t[3])
		if err != nil {
			return Condition{}, true, err
		}
		v, err := parseOperand(t[4], false)
		return Condition{kind: condIsrSize, tp: tp, op: o, value: v}, true, err
	}
	return Condition{}, false, nil
}

// metadataString spells a metadata condition, ok false for other kinds.
func (c Condition) metadataString() (string, bool) {
	switch c.kind {
	case condFenced:
		return fmt.Sprintf("fenced %s", c.node), true
	case condUnfenced:
		return fmt.Sprintf("unfenced %s", c.node), true
	case condBrokerState:
		op := ""
		if c.op == opNe {
			op = " !="
		}
		return fmt.Sprintf("broker %s state%s %s", c.node, op, c.field), true
	case condMetadataLag:
		return fmt.Sprintf("metadata-lag %s %s %s", c.node, c.op, c.value), true
	case condTopicOnAllBrokers:
		return fmt.Sprintf("topic %s on all brokers", c.field), true
	case condPartitionLeader:
		return fmt.Sprintf("partition-leader %s %s %s", c.tp, c.op, c.node), true
	case condIsrSize:
		return fmt.Sprintf("isr %s size %s %s", c.tp, c.op, c.value), true
	}
	return "", false
}

// evalMetadata evaluates a metadata condition, ok false for other kinds.
func (c Condition) evalMetadata(v *view.View) (holds bool, saw string, err error, ok bool) {
	switch c.kind {
	case condFenced, condUnfenced, condBrokerState, condMetadataLag:
		holds, saw, err = c.evalBroker(v)
	case condTopicOnAllBrokers:
		holds, saw = topicOnAllBrokers(v, c.field)
	case condPartitionLeader, condIsrSize:
		holds, saw, err = c.evalPartition(v)
	default:
		return false, "", nil, false
	}
	return holds, saw, err, true
}

func (c Condition) evalBroker(v *view.View) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	n, _ := v.Node(id)
	if n.Kind != view.KindBroker {
		return false, "", fmt.Errorf("node %d is a %s; %s is about brokers", id, n.Kind, c.kindWord())
	}
	b := n.Broker
	if b == nil {
		return false, fmt.Sprintf("broker %d: nothing known yet", id), nil
	}
	saw := brokerSummary(n)
	switch c.kind {
	case condFenced:
		return b.Registered && b.Fenced, saw, nil
	case condUnfenced:
		return b.Registered && !b.Fenced, saw, nil
	case condBrokerState:
		return (string(b.State) == c.field) == (c.op != opNe), saw, nil
	}
	if b.MetadataLag < 0 {
		return false, saw, nil
	}
	return c.op.holds(b.MetadataLag, c.value.n), saw, nil
}

func (c Condition) kindWord() string {
	s, _ := c.metadataString()
	w, _, _ := strings.Cut(s, " ")
	return w
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

// topicOnAllBrokers checks that every running broker has applied topic's
// creation.
func topicOnAllBrokers(v *view.View, topic string) (bool, string) {
	t, ok := v.Topic(topic)
	if !ok {
		return false, fmt.Sprintf("no topic %q in the committed metadata", topic)
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
		return false, fmt.Sprintf("topic %s not yet on brokers %s", topic, strings.Join(missing, ","))
	}
	return running > 0, fmt.Sprintf("topic %s on all %d running brokers", topic, running)
}

func (c Condition) evalPartition(v *view.View) (bool, string, error) {
	p, ok := v.Partition(c.tp.Topic, c.tp.Partition)
	if !ok {
		return false, fmt.Sprintf("no partition %s in the committed metadata", c.tp), nil
	}
	saw := fmt.Sprintf("%s: %s", c.tp, p.Summary())
	if c.kind == condIsrSize {
		return c.op.holds(int64(len(p.Isr)), c.value.n), saw, nil
	}
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	if c.op == opEq {
		return p.Leader == id, saw, nil
	}
	return p.Leader != id, saw, nil
}

func lagWords(lag int64) string {
	if lag < 0 {
		return "an unknown part of the committed metadata"
	}
	return fmt.Sprintf("the last %d committed offsets", lag)
}
