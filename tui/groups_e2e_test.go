package tui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// groupHeadRE reads a group's head line on the groups pane: its state
// and its coordinator.
var groupHeadRE = regexp.MustCompile(`(?m)\bg (Stable|Empty|PreparingRebalance|CompletingRebalance) · coordinator (\d+) \(__consumer_offsets-(\d+)\)`)

// TestGroupsInTmux runs "kraftlab up" in a tmux pane, makes consumer
// group g with kraftlab consume --group, opens the groups pane with o and
// finds the group there with its coordinator and no lag; then kills the
// coordinator and sees the group move to the new leader of its
// __consumer_offsets partition, marked; a screen on the playground read
// over the wire (kraftlab tui --bootstrap-server) shows it there too.
func TestGroupsInTmux(t *testing.T) {
	p, bin, run := upInTmux(t, "--profile fast --controllers 1 --brokers 3")
	run("wait", "unfenced", "101", "--timeout", "30s")
	run("wait", "unfenced", "102", "--timeout", "30s")
	run("wait", "unfenced", "103", "--timeout", "30s")

	p.keys("o")
	p.waitFor("the groups pane saying how to make a group", func(s string) bool {
		return strings.Contains(s, "no consumer groups yet: kraftlab consume --group G TOPIC makes one")
	})

	run("topics", "create", "orders", "--partitions", "2", "--replication-factor", "3")
	run("produce", "orders", "--count", "20")
	run("consume", "orders", "--group", "g", "--from-beginning", "--max", "20")
	screen := p.waitFor("group g on the groups pane, with its coordinator and no lag", func(s string) bool {
		return groupHeadRE.MatchString(s) && strings.Contains(s, "lag 0") && strings.Contains(s, "orders-1")
	})
	m := groupHeadRE.FindStringSubmatch(screen)
	coordinator, partition := m[2], m[3]
	p.save("groups", screen)

	run("kill", coordinator)
	screen = p.waitFor("group g's coordinator moved and marked", func(s string) bool {
		m := groupHeadRE.FindStringSubmatch(s)
		return m != nil && m[2] != coordinator && m[3] == partition && strings.Contains(s, "↻ was "+coordinator)
	})
	p.save("groups-moved", screen)
	now := groupHeadRE.FindStringSubmatch(screen)[2]

	// The same group read over the wire, as on a real Kafka cluster.
	var nodes []view.Node
	if err := json.Unmarshal([]byte(run("nodes", "--json")), &nodes); err != nil {
		t.Fatal(err)
	}
	var brokers []string
	for _, n := range nodes {
		if n.Kind == view.KindBroker && n.State == view.StateRunning {
			brokers = append(brokers, n.Listener)
		}
	}
	a := &pane{t: t, tmux: p.tmux, sock: p.sock, target: "attached"}
	a.run("new-session", "-d", "-s", "attached", "-x", "160", "-y", "48",
		fmt.Sprintf("%s tui --bootstrap-server %s; echo \"[attached exited $?]\"; sleep 600", bin, strings.Join(brokers, ",")))
	a.waitFor("the attached screen", func(s string) bool {
		return strings.Contains(s, "ATTACHED, READ-ONLY") || strings.Contains(s, "[attached exited")
	})
	a.keys("o")
	screen = a.waitFor("group g read over the wire, at its new coordinator", func(s string) bool {
		m := groupHeadRE.FindStringSubmatch(s)
		return m != nil && m[2] == now && m[3] == partition && strings.Contains(s, "lag 0")
	})
	a.save("groups-attached", screen)
	a.keys("q", "y")

	p.keys("q")
	p.waitFor("the quit question", func(s string) bool { return strings.Contains(s, "Quit and stop the playground?") })
	p.keys("y")
	screen = p.waitFor("kraftlab to exit", func(s string) bool { return strings.Contains(s, "[kraftlab exited") })
	if !strings.Contains(screen, "[kraftlab exited 0]") {
		t.Fatalf("kraftlab up did not exit cleanly:\n%s", screen)
	}
}
