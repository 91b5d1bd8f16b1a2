package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
	for _, tc := range []struct{ exe, path, want string }{
		{exe, os.Getenv("PATH"), "start one with: go run . up\n"},
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
