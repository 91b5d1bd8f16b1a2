package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
	g.initialDelay = false
	if len(g.members) > 0 && !g.electJoinedLeader() {
		// Only static members that did not rejoin are left: wait
		// another rebalance timeout, until they rejoin or their
		// sessions end (Kafka's onCompleteJoin when no member
		// rejoined).
		g.joinDeadline = now.Add(g.maxRebalanceTimeout())
		return
	}
	g.joinDeadline = time.Time{}
	g.generation++
	if len(g.members) == 0 {
		// The protocol type stays, as Kafka's ClassicGroup keeps it: an
		// empty consumer group is still a consumer group to the tools.
		g.protocol, g.leader = "", ""
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

// electJoinedLeader makes sure the leader is a member that rejoined, so
// that it gets everyone's metadata to assign (Kafka's
// maybeElectNewJoinedLeader): a static leader that did not rejoin gives
// way to the first member that did. False if none did.
func (g *Group) electJoinedLeader() bool {
	if m := g.members[g.leader]; m != nil && m.joinWait != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].joinWait != nil {
			g.leader = id
			return true
		}
	}
	return false
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
