package tui

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// A node with a slow disk keeps its state; the STATE cell says how slow
// its disk is, and in brief that it is slow.
func TestQuorumRowShowsASlowDisk(t *testing.T) {
	v := view.View{LeaderID: 1, Nodes: []view.Node{
		{ID: 1, Kind: view.KindController, State: view.StateRunning, Role: view.RoleLeader, LeaderID: 1},
		{ID: 2, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower, LeaderID: 1, DiskDelayMs: 100},
	}}
	rows := quorumRows(&v)
	if rows[0].state != "running" {
		t.Errorf("node 1's state %q", rows[0].state)
	}
	if r := rows[1]; r.state != "running, disk +100ms" || !strings.Contains(r.stateBrief, "slow disk") || r.stateStyle != view.StateRunning {
		t.Errorf("node 2's state %q (brief %q, style %q)", r.state, r.stateBrief, r.stateStyle)
	}
}
