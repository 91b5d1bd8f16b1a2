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
	r := req.Body.(*kmsg.HeartbeatRequest)
	resp := kmsg.NewPtrHeartbeatResponse()
	defer req.Respond(resp)
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
