package cli

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
)

func TestLessonList(t *testing.T) {
	h := newHarness(t)
	code, out, errOut := h.run("lesson")
	expectRun(t, "lesson", code, out, errOut, ExitOK,
		"1  replication ", "Pull replication: a follower's Fetch is its acknowledgement",
		"2  elections ", "Elections: a killed leader, pre-vote, and check-quorum",
		"3  divergence-and-snapshots ", "Divergence: an old leader's uncommitted tail is truncated",
		"run one with: kraftlab lesson NAME")
	code, out, errOut = h.run("lesson", "nope")
	expectRun(t, "lesson nope", code, out, errOut, ExitUsage, `no lesson "nope"; the lessons: replication, elections, divergence-and-snapshots`)
	code, out, errOut = h.run("lesson", "2", "--print")
	expectRun(t, "lesson 2 --print", code, out, errOut, ExitOK, "# Elections:", "\nask ", "\nup --controllers 3 --brokers 0 --profile workshop\n")
}

// Every lesson is a valid scenario that explains itself and asks.
func TestLessonsAreValid(t *testing.T) {
	ls, err := shippedLessons()
	if err != nil || len(ls) != 9 {
		names := make([]string, len(ls))
		for i, l := range ls {
			names[i] = l.name
		}
		t.Fatalf("lessons: %v %v, want the nine of the course", names, err)
	}
	e := newHarness(t).env(&lockedBuffer{}, &lockedBuffer{})
	for _, l := range ls {
		s, err := loadLesson(e, l)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		asks := 0
		for _, st := range s.Steps {
			if st.Args[0] == "ask" {
				asks++
			}
		}
		if asks < 2 || !strings.Contains(string(l.text), "# What it teaches") || !strings.Contains(string(l.text), "# What to watch") {
			t.Errorf("%s: %d asks; want at least 2 and the What it teaches/What to watch sections", l.file, asks)
		}
	}
}

// Every lesson runs on the real engine without anyone at the keyboard:
// the right answers are taken.
func TestLessonsRun(t *testing.T) {
	ls, err := shippedLessons()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if needsZooKeeper(t, l) {
			continue
		}
		h := newHarness(t)
		var out, errOut lockedBuffer
		e := h.env(&out, &errOut)
		e.open = engine.Open
		code := run(testContext(t), []string{"lesson", "--no-pause", "--profile", string(cluster.ProfileFast), l.name}, e)
		expectRun(t, "lesson "+l.name, code, out.String(), errOut.String(), ExitOK,
			"# What it teaches", "(not asking: --no-pause) the answer: ", "= the answer to cli/lessons/"+l.file, "--- PASS cli/lessons/"+l.file)
	}
}

const asked = `up --controllers 3 --brokers 1
wait leader
# Predict first.
ask "A follower is killed. Who leads? | The same leader | A new one => 1"
kill follower
expect node target state killed
say The leader kept its place
`

// A prediction read from standard input: right, wrong, and a run where
// nobody answers.
func TestAskReadsThePrediction(t *testing.T) {
	file := writeFile(t, t.TempDir(), "ask.txt", asked)
	for _, c := range []struct{ in, want string }{
		{"1\n", "= your prediction held: 1) The same leader (see lines 5 and 6 above)\n"},
		{"3\n2\n", "\"3\" is not a choice: type a number from 1 to 2"},
		{"2\n", "= it did not: you said 2) A new one; what happened is 1) The same leader (see lines 5 and 6 above)\n"},
		{"", "(not asking: nobody can answer, standard input ended) the answer: 1) The same leader"},
	} {
		h := newHarness(t)
		var out, errOut lockedBuffer
		e := h.env(&out, &errOut)
		e.stdin = strings.NewReader(c.in)
		code := run(testContext(t), []string{"scenario", "run", file}, e)
		text := out.String()
		expectRun(t, "ask with "+c.in, code, text, errOut.String(), ExitOK,
			"? A follower is killed. Who leads?\n             1) The same leader\n             2) A new one\n", c.want, "» The leader kept its place", "--- PASS")
		if v, say := strings.Index(text, "  = "), strings.Index(text, "» The leader"); v >= 0 && v > say {
			t.Errorf("the verdict comes after the say:\n%s", text)
		}
	}
	// --step: the answer is the ask line's Enter.
	h := newHarness(t)
	var out, errOut lockedBuffer
	e := h.env(&out, &errOut)
	e.stdin = strings.NewReader("\n1\n\n\n\n")
	code := run(testContext(t), []string{"scenario", "run", "--step", file}, e)
	expectRun(t, "ask --step", code, out.String(), errOut.String(), ExitOK, "# Predict first.\n", "= your prediction held", "--- PASS")
}

func TestScenarioCheckAskLines(t *testing.T) {
	h := newHarness(t)
	bad := writeFile(t, t.TempDir(), "bad.txt", "wait leader\nask Who? | one => 1\nask Who? | one | two => 3\nask Who? | one | two\nask Who? | one | two => 2\n")
	code, out, errOut := h.run("scenario", "check", bad)
	expectRun(t, "scenario check", code, out, errOut, ExitUsage,
		bad+":2: ask needs at least two choices",
		bad+":3: ask: the answer => 3 is not one of the choices 1..2",
		bad+":4: ask needs the right answer at its end, => N",
		"1 of 1 scenario file has problems")
	if strings.Contains(errOut, bad+":5:") || strings.Contains(errOut, bad+":1:") {
		t.Errorf("a good line was reported:\n%s", errOut)
	}
}

// needsZooKeeper reports that lesson l runs in zk mode on a machine
// without ZooKeeper, saying so: it cannot run here.
func needsZooKeeper(t *testing.T, l lesson) bool {
	if !strings.Contains(string(l.text), "\nup --mode zk") {
		return false
	}
	if _, err := zookeeper.Find(); err != nil {
		t.Logf("lesson %s not run: %v", l.name, err)
		return true
	}
	return false
}
