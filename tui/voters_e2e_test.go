package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	tmux, dir, bin := buildForTmux(t)
	p := &pane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(p.close)
	cmd := fmt.Sprintf("env KRAFTLAB_HOME=%s %s up --profile fast --controllers 1 --brokers 1 --set kraft.version=1; echo \"[kraftlab exited $?]\"; sleep 600", dir, bin)
	p.run("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "48", cmd)
	screen := p.waitFor("the screen or an error", func(s string) bool {
		return strings.Contains(s, "LEADER-SAW") || strings.Contains(s, "[kraftlab exited") || strings.Contains(s, "running headless")
	})
	if !strings.Contains(screen, "LEADER-SAW") {
		t.Fatalf("kraftlab up did not open the screen:\n%s", strings.TrimSpace(screen))
	}
	run := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "KRAFTLAB_HOME="+dir, "KRAFTLAB_SESSION=")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("kraftlab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("wait", "voters", "==", "1", "--timeout", "30s")
	p.waitFor("one voter, its own majority", func(s string) bool {
		return strings.Contains(s, "a majority (1 of 1) stands") && !quorumRowRE.MatchString(s)
	})

	p.keys("+")
	screen = p.waitFor("controller 2 a voter on the screen", func(s string) bool {
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
