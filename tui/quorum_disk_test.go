package tui

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
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

// w slows the selected node's disk by 100 ms, and makes it normal again.
func TestDiskKeyTogglesASlowDisk(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	press(t, m, "j", "w")
	pull(t, m)
	if n, _ := m.view.Node(2); n.DiskDelayMs != 100 {
		t.Fatalf("after j w node 2's disk delay is %d ms, want 100", n.DiskDelayMs)
	}
	if row := lineWith(t, m.View(), "▶    2 "); !strings.Contains(row, "disk +100ms") {
		t.Errorf("node 2's row does not say its disk is slow: %q", row)
	}
	press(t, m, "w")
	pull(t, m)
	if n, _ := m.view.Node(2); n.DiskDelayMs != 0 {
		t.Fatalf("after a second w node 2's disk delay is %d ms, want 0", n.DiskDelayMs)
	}
}
