package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

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
