package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// binaryRunIn is binaryRun with stdin as the binary's standard input.
func (h *harness) binaryRunIn(stdin string, args ...string) (int, string, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), control.EnvHome+"="+h.home, control.EnvSession+"=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("run kraftlab %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// Node IDs are checked against the playground the file makes before
// anything runs.
func TestBinaryScenarioCheckKnowsTheShape(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	small := writeFile(t, dir, "small.txt", `up --controllers 3 --brokers 0
wait leader
expect node 9 role Leader
kill 104
partition 1 3
wait leader != 4
kill follower
expect node target state killed
say "Node 3 may not exist"
sleep 1s
pause
pause Look at the screen
`)
	bare := writeFile(t, dir, "bare.txt", "kill 104\nstart 103\nheal 2 101\n")
	bad := writeFile(t, dir, "bad.txt", "sleep 11m\nsleep soon\nsay\ntui\nsleep -1s\n")
	code, out, errOut := h.binaryRun("scenario", "check", small, bare, bad)
	expectRun(t, "scenario check", code, out, errOut, ExitUsage,
		small+":3: unknown node 9: the up line ("+small+":1) makes controllers 1..3 and no brokers",
		small+":4: unknown node 104: the up line",
		small+":6: unknown node 4:",
		bare+":1: unknown node 104: up's default shape (the file has no up line) makes controllers 1..3 and brokers 101..103",
		bad+":1: sleep 11m0s: at most 10m0s",
		bad+`:2: bad duration "soon": want a duration like 5s or 500ms`,
		bad+":3: say needs some text",
		bad+":4: tui cannot be a scenario line: it needs a terminal",
		bad+":5: unknown shorthand flag: '1' in -1s (see: kraftlab sleep --help)",
		"3 of 3 scenario files have problems")
	for _, good := range []string{small + ":2:", small + ":5:", small + ":7:", small + ":8:", small + ":9:", small + ":10:", small + ":11:", small + ":12:", bare + ":2:", bare + ":3:"} {
		if strings.Contains(errOut, good) {
			t.Errorf("a good line was reported (%s):\n%s", good, errOut)
		}
	}
	code, out, errOut = h.binaryRun("scenario", "check", "../examples/snapshot-catch-up.txt", "../examples/wiped-voter.txt")
	expectRun(t, "scenario check examples", code, out, errOut, ExitOK, "2 scenario files are valid")
}

const demo = `# The leader keeps its place while a follower goes away.
#
# What it teaches: nothing much.

up --controllers 3 --brokers 1

# Start with a leader.
wait leader
say Now a follower goes away
kill follower        # not the leader
expect node target state killed
sleep 20ms
pause Look at the screen
start target
wait node target role Follower
`

// scenario run --session runs the lines on a running playground, which
// keeps running; say reaches its event stream; pause reads Enter.
func TestBinaryScenarioRunOnARunningPlayground(t *testing.T) {
	h := newHarness(t)
	pg := h.serve("demo", clustertest.Options{})
	file := writeFile(t, t.TempDir(), "demo.txt", demo)

	code, out, errOut := h.binaryRunIn("\n", "scenario", "run", "--session", "demo", file)
	expectRun(t, "scenario run --session demo", code, out, errOut, ExitOK,
		"=== "+file+" (3 controllers, 1 brokers, profile fast, session demo, running already: it keeps running after the file)",
		"say Now a follower goes away  (",
		"» Now a follower goes away",
		"killed node 2 (Follower in epoch 1)",
		"sleep 20ms  (",
		"pause Look at the screen\n           Look at the screen\n           [paused at "+file+":13: Enter goes on] \n",
		"started node 2",
		"--- PASS "+file)
	var says []cluster.Event
	for _, ev := range pg.EventStream().Since(0) {
		if ev.Kind == cluster.EventSay {
			says = append(says, ev)
		}
	}
	if len(says) != 1 || says[0].Message != "Now a follower goes away" {
		t.Errorf("say events on the playground: %+v", says)
	}
	code, out, errOut = h.binaryRun("status", "--session", "demo")
	expectRun(t, "status after the scenario", code, out, errOut, ExitOK, "LeaderId:               1")

	// Nobody to press Enter (stdin ends): the pause fails at its line, at once.
	code, out, errOut = h.binaryRunIn("", "scenario", "run", "--session", "demo", file)
	expectRun(t, "scenario run without input", code, out, errOut, ExitUsage,
		"--- FAIL "+file+":13: pause Look at the screen",
		"waiting for Enter at the pause of "+file+":13: standard input ended, so nobody can press Enter (without anyone at a terminal, run with --no-pause)")
	if strings.Contains(out, "started node") {
		t.Errorf("ran past the failed pause:\n%s", out)
	}
	h.binaryRun("start", "2", "--session", "demo") // the failed run left node 2 killed

	// --no-pause skips it.
	code, out, errOut = h.binaryRunIn("", "scenario", "run", "--session", "demo", "--no-pause", file)
	expectRun(t, "scenario run --no-pause", code, out, errOut, ExitOK, "(not waiting: --no-pause)", "--- PASS "+file)

	// --step: one Enter per line, after the comment above it; JSON keeps
	// stdout for the report and prompts on stderr.
	code, out, errOut = h.binaryRunIn(strings.Repeat("\n", 8), "scenario", "run", "--session", "demo", "--step", "--json", file)
	var rep scenario.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || !rep.OK || len(rep.Files[0].Steps) != 8 {
		t.Fatalf("--step --json: %d %v\n%s\n%s", code, err, out, errOut)
	}
	for _, want := range []string{
		"# The leader keeps its place while a follower goes away.\n#\n# What it teaches: nothing much.\n",
		"\n# Start with a leader.\nnext " + file + ":8: wait leader\n[Enter runs it, Ctrl-C stops] \n",
		"next " + file + ":10: kill follower   # not the leader\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("--step prompts lack %q:\n%s", want, errOut)
		}
	}
	// Input that ends mid-way stops the run at that line.
	code, out, errOut = h.binaryRunIn("\n\n", "scenario", "run", "--session", "demo", "--step", file)
	expectRun(t, "--step with 2 Enters", code, out, errOut, ExitUsage, "--- FAIL "+file+":10: kill follower", "waiting for Enter before "+file+":10")

	// The up line must fit the running playground: nothing runs, and the
	// error says how to start one it fits.
	wrong := writeFile(t, t.TempDir(), "wrong.txt", "up --controllers 5 --brokers 0\nwait leader\nkill 4\n")
	code, out, errOut = h.binaryRun("scenario", "run", "--session", "demo", wrong)
	expectRun(t, "up line mismatch", code, out, errOut, ExitUsage,
		wrong+`:1: the file asks for 5 controllers and 0 brokers, but playground "demo" runs 3 controllers and 1 broker;`,
		"To start one that fits:\n    kraftlab down --session demo\n    kraftlab up --headless --session demo --controllers 5 --brokers 0 &\n",
		wrong+`:3: unknown node 4: playground "demo" makes controllers 1..3 and broker 101`,
		"nothing ran")
	if strings.Contains(out, "===") {
		t.Errorf("something ran:\n%s", out)
	}
	code, out, errOut = h.binaryRun("scenario", "run", "--session", "nobody", file)
	expectRun(t, "no such playground", code, out, errOut, ExitUsage, `no playground running (session "nobody"); start one with: kraftlab up --session nobody`)
	code, out, errOut = h.binaryRun("scenario", "run", "--session", "demo", "--profile", "kafka", file)
	expectRun(t, "--session with --profile", code, out, errOut, ExitUsage, "the running playground of --session keeps its own timing")
}

