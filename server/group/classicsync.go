package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sync handles a SyncGroup (Kafka's classicGroupSync); the leader's
// carries the assignments. protocolType and protocol, when given (v5),
// must be the group's.
func (g *Group) Sync(now time.Time, memberID string, instanceID *string, generation int32, protocolType, protocol *string, assignments map[string][]byte, respond func(SyncResult)) {
	m := g.members[memberID]
	code := g.ValidateMember(memberID, instanceID)
	switch {
	case g.state == Dead:
		respond(SyncResult{Code: kerr.CoordinatorNotAvailable.Code})
		return
	case code != 0:
		respond(SyncResult{Code: code})
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
