package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/control"
)

// binary is the kraftlab executable built for the tests that run it as a
// user would.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "klbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "kraftlab")
	build := exec.Command("go", "build", "-o", binary, "github.com/kraftlab/kraftlab")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build kraftlab:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// lockedBuffer is a bytes.Buffer safe for a command writing in one
// goroutine while the test reads in another.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// shortHome returns a folder for sessions with a path short enough for
// Unix sockets.
func shortHome(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "klh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// modelOpen starts playgrounds on the model engine of clustertest.
func modelOpen(opt clustertest.Options) func(context.Context, cluster.Config) (*cluster.Playground, error) {
	return func(ctx context.Context, cfg cluster.Config) (*cluster.Playground, error) {
		return cluster.OpenWith(ctx, cfg, clustertest.Start(opt))
	}
}

type harness struct {
	t    *testing.T
	home string
}

func newHarness(t *testing.T) *harness { return &harness{t: t, home: shortHome(t)} }

func (h *harness) env(out, errOut *lockedBuffer) *env {
	return &env{
		stdout: out, stderr: errOut,
		getenv: func(k string) string {
			if k == control.EnvHome {
				return h.home
			}
			return ""
		},
		open: modelOpen(clustertest.Options{}),
	}
}

// testTimeout bounds every command a test runs, in process or as a
// binary, so that a stuck playground fails the test instead of hanging it
// until go test's own timeout.
const testTimeout = 2 * time.Minute

// testContext returns a context that ends after testTimeout or with the
// test.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// exited waits for the exit code of a command run in the background.
func exited(t *testing.T, what string, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(testTimeout):
		t.Fatalf("%s did not exit within %v", what, testTimeout)
		return -1
	}
}

// run runs kraftlab in process and returns its exit code and output.
func (h *harness) run(args ...string) (int, string, string) {
	h.t.Helper()
	var out, errOut lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	code := run(ctx, args, h.env(&out, &errOut))
	return code, out.String(), errOut.String()
}

// serve runs a model playground on session name, as up would, until the
// test ends.
func (h *harness) serve(name string, opt clustertest.Options) *cluster.Playground {
	h.t.Helper()
	s, err := control.NewSession(h.home, name)
	if err != nil {
		h.t.Fatal(err)
	}
	cfg, _ := cluster.NewConfig(3, 1, cluster.ProfileFast, nil, "")
	pg, err := cluster.OpenWith(context.Background(), cfg, clustertest.Start(opt))
	if err != nil {
		h.t.Fatal(err)
	}
	return h.serveOn(s, pg)
}

// serveOn serves pg's control API on session s, as up does, until the
// test ends.
func (h *harness) serveOn(s control.Session, pg *cluster.Playground) *cluster.Playground {
	h.t.Helper()
	ln, err := s.Listen()
	if err != nil {
		pg.Close()
		h.t.Fatal(err)
	}
	srv := control.NewServer(pg, func() {})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		pg.Close()
		ln.Close()
	})
	return pg
}

// binaryRun runs the built kraftlab with KRAFTLAB_HOME set to the
// harness's home.
func (h *harness) binaryRun(args ...string) (int, string, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	// As for a user who installed it: on $PATH, so that its hints say kraftlab.
	cmd.Env = append(os.Environ(), control.EnvHome+"="+h.home, control.EnvSession+"=",
		"PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
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

// expect checks an exit code and that stdout+stderr contain every want.
func expectRun(t *testing.T, what string, code int, out, errOut string, wantCode int, wants ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, code, wantCode, out, errOut)
	}
	for _, w := range wants {
		if !strings.Contains(out+errOut, w) {
			t.Errorf("%s: output lacks %q\nstdout: %s\nstderr: %s", what, w, out, errOut)
		}
	}
}
