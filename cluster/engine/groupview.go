package engine

import (
	"cmp"
	"slices"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/server/group"
)

// brokerGroups are the running brokers' group coordinators' snapshots, by
// broker.
func (e *engine) brokerGroups() map[int32][]group.ShardStats {
	out := make(map[int32][]group.ShardStats)
	for _, n := range e.all() {
		if n.kind != view.KindBroker || !n.srv.Running() {
			continue
		}
		if b := n.srv.BrokerServer(); b != nil {
			if c := b.GroupCoordinator(); c != nil {
				out[n.id] = c.Stats()
			}
		}
	}
	return out
}

// groupViews fills each running broker's coordinator shards and the
// groups they serve, with each committed offset's lag behind its
// partition's high watermark. A broker that still serves a partition the
// committed metadata gave another (it has not applied the change yet)
// does not count: the group is the current leader's.
func groupViews(v *view.View, shards map[int32][]group.ShardStats) {
	offsetsLeader := map[int32]int32{}
	if t, ok := v.Topic(view.OffsetsTopic); ok {
		for _, p := range t.Partitions {
			offsetsLeader[p.Partition] = p.Leader
		}
	}
	for i := range v.Nodes {
		nv := &v.Nodes[i]
		if nv.Broker == nil {
			continue
		}
		for _, s := range shards[nv.ID] {
			nv.Broker.Coordinating = append(nv.Broker.Coordinating, view.CoordinatorShard{
				Partition: s.Partition, LeaderEpoch: s.LeaderEpoch, Loading: s.Loading, Groups: len(s.Groups),
			})
			if leader, ok := offsetsLeader[s.Partition]; !ok || leader != nv.ID {
				continue
			}
			for _, g := range s.Groups {
				v.Groups = append(v.Groups, groupView(v, nv.ID, s.Partition, g))
			}
		}
	}
	slices.SortFunc(v.Groups, func(a, b view.Group) int { return cmp.Compare(a.ID, b.ID) })
}

func groupView(v *view.View, coordinator, partition int32, g group.GroupStats) view.Group {
	gv := view.Group{
		ID: g.ID, Coordinator: coordinator, OffsetsPartition: partition, State: view.GroupState(g.StateName()),
		ProtocolType: g.ProtocolType, Protocol: g.Protocol, Generation: g.Generation, Leader: g.Leader,
		Members: make([]view.GroupMember, 0, len(g.Members)), Offsets: make([]view.GroupOffset, 0, len(g.Offsets)),
	}
	if g.Type == group.ConsumerGroupType {
		gv.Type = string(g.Type)
	}
	for _, m := range g.Members {
		mv := view.GroupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assigned: []view.TopicPartition{}}
		for _, tp := range m.Assigned {
			mv.Assigned = append(mv.Assigned, view.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
		}
		gv.Members = append(gv.Members, mv)
	}
	for _, o := range g.Offsets {
		ov := view.GroupOffset{Topic: o.Topic, Partition: o.Partition, Committed: o.Offset, LeaderEpoch: o.LeaderEpoch, HighWatermark: -1, Lag: -1}
		if p, ok := v.Partition(o.Topic, o.Partition); ok && p.HighWatermark >= 0 {
			ov.HighWatermark = p.HighWatermark
			ov.Lag = p.HighWatermark - o.Offset
		}
		gv.Offsets = append(gv.Offsets, ov)
	}
	return gv
}
