package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// A partitioned node keeps the LEADER-SAW column at 80 columns: its STATE
// says partitioned in a word, and the detail line names the peers it
// lost, early enough to show; a wide screen names them in the table.
func TestPartitionedNodeAt80Columns(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	for _, peer := range []int32{1, 3} {
		if _, err := pg.Do(context.Background(), cluster.Action{Kind: cluster.ActPartition, Node: condition.NodeID(2), Peer: condition.NodeID(peer)}); err != nil {
			t.Fatal(err)
		}
	}
	m := newModel(t, pg, 80, 24)
	press(t, m, "j") // node 2
	screen := m.View()
	if !strings.Contains(lineWith(t, screen, "NODE"), "LEADER-SAW") {
		t.Errorf("LEADER-SAW is gone at 80 columns:\n%s", screen)
	}
	if row := lineWith(t, screen, "Prospective"); !strings.HasSuffix(strings.TrimRight(row, " "), "partitioned") {
		t.Errorf("node 2's row does not say partitioned: %q", row)
	}
	if d := lineWith(t, screen, "node 2: controller"); !strings.Contains(d, "cut off from 1,3") {
		t.Errorf("the detail line does not name the lost peers: %q", d)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	if row := lineWith(t, m.View(), "Prospective"); !strings.Contains(row, "partitioned from 1 3") {
		t.Errorf("a wide screen does not name the peers in the table: %q", row)
	}
}
