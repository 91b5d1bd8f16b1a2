package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/control"
)

// A kill -9 of up leaves its session and data folders behind; the next up
// finds them (their lock is free, their process gone) and removes them,
// and leaves a running playground's session alone.
func TestUpRemovesWhatAKilledUpLeft(t *testing.T) {
	h := newHarness(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "up", "--headless", "--session", "dead", "--controllers", "1", "--brokers", "0", "--profile", "fast")
	cmd.Env = append(os.Environ(), control.EnvHome+"="+h.home, control.EnvSession+"=", "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var data string
	sc := bufio.NewScanner(stdout)
	dataLine := regexp.MustCompile(`^  data         (\S+) \(temporary`)
	for data == "" && sc.Scan() {
		if m := dataLine.FindStringSubmatch(sc.Text()); m != nil {
			data = m[1]
		}
	}
	if data == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("up printed no data folder")
	}
	cmd.Process.Kill() // kill -9
	cmd.Wait()
	dead := filepath.Join(h.home, "dead")
	for _, dir := range []string{dead, data} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("a killed up should have left %s: %v", dir, err)
		}
	}
	h.serve("alive", clustertest.Options{})
	// A session whose process cannot yet be told gone (its PID still
	// exists: a zombie not reaped yet) is left to its next up, which
	// removes the data folder it names.
	own := filepath.Join(h.home, "default")
	oldData := filepath.Join(tmp, "kraftlab-default-old")
	for _, d := range []string{own, oldData} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(own, lockFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	os.WriteFile(filepath.Join(own, dataMarker), []byte(oldData+"\n"), 0o600)

	var upOut, upErr lockedBuffer
	upDone := make(chan int, 1)
	go func() { upDone <- run(ctx, []string{"up", "--headless", "--profile", "fast"}, h.env(&upOut, &upErr)) }()
	waitFor(t, "up's banner", func() bool { return strings.Contains(upOut.String(), "Stop with") })
	if want := `removed session "dead" left by a process that is gone (` + dead + ", data " + data + ")"; !strings.Contains(upOut.String(), want) {
		t.Errorf("up does not say %q:\n%s", want, upOut.String())
	}
	if want := "removed data folder " + oldData + `, left in session "default" by a process that is gone`; !strings.Contains(upOut.String(), want) {
		t.Errorf("up does not say %q:\n%s", want, upOut.String())
	}
	for _, dir := range []string{dead, data, oldData} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", dir, err)
		}
	}
	if code, out, errOut := h.run("status", "--session", "alive"); code != 0 {
		t.Errorf("the running playground's session was touched: %s %s", out, errOut)
	}
	code, out, errOut := h.run("down")
	expectRun(t, "down", code, out, errOut, ExitOK, `playground "default" is down: its nodes are stopped and its folders removed`)
	exited(t, "up", upDone)
}
