package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

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
	if code := g.ValidateMember(p.MemberID, p.InstanceID); code != 0 {
		fail(code)
		return
	}
	m := g.members[p.MemberID]
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
	if m == nil {
		// Never: an instance always names a member. Were it not so, the
		// instance would join as a new one rather than take the node down.
		delete(g.static, iid)
		g.joinStatic(now, p, respond)
		return
	}
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
	// A member's instance is set once, when it joins: Kafka never moves
	// a member to another instance.
	m := &member{id: id, instanceID: p.InstanceID}
	if p.InstanceID != nil {
		g.static[*p.InstanceID] = id
	}
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
	m.clientID, m.host = p.ClientID, p.Host
	m.sessionTimeout, m.rebalanceTimeout, m.protocols = p.SessionTimeout, p.RebalanceTimeout, p.Protocols
	if m.joinWait != nil {
		// A second JoinGroup of the same member replaces the first,
		// which is answered as Kafka does.
		m.joinWait(JoinResult{Code: kerr.UnknownMemberID.Code, MemberID: m.id, Generation: -1})
	}
	m.joinWait = respond
	m.heartbeatDeadline = now.Add(m.sessionTimeout)
}
