package group

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShardStats is one __consumer_offsets partition the broker leads, as its
// coordinator serves it.
type ShardStats struct {
	Partition   int32
	LeaderEpoch int32
	// Loading is true until the partition has been read: its groups
	// answer COORDINATOR_LOAD_IN_PROGRESS meanwhile.
	Loading bool
	Groups  []GroupStats
}

// GroupStats is one group as its coordinator holds it.
type GroupStats struct {
	ID string
	// Type is the group's protocol: classic, or consumer (KIP-848).
	Type GroupType
	// State is a classic group's state; ConsumerState a consumer
	// group's. StateName names whichever the group has.
	State         State
	ConsumerState ConsumerState
	ProtocolType  string
	// Protocol is the selected protocol (the consumers' assignor), ""
	// when none; a consumer group's server assignor.
	Protocol string
	// Generation is a classic group's generation, a consumer group's
	// group epoch.
	Generation int32
	// Leader is the leader's member id, "" when none.
	Leader  string
	Members []MemberStats
	// Offsets are the committed offsets, by topic and partition.
	Offsets []OffsetStats
}

// MemberStats is one member of a group.
type MemberStats struct {
	MemberID, ClientID, ClientHost string
	// InstanceID is the static member's group.instance.id, "" for a
	// dynamic member.
	InstanceID string
	// Assigned are the partitions the consumer protocol's assignment
	// gives the member; nil unless the group is Stable with the
	// "consumer" protocol type (others' assignments are opaque bytes).
	Assigned []TopicPartition
}

// StateName is the group's state as ListGroups names it.
func (g GroupStats) StateName() string {
	if g.Type == ConsumerGroupType {
		return g.ConsumerState.String()
	}
	return g.State.String()
}

// OffsetStats is one committed offset.
type OffsetStats struct {
	TopicPartition
	Offset      int64
	LeaderEpoch int32
}

// Stats describes the shards the coordinator serves, by partition, and
// their groups by id: what a screen shows of the groups, read under each
// shard's lock so that every group is seen whole.
func (c *Coordinator) Stats() []ShardStats {
	shards := c.allShards()
	out := make([]ShardStats, 0, len(shards))
	for _, s := range shards {
		out = append(out, s.stats())
	}
	slices.SortFunc(out, func(a, b ShardStats) int { return cmp.Compare(a.Partition, b.Partition) })
	return out
}

func (s *shard) stats() ShardStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ShardStats{Partition: s.partition, LeaderEpoch: s.epoch, Loading: !s.loaded}
	if !s.loaded || s.dead {
		return st
	}
	ids := make([]string, 0, len(s.groups)+len(s.cgroups)+len(s.offsets))
	for id := range s.groups {
		ids = append(ids, id)
	}
	for id := range s.cgroups {
		ids = append(ids, id)
	}
	for id := range s.offsets {
		if s.groups[id] == nil && s.cgroups[id] == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		gs := GroupStats{ID: id, Type: ClassicGroupType, State: Empty}
		if g := s.cgroups[id]; g != nil {
			gs.Type, gs.ConsumerState, gs.ProtocolType = ConsumerGroupType, g.State(), ConsumerProtocolType
			gs.Protocol, gs.Generation = g.preferredAssignor(), g.epoch
			topics := s.c.topics()
			for _, m := range g.sortedMembers() {
				ms := MemberStats{MemberID: m.id, ClientID: m.sub.ClientID, ClientHost: m.sub.ClientHost}
				if m.sub.InstanceID != nil {
					ms.InstanceID = *m.sub.InstanceID
				}
				for _, tp := range sortedParts(m.assigned) {
					if t, ok := topics.ByID(tp.topic); ok {
						ms.Assigned = append(ms.Assigned, TopicPartition{Topic: t.Name, Partition: tp.partition})
					}
				}
				slices.SortFunc(ms.Assigned, func(a, b TopicPartition) int {
					return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
				})
				gs.Members = append(gs.Members, ms)
			}
		}
		if g := s.groups[id]; g != nil {
			gs.State, gs.ProtocolType, gs.Protocol = g.State(), g.ProtocolType(), g.Protocol()
			gs.Generation, gs.Leader = g.Generation(), g.Leader()
			for _, m := range g.Members() {
				ms := MemberStats{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost}
				if m.InstanceID != nil {
					ms.InstanceID = *m.InstanceID
				}
				if gs.ProtocolType == ConsumerProtocolType {
					ms.Assigned = consumerAssignment(m.Assignment)
				}
				gs.Members = append(gs.Members, ms)
			}
		}
		for tp, o := range s.offsets[id] {
			gs.Offsets = append(gs.Offsets, OffsetStats{TopicPartition: tp, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch})
		}
		slices.SortFunc(gs.Offsets, func(a, b OffsetStats) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		st.Groups = append(st.Groups, gs)
	}
	return st
}

// consumerAssignment decodes the consumer protocol's assignment, sorted;
// nil when there is none or it does not decode (the leader's bytes are
// the client's business: a bad one is the members' to reject).
func consumerAssignment(b []byte) []TopicPartition {
	if len(b) == 0 {
		return nil
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(b); err != nil {
		return nil
	}
	var out []TopicPartition
	for _, t := range a.Topics {
		for _, p := range t.Partitions {
			out = append(out, TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
