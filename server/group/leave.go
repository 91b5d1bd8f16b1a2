package group

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleLeaveGroup takes members out of a group: one before v3, a batch
// from v3 on, each answered on its own.
func (c *Coordinator) handleLeaveGroup(req *wire.Request) {
	c.leaveGroup(req.Body.(*kmsg.LeaveGroupRequest), req.Respond)
}

// leaveGroup is handleLeaveGroup's work, answered through answer.
func (c *Coordinator) leaveGroup(r *kmsg.LeaveGroupRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrLeaveGroupResponse()
	defer answer(resp)
	members := r.Members
	if r.Version < 3 {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = r.MemberID
		members = []kmsg.LeaveGroupRequestMember{m}
	}
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		resp.ErrorCode = code
		return
	}
	codes := make([]int16, len(members))
	if code := s.do(func(now time.Time) {
		g := s.groups[r.Group]
		for i, m := range members {
			if g == nil {
				codes[i] = kerr.UnknownMemberID.Code
				continue
			}
			codes[i] = g.Leave(now, m.MemberID, m.InstanceID)
		}
	}); code != 0 {
		resp.ErrorCode = code
		return
	}
	if r.Version < 3 {
		resp.ErrorCode = codes[0]
		return
	}
	for i, m := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, codes[i]
		resp.Members = append(resp.Members, rm)
	}
}
