package group

import (
	"time"
)

// loadedConsumerGroup is what a load replayed of one consumer group.
type loadedConsumerGroup struct {
	epoch, assignmentEpoch int32
	members                map[string]*loadedMember
}

type loadedMember struct {
	sub     *MemberSubscription
	target  []TopicPartitions
	current *MemberAssignment
}

// replayConsumer applies one consumer group record (Kafka's replay of
// the consumer group records): the last value of each key wins; the
// group epoch's tombstone deletes the group.
func (st *loadState) replayConsumer(c *ConsumerRecord) {
	g := st.consumer[c.Group]
	if c.Type == ConsumerGroupMetadataType && c.Tombstone {
		delete(st.consumer, c.Group)
		return
	}
	if g == nil {
		if c.Tombstone {
			return
		}
		g = &loadedConsumerGroup{members: map[string]*loadedMember{}}
		st.consumer[c.Group] = g
	}
	m := g.members[c.MemberID]
	if m == nil && c.MemberID != "" {
		m = &loadedMember{}
		g.members[c.MemberID] = m
	}
	switch c.Type {
	case ConsumerGroupMetadataType:
		g.epoch = c.Epoch
	case ConsumerGroupTargetAssignmentMetadataType:
		if !c.Tombstone {
			g.assignmentEpoch = c.Epoch
		}
	case ConsumerGroupMemberMetadataType:
		m.sub = c.Subscription
	case ConsumerGroupTargetAssignmentMemberType:
		m.target = c.Target
		if c.Tombstone {
			m.target = nil
		}
	case ConsumerGroupCurrentMemberAssignmentType:
		m.current = c.Current
	}
	if m != nil && m.sub == nil && m.target == nil && m.current == nil {
		delete(g.members, c.MemberID)
	}
}

// consumerGroups are the loaded consumer groups, their members' sessions
// starting at now.
func (st *loadState) consumerGroups(t Timing, now time.Time) map[string]*ConsumerGroup {
	out := map[string]*ConsumerGroup{}
	for id, lg := range st.consumer {
		out[id] = restoreConsumerGroup(id, t, lg, now)
	}
	return out
}

// restoreConsumerGroup is a consumer group as its records left it; what
// it holds is already in the log.
func restoreConsumerGroup(id string, t Timing, lg *loadedConsumerGroup, now time.Time) *ConsumerGroup {
	g := NewConsumerGroup(id, t)
	g.epoch, g.assignmentEpoch = lg.epoch, lg.assignmentEpoch
	g.hashUnknown = true
	for mid, lm := range lg.members {
		if lm.sub == nil {
			continue // a member is its subscription; the rest alone is a leftover
		}
		m := &cmember{id: mid, sub: *lm.sub, assigned: partSet{}, revoking: partSet{}, target: partSetOf(lm.target), since: map[idPartition]int32{}}
		if lm.current != nil {
			m.epoch, m.prevEpoch, m.state = lm.current.MemberEpoch, lm.current.PreviousMemberEpoch, lm.current.State
			m.assigned, m.revoking = partSetOf(lm.current.Assigned), partSetOf(lm.current.PendingRevocation)
			epochsOf(lm.current.Assigned, m.epoch, m.since)
			epochsOf(lm.current.PendingRevocation, m.epoch, m.since)
		}
		m.sessionDeadline = now.Add(t.ConsumerSessionTimeout)
		if m.state == MemberUnrevokedPartitions {
			m.revokeDeadline = now.Add(time.Duration(max(m.sub.RebalanceTimeoutMs, 0)) * time.Millisecond)
		}
		g.members[mid] = m
		if m.sub.InstanceID != nil {
			g.static[*m.sub.InstanceID] = mid
		}
	}
	// What the log holds, so that only changes are written again.
	g.TakeRecords()
	return g
}
