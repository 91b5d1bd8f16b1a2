package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ValidateMember checks that memberID is a member and, when instanceID
// is given, the member of that static instance (Kafka's
// ClassicGroup.validateMember): UNKNOWN_MEMBER_ID for an instance or
// member the group does not know, FENCED_INSTANCE_ID for a member a
// newer instance replaced; 0 when it is.
func (g *Group) ValidateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		id, ok := g.static[*instanceID]
		switch {
		case !ok:
			return kerr.UnknownMemberID.Code
		case id != memberID:
			return kerr.FencedInstanceID.Code
		}
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// Heartbeat handles a Heartbeat (Kafka's classicGroupHeartbeat).
func (g *Group) Heartbeat(now time.Time, memberID string, instanceID *string, generation int32) int16 {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.ValidateMember(memberID, instanceID); code != 0 {
		return code
	}
	m := g.members[memberID]
	if generation != g.generation {
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
		if !m.waiting() {
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
		if !m.waiting() && !now.Before(m.heartbeatDeadline) {
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

// waiting reports whether the member waits in a JoinGroup or a
// SyncGroup: it is alive, as Kafka's hasSatisfiedHeartbeat counts it,
// whatever its session says (a follower does not heartbeat while its
// SyncGroup waits for the leader's assignment).
func (m *member) waiting() bool { return m.joinWait != nil || m.syncWait != nil }

// Touch extends a member's session, as an OffsetCommit from it does
// (Kafka's OffsetMetadataManager reschedules the member's heartbeat).
func (g *Group) Touch(now time.Time, memberID string) {
	if m := g.members[memberID]; m != nil {
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
	}
}
