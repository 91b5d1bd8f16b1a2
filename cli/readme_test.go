package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// TestBinaryREADMETeachingRecipe follows README's "Teach with it" recipe
// as an instructor would, its shell lines in order, from the repository's
// folder, with the real engine: up in the background, a tui screen (in a
// tmux pane, where tmux is installed), the scenario the recipe names run
// step by step with Enter before each line, and a say that reaches the
// screen. Then down.
func TestBinaryREADMETeachingRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the recipe starts a real playground")
	}
	lines := readmeRecipe(t)
	if len(lines) != 4 {
		t.Fatalf("README's recipe has %d lines, this test follows 4:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	h := newHarness(t)
	env := append(os.Environ(), control.EnvHome+"="+h.home, control.EnvSession+"=",
		"PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := testContext(t)
	sh := func(line string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = ".." // README's paths are the repository's
		cmd.Env = env
		return cmd
	}

	// 1: up --headless --session demo &
	upLine, bg := shellLine(lines[0])
	if !bg || !strings.Contains(upLine, " up ") {
		t.Fatalf("the recipe's first line does not start a playground in the background: %q", lines[0])
	}
	var upOut lockedBuffer
	up := sh("exec " + upLine)
	up.Stdout, up.Stderr = &upOut, &upOut
	up.WaitDelay = 10 * time.Second // its output is read until it exits, no longer
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	upDone := make(chan struct{})
	var upErr error
	go func() { upErr = up.Wait(); close(upDone) }()
	defer func() {
		select {
		case <-upDone:
		default:
			up.Process.Kill()
			<-upDone
		}
	}()
	poll.Until(t, time.Minute, "the playground to be up", func() bool { return strings.Contains(upOut.String(), "Stop with") },
		func() string { return upOut.String() })

	// 2: a tui screen on it, left open while the rest runs.
	tuiLine, _ := shellLine(lines[1])
	var screen *tmuxPane
	if tmux, err := exec.LookPath("tmux"); err == nil {
		screen = newTmuxPane(t, tmux, h.home)
		screen.start(env, "cd .. && "+tuiLine+`; echo "[tui exited $?]"; sleep 600`)
		screen.waitFor("the tui screen", func(s string) bool { return strings.Contains(s, "LEADER-SAW") || strings.Contains(s, "[tui exited") })
	} else {
		t.Log("tmux is not installed: checking only that the tui line refuses a shell without a terminal")
		out, err := sh(tuiLine).CombinedOutput()
		if !strings.Contains(string(out), "kraftlab tui needs a terminal") {
			t.Errorf("%s: %v\n%s", tuiLine, err, out)
		}
	}

	// 3: the scenario, Enter before each line.
	runLine, _ := shellLine(lines[2])
	run := sh(runLine)
	run.Stdin = strings.NewReader(strings.Repeat("\n", 200))
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Run(); err != nil || !strings.Contains(out.String(), "--- PASS ") {
		t.Fatalf("%s: %v\n%s", runLine, err, out.String())
	}

	// 4: say reaches every screen.
	sayLine, _ := shellLine(lines[3])
	said, err := sh(sayLine).CombinedOutput()
	if err != nil || !strings.Contains(string(said), "» ") {
		t.Fatalf("%s: %v\n%s", sayLine, err, said)
	}
	text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(said)), "»"))
	if screen != nil {
		screen.waitFor("the say on the screen", func(s string) bool { return strings.Contains(s, text) })
		screen.keys("q", "y")
		s := screen.waitFor("the tui to exit", func(s string) bool { return strings.Contains(s, "[tui exited") })
		if !strings.Contains(s, "[tui exited 0]") {
			t.Errorf("the tui did not exit cleanly:\n%s", s)
		}
	}

	if out, err := sh("kraftlab down --session demo").CombinedOutput(); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	select {
	case <-upDone:
		if upErr != nil {
			t.Errorf("up exited with %v:\n%s", upErr, upOut.String())
		}
	case <-time.After(testTimeout):
		t.Fatal("up did not exit after down")
	}
}

// readmeRecipe returns the shell lines of README's "Teach with it".
func readmeRecipe(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## Teach with it\n")
	if !ok {
		t.Fatal("README has no Teach with it section")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("Teach with it has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// shellLine cuts a shell line's comment and its trailing &, which says it
// runs in the background.
func shellLine(line string) (cmd string, background bool) {
	var quote rune
	end := len(line)
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			continue
		case r == '\'' || r == '"':
			quote = r
			continue
		}
		if r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			end = i
			break
		}
	}
	cmd = strings.TrimSpace(line[:end])
	if c, ok := strings.CutSuffix(cmd, "&"); ok && !strings.HasSuffix(c, "&") {
		return strings.TrimSpace(c), true
	}
	return cmd, false
}

// tmuxPane is a tmux session on a server of its own, so that the test
// never touches anyone's tmux.
type tmuxPane struct {
	t          *testing.T
	tmux, sock string
}

func newTmuxPane(t *testing.T, tmux, dir string) *tmuxPane {
	p := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(func() { exec.Command(tmux, "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start runs a shell command line in an 80x24 pane, with env.
func (p *tmuxPane) start(env []string, line string) {
	var vars []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == control.EnvHome || k == control.EnvSession || k == "PATH" {
			vars = append(vars, shellQuote(kv))
		}
	}
	p.run("new-session", "-d", "-s", "recipe", "-x", "80", "-y", "24", fmt.Sprintf("env %s sh -c %s", strings.Join(vars, " "), shellQuote(line)))
}

func (p *tmuxPane) keys(keys ...string) {
	for _, k := range keys {
		p.run("send-keys", "-t", "recipe", "-l", k)
	}
}

// waitFor polls the pane until cond holds, for at most a minute.
func (p *tmuxPane) waitFor(what string, cond func(string) bool) string {
	p.t.Helper()
	var s string
	var last time.Time
	poll.Until(p.t, time.Minute, what, func() bool {
		if time.Since(last) < 100*time.Millisecond {
			return false // a capture is a process: a few a second will do
		}
		last = time.Now()
		s = p.run("capture-pane", "-p", "-t", "recipe")
		return cond(s)
	}, func() string { return s })
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
