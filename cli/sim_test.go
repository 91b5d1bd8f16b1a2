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

// history --scenario writes a branch as a scenario file, which runs the
// same steps again: the replay logs what the run logged, though its waits
// and its resolved references (old-leader, leader) are written as the
// clock advances and node IDs they came to.
func TestSimulatedHistoryAsScenarioReplays(t *testing.T) {
	dir := t.TempDir()
	lines := "up --sim --seed 11\nwait leader\nisolate leader\nwait new-leader\nheal\nlink leader 102 --delay 30ms --loss 10%\n" +
		"topics create orders --partitions 2 --replication-factor 2\nclock advance 1s\nresign\nwait new-leader\npartition 1 2 --oneway\nclock advance 1s\nsnapshot leader\n" +
		"kill leader\nclock advance 500ms\nrewind 13\nstart old-leader\nwait caught-up --timeout 20s\nheal\n"
	first := writeFile(t, dir, "first.txt", lines+"history --log\nhistory --scenario\n")
	rep := runExamples(t, []string{first})
	if t.Failed() {
		return
	}
	steps := rep.Files[0].Steps
	log, written := steps[len(steps)-2].Output, steps[len(steps)-1].Output
	for _, want := range []string{"isolate ", "link ", "--oneway", "topics create orders", "resign\n", "clock advance ", "partition 1 2 --oneway", "heal\n"} {
		if !strings.Contains(written, want) {
			t.Errorf("history --scenario lacks %q:\n%s", want, written)
		}
	}
	again := writeFile(t, dir, "again.txt", strings.TrimRight(written, "\n")+"\nhistory --log\n")
	rep = runExamples(t, []string{again})
	if t.Failed() {
		t.Logf("the scenario history --scenario wrote:\n%s", written)
		return
	}
	steps = rep.Files[0].Steps
	// The step lines differ where a wait became its clock advance; what
	// the cluster did, and when, must not.
	got := steps[len(steps)-1].Output
	gotEvents, gotSteps := clusterEvents(got)
	wantEvents, wantSteps := clusterEvents(log)
	if gotEvents != wantEvents || gotSteps != wantSteps {
		t.Errorf("the written scenario logged another run:\n%s\n---\n%s\n--- from\n%s", got, log, written)
	}
}

// clusterEvents is a history --log without its step lines, and how many
// steps it had.
func clusterEvents(log string) (string, int) {
	var out []string
	steps := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, " sim-step ") {
			steps++
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), steps
}
