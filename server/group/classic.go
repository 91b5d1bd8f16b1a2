package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timing is what a group's timers take from the broker's settings.
type Timing struct {
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms: the first
	// rebalance of an empty group waits this long for more members,
	// again for each that joined meanwhile, up to the rebalance timeout.
	InitialRebalanceDelay time.Duration
	// ConsumerSessionTimeout is group.consumer.session.timeout.ms: a
	// consumer group member that sends no heartbeat for this long is
	// fenced.
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms:
	// how often a consumer group member heartbeats.
	ConsumerHeartbeatInterval time.Duration
}

// JoinParams is one JoinGroup of one member.
type JoinParams struct {
	// MemberID is "" for a member new to the group.
	MemberID         string
	InstanceID       *string
	ClientID, Host   string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	ProtocolType     string
	Protocols        []Protocol
	// RequireKnownMemberID is JoinGroup v4+: a new member is given its id
	// with MEMBER_ID_REQUIRED and must join again with it.
	RequireKnownMemberID bool
	// NewMemberID is the id a new member gets.
	NewMemberID string
}

// JoinResult answers a JoinGroup.
type JoinResult struct {
	Code         int16
	Generation   int32
	ProtocolType string
	// Protocol is the selected protocol, "" when none.
	Protocol string
	Leader   string
	MemberID string
	// Members is the members with their metadata, for the leader only.
	Members []kmsg.JoinGroupResponseMember
	// SkipAssignment tells a static leader that rejoined a Stable group
	// not to assign again.
	SkipAssignment bool
}

