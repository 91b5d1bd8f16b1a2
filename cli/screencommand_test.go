package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/control"
)

// A command typed after : on the live screen runs through the command
// tree against the screen's playground: it prints what the same command
// prints in a shell, and a line that is no command, or one with no place
// on a running playground's screen, gets the error a scenario line gets.
func TestScreenCommandPrintsWhatTheShellPrints(t *testing.T) {
	h := newHarness(t)
	h.serve("screen", clustertest.Options{})
	var out, errOut lockedBuffer
	e := h.env(&out, &errOut)
	s, err := control.NewSession(h.home, "screen")
	if err != nil {
		t.Fatal(err)
	}
	run := screenCommand(e, s)
	ctx := testContext(t)

	for _, line := range []string{"nodes", "kraftlab topics list", "status --replication"} {
		var pane bytes.Buffer
		if err := run(ctx, line, &pane); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		args := append(strings.Fields(strings.TrimPrefix(line, "kraftlab ")), "--session", "screen")
		code, shell, errOut := h.run(args...)
		expectRun(t, line, code, shell, errOut, ExitOK)
		// The timestamps of a status move on between the two runs.
		if first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }; first(pane.String()) != first(shell) || strings.Count(pane.String(), "\n") != strings.Count(shell, "\n") {
			t.Errorf("%s: the pane got\n%s\nthe shell printed\n%s", line, pane.String(), shell)
		}
	}
	for line, want := range map[string]string{
		"":                   "type a command",
		"up":                 "the playground runs already",
		"nosuch":             "unknown command",
		"status --session x": "--session has no place",
		"tui":                "cannot be a scenario line",
	} {
		err := run(context.Background(), line, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}
