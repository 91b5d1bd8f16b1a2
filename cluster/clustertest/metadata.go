package clustertest

import (
	"context"
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/clock"
)

// The model's metadata: a broker is unfenced exactly while it runs and
// reaches the leader; a partition is led by its first unfenced replica,
// and its ISR is its unfenced replicas (the last one stays when none is).
// It imitates the shape of the real controller's answers, not its timing.

// modelTopic is one topic: its partitions' replicas.
type modelTopic struct {
	name     string
	id       string
	replicas [][]int32
	epochs   []int32 // leader epoch per partition, bumped when its leader changes
	leaders  []int32
}

func (e *Engine) unfenced(id int32) bool {
	return e.live(id) && e.leader != view.NoLeader && e.reach(id, e.leader)
}

// brokerView is broker n's metadata view.
func (e *Engine) brokerView(n *node) *view.Broker {
	b := &view.Broker{BrokerEpoch: int64(n.id), Registered: true, Fenced: !e.unfenced(n.id), MetadataLag: -1, LastHeartbeatTimestamp: n.lastFetch}
	if e.live(n.id) {
		b.State = view.BrokerRecovery
		if !b.Fenced {
			b.State, b.MetadataLag = view.BrokerRunning, 0
		}
	}
	return b
}

// topicViews is the model's topics, leaders and ISRs brought up to date.
func (e *Engine) topicViews() []view.Topic {
	var onBrokers []int32
	for _, id := range e.order {
		if e.nodes[id].kind == view.KindBroker && e.unfenced(id) {
			onBrokers = append(onBrokers, id)
		}
	}
	out := make([]view.Topic, 0, len(e.topics))
	for _, t := range e.topics {
		tv := view.Topic{Name: t.name, ID: t.id, OnBrokers: onBrokers}
		for p, replicas := range t.replicas {
			var isr []int32
			for _, r := range replicas {
				if e.unfenced(r) {
					isr = append(isr, r)
				}
			}
			leader := int32(view.NoLeader)
			if len(isr) > 0 {
				leader = isr[0]
			} else {
				isr = replicas[len(replicas)-1:]
			}
			if leader != t.leaders[p] {
				t.leaders[p] = leader
				t.epochs[p]++
			}
			tv.Partitions = append(tv.Partitions, view.Partition{Partition: int32(p), Leader: leader, LeaderEpoch: t.epochs[p], Replicas: replicas, Isr: isr,
				HighWatermark: e.partitionHWM(leader), ReplicaStates: e.replicaStates(replicas, leader)})
		}
		out = append(out, tv)
	}
	return out
}

// CreateTopic implements cluster.Engine: replicas go round robin over the
// unfenced brokers.
func (e *Engine) CreateTopic(_ context.Context, spec cluster.TopicSpec) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return err
	}
	e.settle(e.opt.Now())
	if slices.ContainsFunc(e.topics, func(t *modelTopic) bool { return t.name == spec.Name }) {
		return fmt.Errorf("%w: TOPIC_ALREADY_EXISTS: topic %s already exists", cluster.ErrRefused, spec.Name)
	}
	var brokers []int32
	for _, id := range e.order {
		if e.nodes[id].kind == view.KindBroker && e.unfenced(id) {
			brokers = append(brokers, id)
		}
	}
	parts, rf := int(spec.Partitions), int(spec.ReplicationFactor)
	if parts < 0 {
		parts = 1
	}
	if rf < 0 {
		rf = 1
	}
	if rf > len(brokers) {
		return fmt.Errorf("%w: INVALID_REPLICATION_FACTOR: replication factor %d, only %d unfenced brokers", cluster.ErrRefused, rf, len(brokers))
	}
	t := &modelTopic{name: spec.Name, id: fmt.Sprintf("model-topic-%d", len(e.topics)+1)}
	for p := range parts {
		var replicas []int32
		for r := range rf {
			replicas = append(replicas, brokers[(p+r)%len(brokers)])
		}
		t.replicas = append(t.replicas, replicas)
		t.leaders = append(t.leaders, replicas[0])
		t.epochs = append(t.epochs, 0)
	}
	e.topics = append(e.topics, t)
	return nil
}

// DeleteTopic implements cluster.Engine.
func (e *Engine) DeleteTopic(_ context.Context, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return err
	}
	i := slices.IndexFunc(e.topics, func(t *modelTopic) bool { return t.name == name })
	if i < 0 {
		return fmt.Errorf("%w: UNKNOWN_TOPIC_OR_PARTITION: no topic %s", cluster.ErrRefused, name)
	}
	e.topics = slices.Delete(e.topics, i, i+1)
	return nil
}

// controllerMetrics counts the model's brokers and topics as controller id
// reports them: only the leader is active.
func (e *Engine) controllerMetrics(id int32) *view.ControllerMetrics {
	m := &view.ControllerMetrics{LastAppliedRecordOffset: e.nodes[id].hwm - 1, LastCommittedRecordOffset: e.nodes[id].hwm - 1}
	if id != e.leader {
		return m
	}
	m.ActiveControllerCount = 1
	for _, bid := range e.order {
		if e.nodes[bid].kind != view.KindBroker {
			continue
		}
		if e.unfenced(bid) {
			m.ActiveBrokerCount++
		} else {
			m.FencedBrokerCount++
		}
	}
	for _, t := range e.topicViews() {
		m.GlobalTopicCount++
		for _, p := range t.Partitions {
			m.GlobalPartitionCount++
			if p.Leader == view.NoLeader {
				m.OfflinePartitionsCount++
			}
		}
	}
	return m
}

