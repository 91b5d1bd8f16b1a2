package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// These tests run the kraftlab binary as a user would, from a shell.

func TestBinaryBadInput(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		args  []string
		wants []string
	}{
		{[]string{"status"}, []string{`kraftlab: no playground running (session "default"); start one with: kraftlab up`}},
		{[]string{"kil", "leader"}, []string{`kraftlab: unknown command "kil"; did you mean kill?`}},
		{[]string{"kill", "seven"}, []string{`kraftlab: bad node "seven"`}},
		{[]string{"wait", "leder"}, []string{`kraftlab: bad condition "leder"`, "closest form: leader", "(see: kraftlab wait --help)"}},
		{[]string{"wait", "leader", "--timeout", "soon"}, []string{`invalid argument "soon" for "--timeout" flag`}},
	}
	for _, tc := range cases {
		code, out, errOut := h.binaryRun(tc.args...)
		expectRun(t, "kraftlab "+strings.Join(tc.args, " "), code, out, errOut, ExitUsage, tc.wants...)
	}
	code, out, errOut := h.binaryRun("--version")
	expectRun(t, "--version", code, out, errOut, ExitOK, "kraftlab version "+Version)
	code, out, errOut = h.binaryRun("completion", "bash")
	expectRun(t, "completion bash", code, out, errOut, ExitOK, "__start_kraftlab", "__complete ${args[*]}")
	code, out, errOut = h.binaryRun("scenario", "check", "../examples/leader-failover.txt", "../examples/fetch-liveness.txt")
	expectRun(t, "scenario check examples", code, out, errOut, ExitOK, "2 scenario files are valid")
	bad := writeFile(t, t.TempDir(), "bad.txt", "wait leader\nkill nobody\n")
	code, out, errOut = h.binaryRun("scenario", "run", bad)
	expectRun(t, "scenario run bad.txt", code, out, errOut, ExitUsage, bad+`:2: bad node "nobody"`, "nothing ran")
}

// The shell workflow of the issue, from a second shell, against a
// playground served on the model engine in this test process.
func TestBinaryAgainstAPlayground(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.binaryRun("status")
	expectRun(t, "status", code, out, errOut, ExitOK, "LeaderId:               1\n", "CurrentVoters:")
	code, out, errOut = h.binaryRun("kill", "leader")
	expectRun(t, "kill leader", code, out, errOut, ExitOK, "killed node 1 (the leader of epoch 1)")
	code, out, errOut = h.binaryRun("wait", "new-leader", "--timeout", "10s")
	expectRun(t, "wait new-leader", code, out, errOut, ExitOK, "ok: leader 2 in epoch 2")
	code, out, errOut = h.binaryRun("status", "--replication", "--json")
	var rows []view.Replica
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || rows[0].NodeID != 2 || rows[0].Status != "Leader" {
		t.Errorf("status --replication --json: %d %s %s", code, out, errOut)
	}
	code, out, errOut = h.binaryRun("partition", "1", "2")
	expectRun(t, "partition 1 2", code, out, errOut, ExitOK, "partitioned 1 <-> 2")
	code, out, errOut = h.binaryRun("heal")
	expectRun(t, "heal", code, out, errOut, ExitOK, "healed every link")
	code, out, errOut = h.binaryRun("expect", "leader", "==", "1")
	expectRun(t, "expect leader == 1", code, out, errOut, ExitFailed, "kraftlab: expect leader == 1: false; saw: leader 2 in epoch 2")
	code, out, errOut = h.binaryRun("isolate", "3")
	expectRun(t, "isolate 3", code, out, errOut, ExitOK, "isolated node 3")
	code, out, errOut = h.binaryRun("heal", "3")
	expectRun(t, "heal 3", code, out, errOut, ExitOK, "healed every link of node 3 (6 had faults)")
	code, out, errOut = h.binaryRun("expect", "node", "3", "state", "running")
	expectRun(t, "node 3 after heal 3", code, out, errOut, ExitOK)
	code, out, errOut = h.binaryRun("kill", "9")
	expectRun(t, "kill 9", code, out, errOut, ExitUsage, "kraftlab: unknown node 9 (nodes: 1, 2, 3, 101); list them with: kraftlab nodes")
	code, out, errOut = h.binaryRun("__complete", "start", "")
	expectRun(t, "complete start", code, out, errOut, ExitOK, "1\tcontroller, killed", "old-leader")
}

// The product binary never links the model engine the tests use.
func TestBinaryDoesNotLinkTheTestEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/kraftlab/kraftlab").Output()
	if err != nil {
		t.Fatal(err)
	}
	pkgs := string(out)
	if !strings.Contains(pkgs, "github.com/kraftlab/kraftlab/cluster/control") {
		t.Fatalf("go list -deps looks wrong:\n%s", pkgs)
	}
	if strings.Contains(pkgs, filepath.ToSlash("kraftlab/cluster/clustertest")) {
		t.Error("kraftlab links cluster/clustertest")
	}
}