// SyncResult answers a SyncGroup.
type SyncResult struct {
	Code         int16
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// Store is a group metadata record the group asks its shard to write;
// the shard hands the outcome back to Stored.
type Store struct {
	Value      *kmsg.GroupMetadataValue
	generation int32
	// sync marks the store of a leader's assignment, which the members'
	// SyncGroups wait for.
	sync        bool
	assignments map[string][]byte
}

// Group is one classic group (Kafka's ClassicGroup with the classic
// protocol's handling in GroupMetadataManager). It reads no clock: every
// call takes the time, and NextDeadline says when Tick must run next. It
// is not safe for concurrent use; its shard serialises it. Answers go to
// the respond functions the calls were given, from within a later call
// when they must wait (a JoinGroup until the rebalance completes).
type Group struct {
	id         string
	timing     Timing
	state      State
	stateSince time.Time
	generation int32
	// protocolType is the members' protocol type ("consumer"), set by
	// the first member of an empty group and kept once it empties; ""
	// for a group no member ever joined.
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	// order is the members' ids in the order they joined.
	order []string
	// static maps each static member's group.instance.id (KIP-345) to
	// its member id.
	static map[string]string
	// pending are the new members given an id (MEMBER_ID_REQUIRED) that
	// have not joined with it yet, each with its deadline.
	pending map[string]time.Time
	// joinDeadline ends the current PreparingRebalance; zero otherwise.
	joinDeadline time.Time
	// initialDelay marks a rebalance of an empty group still in its
	// initial delay, which may extend until initialDeadline;
	// joinedDuringDelay says a member joined since the delay was last
	// extended.
	initialDelay      bool
	initialDeadline   time.Time
	joinedDuringDelay bool
	stores            []*Store
	// syncStoring says the leader's assignment of this generation is
	// being stored.
	syncStoring bool
}

// NewGroup is an empty group.
func NewGroup(id string, timing Timing, now time.Time) *Group {
	return &Group{id: id, timing: timing, stateSince: now, members: map[string]*member{}, pending: map[string]time.Time{}, static: map[string]string{}}
}

// ID is the group's id.
func (g *Group) ID() string { return g.id }

// State is the group's state.
func (g *Group) State() State { return g.state }

// Generation is the group's generation.
func (g *Group) Generation() int32 { return g.generation }

// ProtocolType is the members' protocol type, "" when none.
func (g *Group) ProtocolType() string { return g.protocolType }

// Protocol is the selected protocol, "" when none.
func (g *Group) Protocol() string { return g.protocol }

// Leader is the leader's member id, "" when none.
func (g *Group) Leader() string { return g.leader }

// Members describes the members, in the order they joined, as Kafka's
// DescribeGroups shows them: each with its assignment (the one last
// synced, kept through a rebalance until a SyncGroup replaces it or a
// failed one drops it), and with its metadata of the chosen protocol only
// while the group is Stable (ClassicGroupMember.describeNoMetadata).
func (g *Group) Members() []MemberDescription {
	out := make([]MemberDescription, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		d := MemberDescription{MemberID: m.id, ClientID: m.clientID, ClientHost: m.host, InstanceID: m.instanceID, Assignment: m.assignment}
		if g.state == Stable { // the metadata of the protocol chosen, which only a stable group has
			d.Metadata = m.metadataFor(g.protocol)
		}
		out = append(out, d)
	}
	return out
}

// HasMember reports whether id is a member.
func (g *Group) HasMember(id string) bool { return g.members[id] != nil }

// TakeStores returns the records the group asked to write since the
// last call, in order.
func (g *Group) TakeStores() []*Store {
	s := g.stores
	g.stores = nil
	return s
}

func (g *Group) transition(s State, now time.Time) {
	g.state, g.stateSince = s, now
}

// metadataValue is the group as GroupMetadataValue stores it.
func (g *Group) metadataValue(now time.Time) *kmsg.GroupMetadataValue {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.ProtocolType, v.Generation, v.CurrentStateTimestamp = g.protocolType, g.generation, now.UnixMilli()
	if g.protocol != "" {
		v.Protocol = kmsg.StringPtr(g.protocol)
	}
	if g.leader != "" {
		v.Leader = kmsg.StringPtr(g.leader)
	}
	for _, id := range g.order {
		v.Members = append(v.Members, g.members[id].metadataValue(g.protocol))
	}
	return v
}

// Delete marks the group dead: every member waiting is answered with
// code (NOT_COORDINATOR when its shard is unloaded).
func (g *Group) Delete(code int16) {
	for _, id := range slices.Clone(g.order) {
		g.removeMember(id, code)
	}
	g.pending, g.static = map[string]time.Time{}, map[string]string{}
	g.transition(Dead, g.stateSince)
}

// Restore is a group loaded from its last GroupMetadataValue: Stable with
// its members, whose sessions start at now, or Empty.
func Restore(id string, timing Timing, v *kmsg.GroupMetadataValue, now time.Time) *Group {
	g := NewGroup(id, timing, now)
	g.generation, g.protocolType = v.Generation, v.ProtocolType
	if len(v.Members) == 0 {
		return g
	}
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	for _, vm := range v.Members {
		m := &member{id: vm.MemberID, instanceID: vm.InstanceID, clientID: vm.ClientID, host: vm.ClientHost,
			sessionTimeout: time.Duration(vm.SessionTimeoutMillis) * time.Millisecond, rebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			protocols: []Protocol{{Name: g.protocol, Metadata: vm.Subscription}}, assignment: vm.Assignment}
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
		g.members[m.id] = m
		g.order = append(g.order, m.id)
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	if v.Leader != nil && g.members[*v.Leader] != nil {
		g.leader = *v.Leader
	} else {
		g.leader = g.order[0]
	}
	g.transition(Stable, now)
	return g
}

// HasPending reports whether new members were given an id they have not
// joined with yet.
func (g *Group) HasPending() bool { return len(g.pending) > 0 }

// IsEmpty reports whether the group is in state Empty, so that
// DeleteGroups may delete it.
func (g *Group) IsEmpty() bool { return g.state == Empty }

// Unused reports whether the group never got anywhere: Empty, never
// given a generation, with nobody waiting and nothing to store. A
// JoinGroup that was never followed up leaves such a group, which the
// coordinator drops so that made-up group ids cannot pile up.
func (g *Group) Unused() bool {
	return g.state == Empty && g.generation == 0 && len(g.members) == 0 && len(g.pending) == 0 && len(g.stores) == 0
}
