package condition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The conditions on the data plane: partitions' high watermarks and
// replicas' logs as the brokers hold them, and the followers' fetchers.
const (
	condPartitionHWM condKind = iota + 200
	condReplicaLogEnd
	condFetcherLag
	condInSync
	condTruncations
)

// dataPlaneForms are the data-plane conditions' lines of Forms.
const dataPlaneForms = `  hwm T-P OP V                   partition T-P's high watermark on its leader (-1 while no broker leads it)
  log-end T-P N OP V             the log end offset of broker N's replica of T-P (-1 when not hosted)
  fetcher-lag N OP V             broker N's largest fetcher partition lag (Kafka's MaxLag; 0 without fetchers)
  in-sync T-P                    every replica is in T-P's ISR and every hosted log ends at its high watermark
  truncations T-P N OP V         times broker N's fetcher cut its replica of T-P back (since it last became a follower)`

// parseDataPlaneCondition parses the conditions that start with word, or
// reports ok false when word starts none of them. hwm with a partition is
// one of them; hwm alone is the metadata log's.
func parseDataPlaneCondition(word string, t []string) (c Condition, ok bool, err error) {
	switch word {
	case "hwm":
		if len(t) != 4 {
			return Condition{}, false, nil
		}
		tp, err := view.ParseTopicPartition(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		o, err := parseOp(t[2])
		if err != nil {
			return Condition{}, true, err
		}
		v, err := partitionOperand(t[3])
		return Condition{kind: condPartitionHWM, tp: tp, op: o, value: v}, true, err
	case "log-end", "truncations":
		if len(t) != 5 {
			return Condition{}, true, fmt.Errorf("want %s TOPIC-P BROKER OP V, e.g. %s orders-0 102 %s", word, word, map[string]string{"log-end": "== 50", "truncations": ">= 1"}[word])
		}
		tp, err := view.ParseTopicPartition(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		ref, err := ParseBrokerRef(t[2])
		if err != nil {
			return Condition{}, true, err
		}
		o, err := parseOp(t[3])
		if err != nil {
			return Condition{}, true, err
		}
		v, err := partitionOperand(t[4])
		k := condReplicaLogEnd
		if word == "truncations" {
			k = condTruncations
		}
		return Condition{kind: k, tp: tp, node: ref, op: o, value: v}, true, err
	case "fetcher-lag":
		if len(t) != 4 {
			return Condition{}, true, errors.New("want fetcher-lag BROKER OP V, e.g. fetcher-lag 102 == 0")
		}
		ref, err := ParseBrokerRef(t[1])
		if err != nil {
			return Condition{}, true, err
		}
		o, err := parseOp(t[2])
		if err != nil {
			return Condition{}, true, err
		}
		v, err := parseOperand(t[3], false)
		return Condition{kind: condFetcherLag, node: ref, op: o, value: v}, true, err
	case "in-sync":
		if len(t) != 2 {
			return Condition{}, true, errors.New("want in-sync TOPIC-P, e.g. in-sync orders-0")
		}
		tp, err := view.ParseTopicPartition(t[1])
		return Condition{kind: condInSync, tp: tp}, true, err
	}
	return Condition{}, false, nil
}

// partitionOperand reads the V of a partition's offsets: a number, since
// the baseline records the metadata log's high watermark, not a
// partition's.
func partitionOperand(s string) (operand, error) {
	if strings.HasPrefix(strings.ToLower(s), "baseline") {
		return operand{}, fmt.Errorf("bad value %q: baseline is the metadata log's high watermark; a partition's offsets compare with a number", s)
	}
	return parseOperand(s, false)
}

// ParseBrokerRef reads a reference to a broker: its node ID, target (the node the last
// kill, stop, isolate or wipe acted on), leader-of:T-P or
// follower-of:T-P. leader, follower and old-leader name controllers of
// the metadata quorum, not brokers.
func ParseBrokerRef(s string) (NodeRef, error) {
	lower := strings.ToLower(s)
	if _, err := strconv.ParseInt(s, 10, 32); err != nil && lower != RefTarget && !strings.HasPrefix(lower, RefLeaderOf+":") && !strings.HasPrefix(lower, RefFollowerOf+":") {
		return NodeRef{}, fmt.Errorf("bad broker %q: want a broker's node ID, e.g. 102, %s, %s:TOPIC-P or %s:TOPIC-P", s, RefTarget, RefLeaderOf, RefFollowerOf)
	}
	return ParseNodeRef(s)
}

// dataPlaneString spells a data-plane condition, ok false for other kinds.
func (c Condition) dataPlaneString() (string, bool) {
	switch c.kind {
	case condPartitionHWM:
		return fmt.Sprintf("hwm %s %s %s", c.tp, c.op, c.value), true
	case condReplicaLogEnd:
		return fmt.Sprintf("log-end %s %s %s %s", c.tp, c.node, c.op, c.value), true
	case condFetcherLag:
		return fmt.Sprintf("fetcher-lag %s %s %s", c.node, c.op, c.value), true
	case condInSync:
		return fmt.Sprintf("in-sync %s", c.tp), true
	case condTruncations:
		return fmt.Sprintf("truncations %s %s %s %s", c.tp, c.node, c.op, c.value), true
	}
	return "", false
}

// evalDataPlane evaluates a data-plane condition, ok false for other kinds.
func (c Condition) evalDataPlane(v *view.View) (holds bool, saw string, err error, ok bool) {
	switch c.kind {
	case condPartitionHWM, condReplicaLogEnd, condInSync:
		holds, saw, err = c.evalPartitionData(v)
	case condFetcherLag:
		holds, saw, err = c.evalFetcherLag(v)
	case condTruncations:
		holds, saw, err = c.evalTruncations(v)
	default:
		return false, "", nil, false
	}
	return holds, saw, err, true
}

func (c Condition) evalPartitionData(v *view.View) (bool, string, error) {
	p, ok := v.Partition(c.tp.Topic, c.tp.Partition)
	if !ok {
		return false, fmt.Sprintf("no partition %s in the committed metadata", c.tp), nil
	}
	saw := fmt.Sprintf("%s: %s", c.tp, dataSummary(p))
	switch c.kind {
	case condPartitionHWM:
		return c.op.holds(p.HighWatermark, c.value.n), saw, nil
	case condReplicaLogEnd:
		id, err := c.node.Resolve(v)
		if err != nil {
			return false, "", err
		}
		have := int64(-1)
		if r, ok := replicaState(p, id); ok && r.Hosted {
			have = r.LogEndOffset
		}
		return c.op.holds(have, c.value.n), fmt.Sprintf("broker %d log end %d (want %s %d); %s", id, have, c.op, c.value.n, saw), nil
	}
	return inSync(p), saw, nil
}

// inSync: the ISR holds every replica, a leader's broker knows the high
// watermark, and every hosted replica's log ends there.
func inSync(p *view.Partition) bool {
	if p.HighWatermark < 0 || len(p.Isr) != len(p.Replicas) || len(p.ReplicaStates) != len(p.Replicas) {
		return false
	}
	for _, r := range p.ReplicaStates {
		if r.Hosted && r.LogEndOffset != p.HighWatermark {
			return false
		}
	}
	return true
}

func replicaState(p *view.Partition, broker int32) (view.PartitionReplica, bool) {
	for _, r := range p.ReplicaStates {
		if r.Broker == broker {
			return r, true
		}
	}
	return view.PartitionReplica{}, false
}

// dataSummary is a partition's metadata with its high watermark and each
// replica's log end offset.
func dataSummary(p *view.Partition) string {
	ends := make([]string, 0, len(p.Replicas))
	for _, id := range p.Replicas {
		end := "-"
		if r, ok := replicaState(p, id); ok && r.Hosted {
			end = strconv.FormatInt(r.LogEndOffset, 10)
		}
		ends = append(ends, fmt.Sprintf("%d:%s", id, end))
	}
	return fmt.Sprintf("%s, hwm %d, log ends %s", p.Summary(), p.HighWatermark, strings.Join(ends, " "))
}

func (c Condition) evalFetcherLag(v *view.View) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	n, _ := v.Node(id)
	if n.Kind != view.KindBroker {
		return false, "", fmt.Errorf("node %d is a %s; fetcher-lag is about brokers", id, n.Kind)
	}
	if n.State != view.StateRunning || n.Broker == nil {
		return false, fmt.Sprintf("broker %d is %s: no fetchers", id, n.State), nil
	}
	lag, worst, unknown := int64(0), "", 0
	for _, th := range n.Broker.Fetchers {
		for _, fp := range th.Partitions {
			if fp.Lag < 0 {
				unknown++
				continue
			}
			if fp.Lag > lag || worst == "" {
				lag, worst = fp.Lag, fmt.Sprintf("%s-%d on %s", fp.Topic, fp.Partition, th.Name)
			}
		}
	}
	saw := fmt.Sprintf("broker %d max lag %d", id, lag)
	if worst != "" {
		saw += " (" + worst + ")"
	}
	if unknown > 0 {
		// A partition before its first answer has no lag yet: waiting helps.
		noun := "partitions"
		if unknown == 1 {
			noun = "partition"
		}
		return false, fmt.Sprintf("%s; %d %s not answered yet", saw, unknown, noun), nil
	}
	return c.op.holds(lag, c.value.n), saw, nil
}

// evalTruncations counts the truncations of broker N's fetcher partition
// T-P: 0 when no thread of it fetches T-P (it leads it, or follows none).
func (c Condition) evalTruncations(v *view.View) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	n, _ := v.Node(id)
	if n.Kind != view.KindBroker {
		return false, "", fmt.Errorf("node %d is a %s; truncations T-P N is about brokers", id, n.Kind)
	}
	if n.State != view.StateRunning || n.Broker == nil {
		return false, fmt.Sprintf("broker %d is %s: no fetchers", id, n.State), nil
	}
	have, where := int64(0), fmt.Sprintf("no fetcher thread of broker %d fetches %s", id, c.tp)
	for _, th := range n.Broker.Fetchers {
		for _, fp := range th.Partitions {
			if fp.Topic == c.tp.Topic && fp.Partition == c.tp.Partition {
				have, where = fp.Truncations, fmt.Sprintf("%s on %s: %s, fetch offset %d", c.tp, th.Name, fp.State, fp.FetchOffset)
			}
		}
	}
	return c.op.holds(have, c.value.n), fmt.Sprintf("broker %d truncations %d (want %s %d); %s", id, have, c.op, c.value.n, where), nil
}
