package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// `kraftlab up --headless | head -1`: once the reader of up's standard
// output is gone, the next line up prints must not kill the playground
// (Go's runtime dies of SIGPIPE on a closed stdout unless told otherwise).
// up keeps serving, says so once on standard error, and still shuts down
// cleanly, removing its temporary folder and socket, on kraftlab down.
func TestBinaryUpOutlivesAClosedStdout(t *testing.T) {
	h := newHarness(t)
	tmp := t.TempDir() // up's temporary data folder goes here
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, binary, "up", "--headless", "--controllers", "1", "--brokers", "0", "--profile", "fast")
	cmd.Env = append(os.Environ(), control.EnvHome+"="+h.home, control.EnvSession+"=", "TMPDIR="+tmp)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var waitOnce sync.Once
	var waitErr error
	wait := func() error { waitOnce.Do(func() { waitErr = cmd.Wait() }); return waitErr }
	defer func() {
		cmd.Process.Kill()
		wait()
	}()

	// head -1: read the first line, then go away.
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil || !strings.Contains(line, "is up") {
		t.Fatalf("first line %q, %v; stderr: %s", line, err, errOut.String())
	}
	s, err := control.NewSession(h.home, control.DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Socket); err != nil {
		t.Fatalf("no control socket: %v", err)
	}

	// Make up print: every action is an event on its stdout.
	for _, args := range [][]string{{"kill", "1"}, {"start", "1"}, {"kill", "1"}, {"start", "1"}} {
		if code, out, eo := h.binaryRun(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s %s; up's stderr: %s", args, code, out, eo, errOut.String())
		}
	}
	poll.Until(t, 30*time.Second, "up to notice its closed stdout",
		func() bool { return strings.Contains(errOut.String(), "standard output is gone") },
		func() string { return "stderr: " + errOut.String() })
	if code, out, eo := h.binaryRun("status"); code != 0 || !strings.Contains(out, "LeaderId") {
		t.Fatalf("status after stdout closed: exit %d: %s %s; up's stderr: %s", code, out, eo, errOut.String())
	}

	if code, out, eo := h.binaryRun("down"); code != 0 {
		t.Fatalf("down: exit %d: %s %s", code, out, eo)
	}
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Fatalf("up exited with %v; stderr: %s", err, errOut.String())
		}
	case <-time.After(testTimeout):
		t.Fatal("up did not exit after down")
	}
	if _, err := os.Stat(s.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("control socket left behind: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "kraftlab-*"))
	if len(left) > 0 {
		t.Errorf("temporary folders left behind: %v", left)
	}
	if bytes.Contains([]byte(errOut.String()), []byte("panic")) {
		t.Errorf("stderr: %s", errOut.String())
	}
}
