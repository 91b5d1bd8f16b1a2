package attach

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Kinds of the events only attaching sees.
const (
	// EventUnreachable: a node stopped answering kraftlab's polls.
	EventUnreachable cluster.EventKind = "node-unreachable"
	// EventReachable: a node answers again.
	EventReachable cluster.EventKind = "node-reachable"
	// EventBrokerGone: a broker is no longer registered.
	EventBrokerGone cluster.EventKind = "broker-unregistered"
)

// leadership is the last leader and epoch polls saw, kept across polls
// that saw none.
type leadership struct{ leader, epoch int32 }

// infer turns what changed from prev to cur into events, each marked as
// inferred: nobody reported them, two polls differ. last is the
// leadership seen before, which infer updates.
func infer(prev, cur *view.View, last *leadership) []cluster.Event {
	var out []cluster.Event
	add := func(kind cluster.EventKind, node, epoch int32, format string, args ...any) {
		out = append(out, cluster.Event{Kind: kind, Node: node, Epoch: epoch, Message: fmt.Sprintf(format, args...), Inferred: true})
	}
	switch {
	case cur.LeaderID != view.NoLeader && cur.LeaderEpoch != last.epoch && last.epoch >= 0:
		add(cluster.EventElection, cur.LeaderID, cur.LeaderEpoch, "epoch %d → %d: a new leader, %d", last.epoch, cur.LeaderEpoch, cur.LeaderID)
	case cur.LeaderID != view.NoLeader && cur.LeaderEpoch != last.epoch:
		add(cluster.EventElection, cur.LeaderID, cur.LeaderEpoch, "epoch %d: leader %d", cur.LeaderEpoch, cur.LeaderID)
	case cur.LeaderID == view.NoLeader && prev.LeaderID != view.NoLeader:
		add(cluster.EventElection, 0, prev.LeaderEpoch, "no leader of the metadata quorum answers (leader %d in epoch %d before)", prev.LeaderID, prev.LeaderEpoch)
	}
	if cur.LeaderID != view.NoLeader {
		*last = leadership{cur.LeaderID, cur.LeaderEpoch}
	}
	brokersRead := read(prev, partBrokers) && read(cur, partBrokers)
	before := map[int32]*view.Node{}
	for i := range prev.Nodes {
		before[prev.Nodes[i].ID] = &prev.Nodes[i]
	}
	for i := range cur.Nodes {
		n := &cur.Nodes[i]
		o := before[n.ID]
		delete(before, n.ID)
		if o == nil {
			if n.Broker != nil && brokersRead {
				add(cluster.EventBrokerRegistered, n.ID, 0, "broker %d registered, at %s", n.ID, n.Listener)
			}
			continue
		}
		switch {
		case o.State == view.StateRunning && n.State == view.StateUnreachable:
			add(EventUnreachable, n.ID, 0, "%s %d does not answer", n.Kind, n.ID)
		case o.State == view.StateUnreachable && n.State == view.StateRunning:
			add(EventReachable, n.ID, 0, "%s %d answers again", n.Kind, n.ID)
		}
		if brokersRead && n.Broker != nil && o.Broker != nil && n.Broker.Fenced != o.Broker.Fenced {
			if n.Broker.Fenced {
				add(cluster.EventBrokerFenced, n.ID, 0, "broker %d is fenced", n.ID)
			} else {
				add(cluster.EventBrokerUnfenced, n.ID, 0, "broker %d is unfenced", n.ID)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(before)) {
		switch {
		case before[id].Broker == nil || !brokersRead:
		case cur.Attached != nil && !cur.Attached.FencedListed:
			add(EventBrokerGone, id, 0, "broker %d is no longer listed: fenced or gone (DescribeCluster before v2 leaves fenced brokers out)", id)
		default:
			add(EventBrokerGone, id, 0, "broker %d is no longer registered", id)
		}
	}
	if read(prev, partTopics) && read(cur, partTopics) {
		inferTopics(prev, cur, add)
	}
	return out
}

// read says v's poll read part; a view not from a poll read it all.
func read(v *view.View, part string) bool {
	return v.Attached == nil || !slices.Contains(v.Attached.Unread, part)
}

func inferTopics(prev, cur *view.View, add func(cluster.EventKind, int32, int32, string, ...any)) {
	was := map[string]*view.Topic{}
	for i := range prev.Topics {
		was[prev.Topics[i].Name] = &prev.Topics[i]
	}
	for i := range cur.Topics {
		t := &cur.Topics[i]
		o := was[t.Name]
		delete(was, t.Name)
		if o == nil {
			add(cluster.EventTopicCreated, 0, 0, "topic %s created: %d partitions", t.Name, len(t.Partitions))
			continue
		}
		old := map[int32]*view.Partition{}
		for j := range o.Partitions {
			old[o.Partitions[j].Partition] = &o.Partitions[j]
		}
		for j := range t.Partitions {
			p, q := &t.Partitions[j], old[t.Partitions[j].Partition]
			if q == nil {
				add(cluster.EventPartitionChange, 0, 0, "%s-%d added: %s", t.Name, p.Partition, p.Summary())
				continue
			}
			elr := p.Elr != nil && q.Elr != nil && !slices.Equal(p.Elr, q.Elr) // nil: not read
			if p.Leader != q.Leader || p.LeaderEpoch != q.LeaderEpoch || !slices.Equal(p.Isr, q.Isr) || elr {
				add(cluster.EventPartitionChange, max(p.Leader, 0), 0, "%s-%d: %s (was %s)", t.Name, p.Partition, p.Summary(), q.Summary())
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(was)) {
		add(cluster.EventTopicDeleted, 0, 0, "topic %s deleted", name)
	}
}
