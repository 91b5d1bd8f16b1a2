package cli

import (
	"strings"
	"testing"
)

// A simulated scenario is a function of its seed and its lines: two runs
// log the same events at the same simulated times, and rewinding to a
// step and taking the same actions again logs them once more.
func TestSimulatedScenarioReplays(t *testing.T) {
	dir := t.TempDir()
	lines := "up --sim --seed 7\nwait leader\nkill leader\nwait new-leader\nstop 101\nwait unfenced 102\nstart 101\nwait caught-up\n"
	once := writeFile(t, dir, "once.txt", lines+"events\nhistory --log\n")
	again := writeFile(t, dir, "again.txt", lines+"rewind 2\nstop 101\nwait unfenced 102\nstart 101\nwait caught-up\nhistory\nhistory --log\n")
	rep := runExamples(t, []string{once, once, again})
	if t.Failed() {
		return
	}
	logOf := func(i int) string {
		steps := rep.Files[i].Steps
		return steps[len(steps)-1].Output
	}
	if logOf(0) == "" || !strings.Contains(logOf(0), "step 1: kill ") || !strings.Contains(logOf(0), "election") {
		t.Fatalf("the log says too little:\n%s", logOf(0))
	}
	if logOf(0) != logOf(1) {
		t.Errorf("seed 7 ran twice logged differently:\n%s\n---\n%s", logOf(0), logOf(1))
	}
	// The playground's event stream too, with its simulated times.
	events := func(i int) string { steps := rep.Files[i].Steps; return steps[len(steps)-2].Output }
	if events(0) == "" || events(0) != events(1) {
		t.Errorf("seed 7 ran twice printed different events:\n%s\n---\n%s", events(0), events(1))
	}
	if logOf(2) != logOf(0) {
		t.Errorf("rewind 2 and the same actions again logged differently:\n%s\n---\n%s", logOf(2), logOf(0))
	}
	steps := rep.Files[2].Steps
	if h := steps[len(steps)-2].Output; !strings.Contains(h, "branch 2, left branch 1 after its step 2") {
		t.Errorf("history after the rewind and the actions:\n%s", h)
	}
}
