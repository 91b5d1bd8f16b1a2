package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/control"
)

func TestSelfCommand(t *testing.T) {
	noPath := func(string) (string, error) { return "", errors.New("not found") }
	cases := []struct {
		arg0, want string
		goRun      bool
	}{
		{"/tmp/go-build123456/b001/exe/kraftlab", "go run .", true},
		// go run's binary from Go's build cache (Go 1.24 on).
		{"/root/.cache/go-build/0d/0d815cee7bb76e1742572dbbb54c2c5b56175304cb218684e162c4faa03184b8-d/kraftlab", "go run .", true},
		{"/home/me/Library/Caches/go-build/f8/f8d5f7ad01d7c3bfe95ef63dda90a5c6227250f2730b946a1719cc8ea4007895-d/kraftlab", "go run .", true},
		// A folder that only looks like one: the prefix does not match.
		{"/opt/0e/0d815cee7bb76e1742572dbbb54c2c5b56175304cb218684e162c4faa03184b8-d/kraftlab", "/opt/0e/0d815cee7bb76e1742572dbbb54c2c5b56175304cb218684e162c4faa03184b8-d/kraftlab", false},
		{"kraftlab", "kraftlab", false},
		{"./kraftlab", "./kraftlab", false},
		{"/home/me/src/kraftlab/kraftlab", "/home/me/src/kraftlab/kraftlab", false},
	}
	for _, tc := range cases {
		got, gr := selfCommand(tc.arg0, noPath)
		if got != tc.want || gr != tc.goRun {
			t.Errorf("selfCommand(%q) = %q, %v; want %q, %v", tc.arg0, got, gr, tc.want, tc.goRun)
		}
	}
	// A path that $PATH finds too is just its name.
	if got, _ := selfCommand(binary, func(string) (string, error) { return binary, nil }); got != "kraftlab" {
		t.Errorf("selfCommand on $PATH = %q, want kraftlab", got)
	}
}

// The hints name the command the user ran: under go run, go run .
func TestBinaryHintsFollowHowItRuns(t *testing.T) {
	h := newHarness(t)
	exe := filepath.Join(t.TempDir(), "go-build42", "b001", "exe", "kraftlab")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Where go run (Go 1.24 on) finds a binary it built before.
	cached := filepath.Join(t.TempDir(), "go-cache", "0d", "0d815cee7bb76e1742572dbbb54c2c5b56175304cb218684e162c4faa03184b8-d", "kraftlab")
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cached, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ exe, path, want string }{
		{exe, os.Getenv("PATH"), "start one with: go run . up\n"},
		{cached, os.Getenv("PATH"), "start one with: go run . up\n"},
		{"kraftlab", filepath.Dir(binary), "start one with: kraftlab up\n"},
		{binary, "", "start one with: " + binary + " up\n"},
	} {
		cmd := exec.Command(tc.exe, "status")
		if tc.exe == "kraftlab" {
			cmd.Path, cmd.Err = binary, nil
		}
		cmd.Env = append(os.Environ(), control.EnvHome+"="+h.home, control.EnvSession+"=", "PATH="+tc.path)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitUsage || !bytes.HasSuffix(errOut.Bytes(), []byte(tc.want)) {
			t.Errorf("%s status: %v, stderr %q, want it to end with %q", tc.exe, err, errOut.String(), tc.want)
		}
	}
}

// README says what go run does with kraftlab's exit code: it prints
// "exit status 2" and exits 1 itself, whatever the code. kraftlab's hint
// names go run . up, whether go run built the binary now or ran the one
// it built before from Go's build cache.
func TestGoRunAsREADMESays(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go run builds kraftlab")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	home := shortHome(t)
	for i := range 2 { // the second run finds the binary in the build cache
		cmd := exec.Command(goTool, "run", ".", "status")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), control.EnvHome+"="+home, control.EnvSession+"=")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("go run . status (run %d): %v, want go run's exit code 1\n%s", i+1, err, errOut.String())
		}
		want := "kraftlab: no playground running (session \"default\"); start one with: go run . up\nexit status 2\n"
		if !strings.HasSuffix(errOut.String(), want) {
			t.Errorf("go run . status (run %d): stderr %q, want it to end with %q", i+1, errOut.String(), want)
		}
	}
}
