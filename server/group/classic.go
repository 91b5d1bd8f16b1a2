package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timing is what a group's timers take from the broker's settings.
type Timing struct {
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms: the first
	// rebalance of an empty group waits this long for more members,
	// again for each that joined meanwhile, up to the rebalance timeout.
	InitialRebalanceDelay time.Duration
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
	// protocolType is the members' protocol type ("consumer"); "" while
	// the group has none.
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

// Members describes the members, in the order they joined; their
// metadata and assignments only while the group is Stable, as Kafka's
// DescribeGroups shows them.
func (g *Group) Members() []MemberDescription {
	out := make([]MemberDescription, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		d := MemberDescription{MemberID: m.id, ClientID: m.clientID, ClientHost: m.host, InstanceID: m.instanceID}
		if g.state == Stable {
			d.Metadata, d.Assignment = m.metadataFor(g.protocol), m.assignment
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

// Join handles a JoinGroup (Kafka's classicGroupJoin), answering through
// respond now or once the rebalance completes. The caller has checked
// the group id and the session timeout's bounds.
func (g *Group) Join(now time.Time, p JoinParams, respond func(JoinResult)) {
	fail := func(code int16) { respond(JoinResult{Code: code, MemberID: p.MemberID, Generation: -1}) }
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	if !g.acceptsProtocols(p.ProtocolType, p.Protocols) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	if p.InstanceID != nil {
		if old, ok := g.static[*p.InstanceID]; ok && p.MemberID != "" && p.MemberID != old {
			fail(kerr.FencedInstanceID.Code)
			return
		}
		if p.MemberID == "" {
			g.joinStatic(now, p, respond)
			return
		}
	}
	if p.MemberID == "" {
		g.joinNew(now, p, respond)
		return
	}
	if _, ok := g.pending[p.MemberID]; ok {
		delete(g.pending, p.MemberID)
		g.addMember(now, p, p.MemberID, respond)
		return
	}
	m := g.members[p.MemberID]
	if m == nil {
		fail(kerr.UnknownMemberID.Code)
		return
	}
	switch g.state {
	case PreparingRebalance:
		g.updateMember(now, m, p, respond)
		g.maybeCompleteJoin(now)
	case CompletingRebalance, Stable:
		if g.state == Stable && m.id == g.leader || !m.sameProtocols(p.Protocols) {
			// The leader rejoins to trigger a rebalance (a change of
			// subscription), as does a member with new metadata.
			g.updateMember(now, m, p, respond)
			g.prepareRebalance(now)
			return
		}
		// A member that lost its JoinGroup answer gets it again.
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
		respond(g.joinResult(m))
	default:
		fail(kerr.UnknownMemberID.Code)
	}
}

// acceptsProtocols reports whether a member of protocol type typ with
// protocols ps may join: it must name at least one protocol, of the
// group's type, that every member supports.
func (g *Group) acceptsProtocols(typ string, ps []Protocol) bool {
	if typ == "" || len(ps) == 0 {
		return false
	}
	if len(g.members) == 0 {
		return true
	}
	if typ != g.protocolType {
		return false
	}
	for _, p := range ps {
		if g.allSupport(p.Name) {
			return true
		}
	}
	return false
}

func (g *Group) allSupport(name string) bool {
	for _, m := range g.members {
		if !m.supports(name) {
			return false
		}
	}
	return true
}

// joinStatic handles the JoinGroup of a static member without a member
// id: a new instance joins as a new member does, but without
// MEMBER_ID_REQUIRED; a known one (restarted) takes a new member id in
// its old place, fencing the old id, and in a Stable group with the same
// protocols gets the current generation back without a rebalance, as
// Kafka's updateStaticMemberThenRebalanceOrCompleteJoin does.
func (g *Group) joinStatic(now time.Time, p JoinParams, respond func(JoinResult)) {
	iid := *p.InstanceID
	oldID, known := g.static[iid]
	if !known {
		g.static[iid] = p.NewMemberID
		g.addMember(now, p, p.NewMemberID, respond)
		return
	}
	m := g.members[oldID]
	newID := p.NewMemberID
	if m.joinWait != nil {
		m.joinWait(JoinResult{Code: kerr.FencedInstanceID.Code, MemberID: oldID, Generation: -1})
		m.joinWait = nil
	}
	if m.syncWait != nil {
		m.syncWait(SyncResult{Code: kerr.FencedInstanceID.Code})
		m.syncWait = nil
	}
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.static[iid] = newID
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	if g.leader == oldID {
		g.leader = newID
	}
	switch {
	case g.state == Stable && m.sameProtocols(p.Protocols):
		m.heartbeatDeadline = now.Add(p.SessionTimeout)
		m.sessionTimeout, m.rebalanceTimeout = p.SessionTimeout, p.RebalanceTimeout
		g.stores = append(g.stores, &Store{Value: g.metadataValue(now), generation: g.generation})
		r := g.joinResult(m)
		// The leader's assignment stands: a restarted leader must not
		// assign again (JoinGroup v9's SkipAssignment).
		r.SkipAssignment = m.id == g.leader
		respond(r)
	case g.state == PreparingRebalance:
		g.updateMember(now, m, p, respond)
		g.maybeCompleteJoin(now)
	default:
		g.updateMember(now, m, p, respond)
		g.prepareRebalance(now)
	}
}

// joinNew handles the JoinGroup of a member without an id.
func (g *Group) joinNew(now time.Time, p JoinParams, respond func(JoinResult)) {
	id := p.NewMemberID
	if p.RequireKnownMemberID {
		// The member must come back with its id (KIP-394), so that a
		// JoinGroup lost on the way does not leave a member behind.
		g.pending[id] = now.Add(p.SessionTimeout)
		respond(JoinResult{Code: kerr.MemberIDRequired.Code, MemberID: id, Generation: -1})
		return
	}
	g.addMember(now, p, id, respond)
}

// addMember adds a member and rebalances.
func (g *Group) addMember(now time.Time, p JoinParams, id string, respond func(JoinResult)) {
	if len(g.members) == 0 {
		g.protocolType = p.ProtocolType
	}
	m := &member{id: id}
	g.members[id] = m
	g.order = append(g.order, id)
	if g.leader == "" {
		g.leader = id
	}
	g.updateMember(now, m, p, respond)
	if g.initialDelay {
		g.joinedDuringDelay = true
	}
	switch g.state {
	case PreparingRebalance:
		g.maybeCompleteJoin(now)
	default:
		g.prepareRebalance(now)
	}
}

func (g *Group) updateMember(now time.Time, m *member, p JoinParams, respond func(JoinResult)) {
	m.instanceID, m.clientID, m.host = p.InstanceID, p.ClientID, p.Host
	if p.InstanceID != nil {
		g.static[*p.InstanceID] = m.id
	}
	m.sessionTimeout, m.rebalanceTimeout, m.protocols = p.SessionTimeout, p.RebalanceTimeout, p.Protocols
	if m.joinWait != nil {
		// A second JoinGroup of the same member replaces the first,
		// which is answered as Kafka does.
		m.joinWait(JoinResult{Code: kerr.UnknownMemberID.Code, MemberID: m.id, Generation: -1})
	}
	m.joinWait = respond
	m.heartbeatDeadline = now.Add(m.sessionTimeout)
}

// maxRebalanceTimeout is the longest rebalance timeout of the members.
func (g *Group) maxRebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// prepareRebalance starts a rebalance: members must join again within
// the rebalance timeout; a pending assignment is dropped.
func (g *Group) prepareRebalance(now time.Time) {
	if g.state == CompletingRebalance {
		g.resetAssignments(kerr.RebalanceInProgress.Code)
	}
	g.syncStoring = false
	if g.state == Empty && g.timing.InitialRebalanceDelay > 0 {
		g.initialDelay, g.joinedDuringDelay = true, false
		g.initialDeadline = now.Add(g.maxRebalanceTimeout())
		g.joinDeadline = now.Add(min(g.timing.InitialRebalanceDelay, g.maxRebalanceTimeout()))
	} else {
		g.joinDeadline = now.Add(g.maxRebalanceTimeout())
	}
	g.transition(PreparingRebalance, now)
	g.maybeCompleteJoin(now)
}

// resetAssignments drops the members' assignments and answers the
// SyncGroups waiting for them with code.
func (g *Group) resetAssignments(code int16) {
	for _, id := range g.order {
		m := g.members[id]
		m.assignment = nil
		if m.syncWait != nil {
			m.syncWait(SyncResult{Code: code})
			m.syncWait = nil
		}
	}
}

// allJoined reports whether every member has joined this rebalance.
func (g *Group) allJoined() bool {
	if len(g.pending) > 0 {
		return false
	}
	for _, m := range g.members {
		if m.joinWait == nil {
			return false
		}
	}
	return true
}

// maybeCompleteJoin completes the rebalance once every member joined,
// unless an empty group's initial delay still runs.
func (g *Group) maybeCompleteJoin(now time.Time) {
	if g.state == PreparingRebalance && !g.initialDelay && g.allJoined() {
		g.completeJoin(now)
	}
}

// completeJoin ends PreparingRebalance: the members that did not join
// again leave, the generation moves on, and every member is answered (the
// leader with everyone's metadata), or the group is empty.
func (g *Group) completeJoin(now time.Time) {
	for _, id := range slices.Clone(g.order) {
		// A static member that did not rejoin stays (Kafka's
		// onCompleteJoin drops only dynamic ones): its session decides.
		if m := g.members[id]; m.joinWait == nil && m.instanceID == nil {
			g.removeMember(id, kerr.UnknownMemberID.Code)
		}
	}
	g.joinDeadline, g.initialDelay = time.Time{}, false
	g.generation++
	if len(g.members) == 0 {
		g.protocolType, g.protocol, g.leader = "", "", ""
		g.transition(Empty, now)
		g.stores = append(g.stores, &Store{Value: g.metadataValue(now), generation: g.generation})
		return
	}
	g.protocol = g.selectProtocol()
	g.transition(CompletingRebalance, now)
	for _, id := range g.order {
		m := g.members[id]
		respond := m.joinWait
		if respond == nil {
			continue
		}
		m.joinWait = nil
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
		respond(g.joinResult(m))
	}
}

// selectProtocol is the protocol the most members prefer among those
// every member supports (Kafka's ClassicGroup.selectProtocol): each
// member votes for the first of its protocols that all support; a tie
// goes to the first such protocol of the member who joined first.
func (g *Group) selectProtocol() string {
	var candidates []string
	for _, p := range g.members[g.order[0]].protocols {
		if g.allSupport(p.Name) {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if slices.Contains(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, c := range candidates {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

func (g *Group) joinResult(m *member) JoinResult {
	r := JoinResult{Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, Leader: g.leader, MemberID: m.id}
	if m.id == g.leader {
		for _, id := range g.order {
			o := g.members[id]
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = o.id, o.instanceID, o.metadataFor(g.protocol)
			r.Members = append(r.Members, jm)
		}
	}
	return r
}

// removeMember takes member id out, answering what it waits for with
// code; a leader that leaves hands over to the next member.
func (g *Group) removeMember(id string, code int16) {
	m := g.members[id]
	if m == nil {
		return
	}
	delete(g.members, id)
	if m.instanceID != nil && g.static[*m.instanceID] == id {
		delete(g.static, *m.instanceID)
	}
	g.order = slices.DeleteFunc(g.order, func(o string) bool { return o == id })
	if m.joinWait != nil {
		m.joinWait(JoinResult{Code: code, MemberID: id, Generation: -1})
		m.joinWait = nil
	}
	if m.syncWait != nil {
		m.syncWait(SyncResult{Code: code})
		m.syncWait = nil
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// memberGone rebalances after a member left or timed out.
func (g *Group) memberGone(now time.Time) {
	switch g.state {
	case Stable, CompletingRebalance:
		g.prepareRebalance(now)
	case PreparingRebalance:
		g.maybeCompleteJoin(now)
	}
}

// Sync handles a SyncGroup (Kafka's classicGroupSync); the leader's
// carries the assignments. protocolType and protocol, when given (v5),
// must be the group's.
func (g *Group) Sync(now time.Time, memberID string, instanceID *string, generation int32, protocolType, protocol *string, assignments map[string][]byte, respond func(SyncResult)) {
	m := g.members[memberID]
	switch {
	case g.state == Dead:
		respond(SyncResult{Code: kerr.CoordinatorNotAvailable.Code})
		return
	case g.Fenced(memberID, instanceID):
		respond(SyncResult{Code: kerr.FencedInstanceID.Code})
		return
	case m == nil:
		respond(SyncResult{Code: kerr.UnknownMemberID.Code})
		return
	case generation != g.generation:
		respond(SyncResult{Code: kerr.IllegalGeneration.Code})
		return
	case protocolType != nil && *protocolType != g.protocolType, protocol != nil && *protocol != g.protocol:
		respond(SyncResult{Code: kerr.InconsistentGroupProtocol.Code})
		return
	}
	switch g.state {
	case Empty:
		respond(SyncResult{Code: kerr.UnknownMemberID.Code})
	case PreparingRebalance:
		respond(SyncResult{Code: kerr.RebalanceInProgress.Code})
	case CompletingRebalance:
		if m.syncWait != nil {
			m.syncWait(SyncResult{Code: kerr.UnknownMemberID.Code})
		}
		m.syncWait = respond
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
		if memberID != g.leader || g.syncStoring {
			return
		}
		g.syncStoring = true
		as := map[string][]byte{}
		for id := range g.members {
			as[id] = assignments[id]
			if as[id] == nil {
				as[id] = []byte{}
			}
		}
		st := &Store{generation: g.generation, sync: true, assignments: as, Value: g.metadataValue(now)}
		for i := range st.Value.Members {
			st.Value.Members[i].Assignment = as[st.Value.Members[i].MemberID]
		}
		g.stores = append(g.stores, st)
	case Stable:
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
		respond(SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
	}
}

// Stored is the outcome of a Store the shard wrote: code 0 or the error
// the append met. A leader's assignment is given to the members once
// stored, and the group becomes Stable; if the store failed, the
// members are told and the group rebalances.
func (g *Group) Stored(now time.Time, s *Store, code int16) {
	if !s.sync || g.state != CompletingRebalance || g.generation != s.generation {
		return
	}
	g.syncStoring = false
	if code != 0 {
		g.resetAssignments(code)
		g.prepareRebalance(now)
		return
	}
	g.transition(Stable, now)
	for _, id := range g.order {
		m := g.members[id]
		m.assignment = s.assignments[id]
		if m.syncWait != nil {
			m.syncWait(SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
			m.syncWait = nil
		}
	}
}

// Fenced reports whether instanceID, when given, belongs to another
// member than memberID: that member was replaced by a newer instance
// (FENCED_INSTANCE_ID).
func (g *Group) Fenced(memberID string, instanceID *string) bool {
	if instanceID == nil {
		return false
	}
	id, ok := g.static[*instanceID]
	return ok && id != memberID
}

// Heartbeat handles a Heartbeat (Kafka's classicGroupHeartbeat).
func (g *Group) Heartbeat(now time.Time, memberID string, instanceID *string, generation int32) int16 {
	m := g.members[memberID]
	switch {
	case g.state == Dead:
		return kerr.CoordinatorNotAvailable.Code
	case g.Fenced(memberID, instanceID):
		return kerr.FencedInstanceID.Code
	case m == nil || g.state == Empty:
		return kerr.UnknownMemberID.Code
	case generation != g.generation:
		return kerr.IllegalGeneration.Code
	}
	m.heartbeatDeadline = now.Add(m.sessionTimeout)
	if g.state == PreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// Leave handles one member of a LeaveGroup; from v3 on a static member
// may be named by its instance id alone.
func (g *Group) Leave(now time.Time, memberID string, instanceID *string) int16 {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if instanceID != nil {
		id, ok := g.static[*instanceID]
		switch {
		case !ok:
			return kerr.UnknownMemberID.Code
		case memberID != "" && memberID != id:
			return kerr.FencedInstanceID.Code
		}
		memberID = id
	}
	if _, ok := g.pending[memberID]; ok {
		delete(g.pending, memberID)
		g.maybeCompleteJoin(now)
		return 0
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	g.removeMember(memberID, kerr.UnknownMemberID.Code)
	g.memberGone(now)
	return 0
}

// NextDeadline is when Tick must run next; zero if no timer is due.
func (g *Group) NextDeadline() time.Time {
	var d time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	earlier(g.joinDeadline)
	for _, t := range g.pending {
		earlier(t)
	}
	for _, m := range g.members {
		if m.joinWait == nil {
			earlier(m.heartbeatDeadline)
		}
	}
	return d
}

// Tick runs the timers due at now: pending members that never came back
// and members whose session expired leave; a rebalance whose time is up
// completes without the members that did not join (an empty group's
// initial delay extends first while members keep arriving).
func (g *Group) Tick(now time.Time) {
	if g.state == Dead {
		return
	}
	for id, t := range g.pending {
		if !now.Before(t) {
			delete(g.pending, id)
		}
	}
	gone := false
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		if m.joinWait == nil && !now.Before(m.heartbeatDeadline) {
			g.removeMember(id, kerr.UnknownMemberID.Code)
			gone = true
		}
	}
	if g.state == PreparingRebalance && !g.joinDeadline.IsZero() && !now.Before(g.joinDeadline) {
		if g.initialDelay && g.joinedDuringDelay && now.Before(g.initialDeadline) {
			// Kafka's InitialDelayedJoin: wait once more while members
			// keep coming, up to the rebalance timeout.
			g.joinedDuringDelay = false
			g.joinDeadline = now.Add(min(g.timing.InitialRebalanceDelay, g.initialDeadline.Sub(now)))
			return
		}
		g.initialDelay = false
		g.completeJoin(now)
		return
	}
	if gone {
		g.memberGone(now)
	} else {
		g.maybeCompleteJoin(now)
	}
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

// IsEmpty reports whether the group has no members, so that
// DeleteGroups may delete it.
func (g *Group) IsEmpty() bool { return g.state == Empty }