func TestBinaryTeachingCommands(t *testing.T) {
	h := newHarness(t)
	code, out, errOut := h.binaryRun("tui")
	expectRun(t, "tui without a playground", code, out, errOut, ExitUsage, `no playground running (session "default"); start one with: kraftlab up`)
	pg := h.serve("default", clustertest.Options{})
	code, out, errOut = h.binaryRun("tui")
	expectRun(t, "tui without a terminal", code, out, errOut, ExitUsage, "kraftlab tui needs a terminal")
	code, out, errOut = h.binaryRun("say", "Watch", "node", "2")
	expectRun(t, "say", code, out, errOut, ExitOK, "» Watch node 2\n")
	code, out, errOut = h.binaryRun("events")
	expectRun(t, "events", code, out, errOut, ExitOK, "say                -        Watch node 2")
	code, out, errOut = h.binaryRun("say", "two\nlines")
	expectRun(t, "say two lines", code, out, errOut, ExitUsage, "say text must be one line of printable text")
	code, out, errOut = h.binaryRun("say", strings.Repeat("x", 501))
	expectRun(t, "say too much", code, out, errOut, ExitUsage, "say text is 501 bytes; at most 500")
	code, out, errOut = h.binaryRun("kill", "follower")
	expectRun(t, "kill follower", code, out, errOut, ExitOK, "killed node 2 (Follower in epoch 1)")
	code, out, errOut = h.binaryRun("wait", "node", "follower", "role", "Follower", "--timeout", "5s")
	expectRun(t, "wait node follower", code, out, errOut, ExitOK, "ok: node 3 is Follower")
	code, out, errOut = h.binaryRun("start", "target")
	expectRun(t, "start target", code, out, errOut, ExitOK, "started node 2")
	pg.Do(context.Background(), cluster.Action{Kind: cluster.ActKill, Node: mustRef(t, "2")})
	pg.Do(context.Background(), cluster.Action{Kind: cluster.ActKill, Node: mustRef(t, "3")})
	code, out, errOut = h.binaryRun("kill", "follower")
	expectRun(t, "kill follower with none", code, out, errOut, ExitUsage, "follower: no leader right now, so no follower of one")
	code, out, errOut = h.binaryRunIn("\n", "pause", "Ready?")
	expectRun(t, "pause", code, out, errOut, ExitOK, "Ready?\n[Enter goes on] \n")
	code, out, errOut = h.binaryRunIn("", "pause")
	expectRun(t, "pause without input", code, out, errOut, ExitUsage, "pause: standard input ended, so nobody can press Enter")
	code, out, errOut = h.binaryRun("sleep", "10ms")
	expectRun(t, "sleep", code, out, errOut, ExitOK)
	code, out, errOut = h.binaryRun("--help")
	expectRun(t, "--help", code, out, errOut, ExitOK, "Teach with it:", "tui ", "Open the live screen on a running playground (quitting leaves it running), or read-only on a real Kafka cluster", "say ", "sleep ", "pause ")
	code, out, errOut = h.binaryRun("tui", "--help")
	expectRun(t, "tui --help", code, out, errOut, ExitOK, "Quitting a tui screen (q, then y) leaves the playground running")
}

func mustRef(t *testing.T, s string) condition.NodeRef {
	t.Helper()
	r, err := condition.ParseNodeRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