// ElectLeaders implements cluster.Engine: in the model every replica is
// in sync, so a preferred election makes an unfenced first replica the
// leader, and an unclean one is never needed while a leader exists.
func (e *Engine) ElectLeaders(_ context.Context, unclean bool, partitions []view.TopicPartition) ([]cluster.Election, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return nil, err
	}
	elect := func(t *modelTopic, p int32) string {
		switch {
		case unclean && t.leaders[p] != view.NoLeader, !unclean && t.leaders[p] == t.replicas[p][0]:
			return "ELECTION_NOT_NEEDED"
		case !unclean && !e.unfenced(t.replicas[p][0]):
			return "PREFERRED_LEADER_NOT_AVAILABLE"
		case unclean:
			i := slices.IndexFunc(t.replicas[p], e.unfenced)
			if i < 0 {
				return "ELIGIBLE_LEADERS_NOT_AVAILABLE"
			}
			t.leaders[p] = t.replicas[p][i]
		default:
			t.leaders[p] = t.replicas[p][0]
		}
		t.epochs[p]++
		return ""
	}
	var out []cluster.Election
	if len(partitions) == 0 {
		for _, t := range e.topics {
			for p := range t.replicas {
				if msg := elect(t, int32(p)); msg != "ELECTION_NOT_NEEDED" {
					out = append(out, cluster.Election{Partition: view.TopicPartition{Topic: t.name, Partition: int32(p)}, Error: msg})
				}
			}
		}
		return out, nil
	}
	for _, tp := range partitions {
		i := slices.IndexFunc(e.topics, func(t *modelTopic) bool { return t.name == tp.Topic })
		if i < 0 || int(tp.Partition) >= len(e.topics[i].replicas) {
			out = append(out, cluster.Election{Partition: tp, Error: "UNKNOWN_TOPIC_OR_PARTITION"})
			continue
		}
		out = append(out, cluster.Election{Partition: tp, Error: elect(e.topics[i], tp.Partition)})
	}
	return out, nil
}

// AlterReassignments implements cluster.Engine: in the model every
// replica is in sync at once, so a reassignment completes as it starts
// (the partition takes its target replicas) and there is never one to
// cancel; the throttle has no bytes to slow.
func (e *Engine) AlterReassignments(_ context.Context, moves []cluster.Move, _ int64) ([]cluster.MoveResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.takeFailure(); err != nil {
		return nil, err
	}
	var out []cluster.MoveResult
	for _, m := range moves {
		res := cluster.MoveResult{Partition: m.Partition}
		i := slices.IndexFunc(e.topics, func(t *modelTopic) bool { return t.name == m.Partition.Topic })
		switch {
		case i < 0 || int(m.Partition.Partition) >= len(e.topics[i].replicas):
			res.Error = "UNKNOWN_TOPIC_OR_PARTITION"
		case m.Replicas == nil:
			res.Error = "NO_REASSIGNMENT_IN_PROGRESS"
		default:
			e.topics[i].replicas[m.Partition.Partition] = slices.Clone(m.Replicas)
		}
		out = append(out, res)
	}
	return out, nil
}

// ListReassignments implements cluster.Engine: the model's complete at
// once, so none is in progress.
func (e *Engine) ListReassignments(context.Context, []view.TopicPartition) ([]cluster.Reassignment, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return nil, e.takeFailure()
}

// ClearReplicationThrottles implements cluster.Engine: the model has no
// throttles.
func (e *Engine) ClearReplicationThrottles(context.Context, []string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.takeFailure()
}

// Clock implements cluster.Engine: the model has no cluster clock; its
// time is the test's (Options.Now).
func (e *Engine) Clock() *clock.Clock { return nil }

// HeldMessages implements cluster.Engine: the model has no links.
func (e *Engine) HeldMessages() []view.Message { return nil }

// Trace implements cluster.Engine: the messages of Options.Trace, the
// model's links sending none themselves.
func (e *Engine) Trace(last int) view.Trace {
	m := e.opt.Trace
	if last > 0 && len(m) > last {
		m = m[len(m)-last:]
	}
	t := view.Trace{Messages: slices.Clone(m), Capacity: 4096}
	if len(m) > 0 {
		t.Recorded = m[len(m)-1].Seq
	}
	return t
}

// StepMessages implements cluster.Engine: the model holds no message.
func (e *Engine) StepMessages(cluster.MessageFilter) ([]view.Message, error) {
	return nil, cluster.Errorf(cluster.ErrBadAction, "this engine holds no messages")
}

// DropMessage implements cluster.Engine: the model holds no message.
func (e *Engine) DropMessage(cluster.MessageFilter) (view.Message, error) {
	return view.Message{}, cluster.Errorf(cluster.ErrBadAction, "this engine holds no messages")
}
