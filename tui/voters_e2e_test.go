package tui

import (
	"regexp"
	"strings"
	"testing"
)

// quorumRowRE reads node 2's row of the quorum table: its role.
var quorumRowRE = regexp.MustCompile(`(?m)^[ ▶]\s+2 (Leader|Follower|Observer|Candidate|Prospective|Unattached|Resigned)\s`)

// TestVotersInTmux runs "kraftlab up --set kraft.version=1" with one
// controller in a tmux pane and grows the quorum from the screen: + adds
// controller 2, which the table then shows as a Follower and the commit
// panel as one of two voters; then - on node 2, answered y, removes it:
// an Observer again, and the leader alone a majority.
func TestVotersInTmux(t *testing.T) {
	p, _, run := upInTmux(t, "--profile fast --controllers 1 --brokers 1 --set kraft.version=1")
	run("wait", "voters", "==", "1", "--timeout", "30s")
	p.waitFor("one voter, its own majority", func(s string) bool {
		return strings.Contains(s, "a majority (1 of 1) stands") && !quorumRowRE.MatchString(s)
	})

	p.keys("+")
	screen := p.waitFor("controller 2 a voter on the screen", func(s string) bool {
		m := quorumRowRE.FindStringSubmatch(s)
		return m != nil && m[1] == "Follower" && strings.Contains(s, "a majority (2 of 2) stands") &&
			strings.Contains(statusLine(s), "controller 2 joined as an observer, caught up and was added to the voters")
	})
	p.save("voters-added", screen)
	run("wait", "voter", "2", "--timeout", "10s")

	// Select node 2 (the rows go 1, 2, 101) and remove it.
	p.keys("j", "-")
	p.waitFor("the question", func(s string) bool {
		return strings.Contains(s, "Remove node 2 from the voters (RemoveRaftVoter)? y removes")
	})
	p.keys("y")
	screen = p.waitFor("controller 2 an observer again", func(s string) bool {
		m := quorumRowRE.FindStringSubmatch(s)
		return m != nil && m[1] == "Observer" && strings.Contains(s, "a majority (1 of 1) stands") &&
			strings.Contains(statusLine(s), "controller 2 was removed from the voters")
	})
	p.save("voters-removed", screen)
	run("wait", "voters", "==", "1", "--timeout", "10s")

	p.keys("q")
	p.waitFor("the quit question", func(s string) bool { return strings.Contains(s, "Quit and stop the playground?") })
	p.keys("y")
	screen = p.waitFor("kraftlab to exit", func(s string) bool { return strings.Contains(s, "[kraftlab exited") })
	if !strings.Contains(screen, "[kraftlab exited 0]") {
		t.Fatalf("kraftlab up did not exit cleanly:\n%s", screen)
	}
}
