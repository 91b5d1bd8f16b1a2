package group

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's bounds of a member's session timeout
// (group.min.session.timeout.ms and group.max.session.timeout.ms).
const (
	minSessionTimeout = 6 * time.Second
	maxSessionTimeout = 30 * time.Minute
)

// handleJoinGroup answers a JoinGroup once the member's rebalance
// completes, or at once with an error (Kafka's classicGroupJoin).
func (c *Coordinator) handleJoinGroup(req *wire.Request) {
	c.joinGroup(req.Body.(*kmsg.JoinGroupRequest), req.ClientID, clientHost(req.Peer), req.Respond)
}

// joinGroup is handleJoinGroup's work: the request of client clientID at host,
// answered through answer.
func (c *Coordinator) joinGroup(r *kmsg.JoinGroupRequest, clientID, host string, answer func(kmsg.Response)) {
	respond := func(res JoinResult) {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.ErrorCode, resp.Generation, resp.LeaderID, resp.MemberID, resp.Members = res.Code, res.Generation, res.Leader, res.MemberID, res.Members
		resp.SkipAssignment = res.SkipAssignment
		if res.ProtocolType != "" {
			resp.ProtocolType = kmsg.StringPtr(res.ProtocolType)
		}
		if res.Protocol != "" || r.Version < 7 {
			// Before v7 the protocol is not nullable.
			resp.Protocol = kmsg.StringPtr(res.Protocol)
		}
		answer(resp)
	}
	fail := func(code int16) { respond(JoinResult{Code: code, MemberID: r.MemberID, Generation: -1}) }
	session := time.Duration(r.SessionTimeoutMillis) * time.Millisecond
	rebalance := time.Duration(r.RebalanceTimeoutMillis) * time.Millisecond
	if r.Version == 0 {
		// v0 has no rebalance timeout: it is the session timeout.
		rebalance = session
	}
	switch {
	case r.Group == "":
		fail(kerr.InvalidGroupID.Code)
		return
	case session < minSessionTimeout || session > maxSessionTimeout:
		fail(kerr.InvalidSessionTimeout.Code)
		return
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		fail(code)
		return
	}
	p := JoinParams{
		MemberID: r.MemberID, InstanceID: r.InstanceID, ClientID: clientID, Host: host,
		SessionTimeout: session, RebalanceTimeout: rebalance, ProtocolType: r.ProtocolType,
		RequireKnownMemberID: r.Version >= 4, NewMemberID: newMemberID(clientID, r.InstanceID),
	}
	for _, pr := range r.Protocols {
		p.Protocols = append(p.Protocols, Protocol{Name: pr.Name, Metadata: pr.Metadata})
	}
	if code := s.do(func(now time.Time) {
		if cg := s.cgroups[r.Group]; cg != nil {
			if !cg.IsEmpty() {
				// Kafka 4.4 lets classic members into a consumer group
				// (group.consumer.migration.policy); this coordinator
				// keeps the protocols apart.
				fail(kerr.InconsistentGroupProtocol.Code)
				return
			}
			// An empty consumer group becomes a classic group, its
			// offsets kept, as Kafka converts it.
			cg.Delete()
			s.queueLocked(cg.TakeRecords(), func(int64, int16) {})
			delete(s.cgroups, r.Group)
		}
		g := s.groups[r.Group]
		if g == nil {
			if r.MemberID != "" {
				fail(kerr.UnknownMemberID.Code)
				return
			}
			g = NewGroup(r.Group, c.timing, now)
			s.groups[r.Group] = g
		}
		g.Join(now, p, respond)
	}); code != 0 {
		fail(code)
	}
}
