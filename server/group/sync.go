package group

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleSyncGroup answers a SyncGroup once the leader's assignment is
// stored, or at once (Kafka's classicGroupSync).
func (c *Coordinator) handleSyncGroup(req *wire.Request) {
	c.syncGroup(req.Body.(*kmsg.SyncGroupRequest), req.Respond)
}

// syncGroup is handleSyncGroup's work, answered through answer.
func (c *Coordinator) syncGroup(r *kmsg.SyncGroupRequest, answer func(kmsg.Response)) {
	respond := func(res SyncResult) {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode, resp.MemberAssignment = res.Code, res.Assignment
		if resp.MemberAssignment == nil {
			resp.MemberAssignment = []byte{}
		}
		if res.Code == 0 {
			resp.ProtocolType, resp.Protocol = kmsg.StringPtr(res.ProtocolType), kmsg.StringPtr(res.Protocol)
		}
		answer(resp)
	}
	fail := func(code int16) { respond(SyncResult{Code: code}) }
	if r.Group == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		fail(code)
		return
	}
	assignments := make(map[string][]byte, len(r.GroupAssignment))
	for _, a := range r.GroupAssignment {
		assignments[a.MemberID] = a.MemberAssignment
	}
	if code := s.do(func(now time.Time) {
		g := s.groups[r.Group]
		if g == nil {
			fail(kerr.UnknownMemberID.Code)
			return
		}
		g.Sync(now, r.MemberID, r.InstanceID, r.Generation, r.ProtocolType, r.Protocol, assignments, respond)
	}); code != 0 {
		fail(code)
	}
}
