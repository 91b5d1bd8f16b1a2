package tui

import (
	"strings"
	"testing"
)

// A simulated playground through tmux, as a learner runs it: the screen
// says it is simulated and shows the run's history where held messages
// would be; a wait in another shell takes a step; the learner kills the
// leader from the screen, waits for the new one, then steps back with ,
// and forward with . and the slider and the history follow.
func TestSimulatedScreenInTmux(t *testing.T) {
	p, _, run := upInTmux(t, "--sim --seed 7 --profile fast")
	screen := p.waitFor("the simulated header and the history pane", func(s string) bool {
		return strings.Contains(s, "SIMULATED seed 7") && strings.Contains(s, "History: seed 7, branch 1") && strings.Contains(s, "the cluster started")
	})
	p.save("sim-start", screen)
	if out := run("wait", "leader"); !strings.Contains(out, "of simulated time") {
		t.Fatalf("wait leader on a simulated playground: %q", out)
	}
	run("clock", "advance", "1s")
	p.waitFor("the advance as step 1", func(s string) bool { return strings.Contains(s, "step 1/1, branch 1") })
	// l selects the leader, x kills it.
	p.keys("l", "x")
	p.waitFor("the kill as step 2", func(s string) bool { return strings.Contains(s, "step 2/2, branch 1") })
	run("wait", "new-leader")
	screen = p.waitFor("the wait as step 3", func(s string) bool {
		return strings.Contains(s, "step 3/3, branch 1") && strings.Contains(s, "wait new-leader: ran")
	})
	p.save("sim-failover", screen)
	p.keys(",")
	p.waitFor("a step back", func(s string) bool { return strings.Contains(s, "step 2/3, branch 1") })
	p.keys(".")
	p.waitFor("a step forward along the branch", func(s string) bool { return strings.Contains(s, "step 3/3, branch 1") })
	p.keys(",", ",")
	p.waitFor("two steps back", func(s string) bool { return strings.Contains(s, "step 1/3, branch 1") })
	// An action there starts branch 2.
	run("resign")
	screen = p.waitFor("branch 2", func(s string) bool { return strings.Contains(s, "step 2/2, branch 2 (left 1 at 1)") })
	p.save("sim-branched", screen)
	if out := run("history"); !strings.Contains(out, "branch 2, left branch 1 after its step 1") {
		t.Fatalf("history after the branch:\n%s", out)
	}
}
