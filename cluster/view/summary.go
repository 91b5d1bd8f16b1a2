package view

import (
	"fmt"
	"strings"
)

// Summary is one line about the quorum: the leader, its epoch and high
// watermark, or every controller's role when there is no leader.
func (v *View) Summary() string { return quorumSummary(v) }

func quorumSummary(v *View) string {
	if v.LeaderID != NoLeader {
		return fmt.Sprintf("leader %d in epoch %d, hwm %d", v.LeaderID, v.LeaderEpoch, v.HighWatermark)
	}
	parts := make([]string, 0, len(v.Nodes))
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Kind != KindController {
			continue
		}
		if n.Live() {
			parts = append(parts, fmt.Sprintf("%d %s e%d", n.ID, n.Role, n.Epoch))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n.ID, n.State))
		}
	}
	return "no leader (" + strings.Join(parts, ", ") + ")"
}

// Summary is one line about the node: its role, epoch and offsets, or its
// state when it is down.
func (n *Node) Summary() string {
	if !n.Live() {
		return fmt.Sprintf("node %d is %s", n.ID, n.State)
	}
	return fmt.Sprintf("node %d is %s in epoch %d (%s), log end %d, hwm %d", n.ID, n.Role, n.Epoch, n.State, n.LogEndOffset, n.HighWatermark)
}
