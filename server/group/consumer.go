package group

import (
	"maps"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// GroupType is which protocol a group speaks, as ListGroups v5 names it.
type GroupType string

// The group types this coordinator serves.
const (
	ClassicGroupType  GroupType = "classic"
	ConsumerGroupType GroupType = "consumer"
)

// ConsumerState is a consumer group's state (Kafka's ConsumerGroupState).
type ConsumerState int8

// The states of a consumer group.
const (
	// ConsumerEmpty has no members.
	ConsumerEmpty ConsumerState = iota
	// ConsumerAssigning has a group epoch the target assignment has not
	// caught up with (never for long here: the assignor runs at once).
	ConsumerAssigning
	// ConsumerReconciling has members not yet at the target assignment.
	ConsumerReconciling
	// ConsumerStable has every member at the target assignment.
	ConsumerStable
	// ConsumerDead has been deleted, or unloaded.
	ConsumerDead
)

// String is the state's name as Kafka's ListGroups and
// ConsumerGroupDescribe give it.
func (s ConsumerState) String() string {
	switch s {
	case ConsumerEmpty:
		return "Empty"
	case ConsumerAssigning:
		return "Assigning"
	case ConsumerReconciling:
		return "Reconciling"
	case ConsumerStable:
		return "Stable"
	case ConsumerDead:
		return "Dead"
	}
	return "Unknown"
}

// MemberState is a consumer group member's reconciliation state (Kafka's
// MemberState), as its current assignment record stores it.
type MemberState int8

// The states of a member.
const (
	// MemberStable has its epoch's assignment.
	MemberStable MemberState = 0
	// MemberUnrevokedPartitions waits for the member to revoke partitions.
	MemberUnrevokedPartitions MemberState = 1
	// MemberUnreleasedPartitions waits for other members to release
	// partitions this one is to get.
	MemberUnreleasedPartitions MemberState = 2
)

// idPartition is one partition of a topic named by its id.
type idPartition struct {
	topic     [16]byte
	partition int32
}

// partSet is a set of partitions.
type partSet map[idPartition]struct{}

// TopicInfo is a topic as the broker's metadata has it.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// Topics is the broker's topic metadata, as a consumer group's assignor
// and its responses need it.
type Topics interface {
	// ByName is the topic named name.
	ByName(name string) (TopicInfo, bool)
	// ByID is the topic of id.
	ByID(id [16]byte) (TopicInfo, bool)
	// Names are every topic's name, for regular expressions.
	Names() []string
}

// cmember is one member of a consumer group (Kafka's
// ConsumerGroupMember).
type cmember struct {
	id                 string
	sub                MemberSubscription
	epoch, prevEpoch   int32
	state              MemberState
	assigned, revoking partSet
	// since is the epoch at which each partition assigned or pending
	// revocation was assigned to the member: a commit at an older member
	// epoch passes for the partitions it had then.
	since           map[idPartition]int32
	target          partSet
	sessionDeadline time.Time
	// revokeDeadline is when a member asked to revoke partitions is
	// fenced if it has not (its rebalance timeout); zero otherwise.
	revokeDeadline time.Time
}

// written is what the log holds of one member, to write only changes.
type written struct {
	sub, target, current []byte
}

// ConsumerGroup is one group of the consumer protocol (KIP-848; Kafka's
// ConsumerGroup with GroupMetadataManager's consumerGroupHeartbeat). As
// Group it reads no clock and writes nothing: each call takes the time,
// NextDeadline says when Tick must run, and TakeRecords hands the shard
// the records that persist what changed.
type ConsumerGroup struct {
	id              string
	timing          Timing
	epoch           int32
	assignmentEpoch int32
	members         map[string]*cmember
	// static maps each static member's instance id to its member id.
	static map[string]string
	// metaHash is the subscribed topics' metadata the target assignment
	// was computed with: a topic created, deleted or grown bumps the
	// group epoch.
	metaHash uint64
	// hashUnknown says metaHash is not known yet (a loaded group): the
	// next heartbeat takes the topics as they are.
	hashUnknown bool
	dead        bool

	// What the log holds: the epochs and each member's records.
	stored                   bool
	storedEpoch, storedAssgn int32
	storedMembers            map[string]written
}

// NewConsumerGroup is an empty consumer group.
func NewConsumerGroup(id string, timing Timing) *ConsumerGroup {
	return &ConsumerGroup{id: id, timing: timing, members: map[string]*cmember{}, static: map[string]string{}, storedMembers: map[string]written{}}
}

// ID is the group's id.
func (g *ConsumerGroup) ID() string { return g.id }

// Epoch is the group epoch.
func (g *ConsumerGroup) Epoch() int32 { return g.epoch }

// AssignmentEpoch is the target assignment's epoch.
func (g *ConsumerGroup) AssignmentEpoch() int32 { return g.assignmentEpoch }

// State is the group's state (Kafka's ConsumerGroup.state).
func (g *ConsumerGroup) State() ConsumerState {
	switch {
	case g.dead:
		return ConsumerDead
	case len(g.members) == 0:
		return ConsumerEmpty
	case g.epoch > g.assignmentEpoch:
		return ConsumerAssigning
	}
	for _, m := range g.members {
		if m.epoch != g.assignmentEpoch || m.state != MemberStable {
			return ConsumerReconciling
		}
	}
	return ConsumerStable
}

// IsEmpty reports whether the group has no members.
func (g *ConsumerGroup) IsEmpty() bool { return len(g.members) == 0 }

// subscribedTopicNames are the topics the members subscribe to, by name
// or by regular expression (Kafka's isSubscribedToTopic); never nil.
func (g *ConsumerGroup) subscribedTopicNames(topics Topics) []string {
	out := []string{}
	for _, m := range g.members {
		out = append(out, m.sub.Topics...)
		for _, t := range subscribedTopics(m, topics) {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedMembers are the members in member id order.
func (g *ConsumerGroup) sortedMembers() []*cmember {
	out := make([]*cmember, 0, len(g.members))
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		out = append(out, g.members[id])
	}
	return out
}

// HasMember reports whether id is a member.
func (g *ConsumerGroup) HasMember(id string) bool { return g.members[id] != nil }

// NextDeadline is when Tick must run next; zero if no timer is due.
func (g *ConsumerGroup) NextDeadline() time.Time {
	var d time.Time
	for _, m := range g.members {
		for _, t := range []time.Time{m.sessionDeadline, m.revokeDeadline} {
			if !t.IsZero() && (d.IsZero() || t.Before(d)) {
				d = t
			}
		}
	}
	return d
}

// Tick fences the members whose session expired and those that did not
// revoke their partitions within their rebalance timeout.
func (g *ConsumerGroup) Tick(now time.Time, topics Topics) {
	if g.dead {
		return
	}
	gone := false
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		m := g.members[id]
		if !now.Before(m.sessionDeadline) || (!m.revokeDeadline.IsZero() && !now.Before(m.revokeDeadline)) {
			g.removeMember(id)
			gone = true
		}
	}
	if gone {
		g.epoch++
		g.updateTarget(topics)
	}
}

// removeMember drops a member, freeing its partitions.
func (g *ConsumerGroup) removeMember(id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	if m.sub.InstanceID != nil && g.static[*m.sub.InstanceID] == id {
		delete(g.static, *m.sub.InstanceID)
	}
	delete(g.members, id)
}

// Delete marks the group dead.
func (g *ConsumerGroup) Delete() { g.dead = true }

// owner is the member that holds tp, assigned or still to revoke; "" if
// none.
func (g *ConsumerGroup) owned(tp idPartition, except string) bool {
	for id, m := range g.members {
		if id == except {
			continue
		}
		if _, ok := m.assigned[tp]; ok {
			return true
		}
		if _, ok := m.revoking[tp]; ok {
			return true
		}
	}
	return false
}

// subscriptionValue is the member's subscription as its record holds it.
func (m *cmember) subscriptionValue() *MemberSubscription {
	s := m.sub
	if s.Topics == nil {
		s.Topics = []string{}
	}
	return &s
}

func (m *cmember) assignmentValue() *MemberAssignment {
	return &MemberAssignment{MemberEpoch: m.epoch, PreviousMemberEpoch: m.prevEpoch, State: m.state,
		Assigned:          withEpochs(sortedTopicPartitions(m.assigned), m.since, m.epoch),
		PendingRevocation: withEpochs(sortedTopicPartitions(m.revoking), m.since, m.epoch)}
}

// TakeRecords are the records that bring the log to the group's state:
// a member's records when it changed, tombstones for the members gone
// and the group's epochs, in the order Kafka writes them (a member's
// subscription before the group epoch it bumped, the target assignment
// before its epoch, current assignments last); for a deleted group the
// tombstones of everything.
func (g *ConsumerGroup) TakeRecords() []storage.Record {
	var subs, targets, currents, gone []storage.Record
	ids := slices.Sorted(maps.Keys(g.storedMembers))
	for _, id := range ids {
		if g.members[id] == nil || g.dead {
			gone = append(gone,
				ConsumerGroupCurrentRecord(g.id, id, nil),
				ConsumerGroupTargetMemberRecord(g.id, id, nil, true),
				ConsumerGroupMemberRecord(g.id, id, nil))
			delete(g.storedMembers, id)
		}
	}
	if !g.dead {
		for _, id := range slices.Sorted(maps.Keys(g.members)) {
			m := g.members[id]
			w := g.storedMembers[id]
			sub := ConsumerGroupMemberRecord(g.id, id, m.subscriptionValue())
			tgt := ConsumerGroupTargetMemberRecord(g.id, id, sortedTopicPartitions(m.target), false)
			cur := ConsumerGroupCurrentRecord(g.id, id, m.assignmentValue())
			if string(sub.Value) != string(w.sub) {
				subs = append(subs, sub)
				w.sub = sub.Value
			}
			if string(tgt.Value) != string(w.target) {
				targets = append(targets, tgt)
				w.target = tgt.Value
			}
			if string(cur.Value) != string(w.current) {
				currents = append(currents, cur)
				w.current = cur.Value
			}
			g.storedMembers[id] = w
		}
	}
	var out []storage.Record
	out = append(out, gone...)
	out = append(out, subs...)
	if g.dead {
		if g.stored {
			out = append(out, ConsumerGroupTargetMetadataRecord(g.id, 0, true), ConsumerGroupMetadataRecord(g.id, 0, true))
			g.stored = false
		}
		return out
	}
	if !g.stored || g.storedEpoch != g.epoch {
		out = append(out, ConsumerGroupMetadataRecord(g.id, g.epoch, false))
	}
	out = append(out, targets...)
	if !g.stored || g.storedAssgn != g.assignmentEpoch {
		out = append(out, ConsumerGroupTargetMetadataRecord(g.id, g.assignmentEpoch, false))
	}
	out = append(out, currents...)
	g.stored, g.storedEpoch, g.storedAssgn = true, g.epoch, g.assignmentEpoch
	return out
}

// ValidateCommit checks an OffsetCommit to the group (Kafka's
// ConsumerGroup.validateOffsetCommit): one without a member epoch only
// while the group is empty, else from a member in OffsetCommit v9 or
// later, at its epoch or, partition by partition, at an older epoch no
// older than the one the partition was assigned at (the partition
// function; nil when every partition passes).
func (g *ConsumerGroup) ValidateCommit(memberID string, epoch int32, version int16) (int16, func(topic [16]byte, partition int32) int16) {
	if g.dead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	if epoch < 0 && len(g.members) == 0 {
		return 0, nil
	}
	m := g.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code, nil
	case version < 9:
		return kerr.UnsupportedVersion.Code, nil
	case epoch == m.epoch:
		return 0, nil
	case epoch > m.epoch:
		return kerr.StaleMemberEpoch.Code, nil
	}
	return 0, func(topic [16]byte, partition int32) int16 {
		tp := idPartition{topic, partition}
		_, assigned := m.assigned[tp]
		_, revoking := m.revoking[tp]
		since, ok := m.since[tp]
		if !ok {
			since = m.epoch
		}
		if (!assigned && !revoking) || epoch < since {
			return kerr.StaleMemberEpoch.Code
		}
		return 0
	}
}

// ValidateFetch checks an OffsetFetch v9+ naming a member (Kafka's
// ConsumerGroup.validateOffsetFetch): one without a member id and epoch
// passes; a member must be at its epoch.
func (g *ConsumerGroup) ValidateFetch(memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	if memberID == nil || g.members[*memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	if g.members[*memberID].epoch != epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}
