package group

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleHeartbeat keeps a member's session alive and tells it of a
// rebalance (REBALANCE_IN_PROGRESS).
func (c *Coordinator) handleHeartbeat(req *wire.Request) {
	c.heartbeat(req.Body.(*kmsg.HeartbeatRequest), req.Respond)
}

// heartbeat is handleHeartbeat's work, answered through answer.
func (c *Coordinator) heartbeat(r *kmsg.HeartbeatRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrHeartbeatResponse()
	defer answer(resp)
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		resp.ErrorCode = code
		return
	}
	if code := s.do(func(now time.Time) {
		g := s.groups[r.Group]
		if g == nil {
			resp.ErrorCode = kerr.UnknownMemberID.Code
			return
		}
		resp.ErrorCode = g.Heartbeat(now, r.MemberID, r.InstanceID, r.Generation)
	}); code != 0 {
		resp.ErrorCode = code
	}
}
