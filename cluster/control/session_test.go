package control

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shortDir returns a temporary folder with a path short enough for a Unix
// socket (t.TempDir paths can exceed sun_path).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "kl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestHomeAndSessionName(t *testing.T) {
	if h := Home(env(map[string]string{EnvHome: "/a", "XDG_RUNTIME_DIR": "/run/user/7"})); h != "/a" {
		t.Errorf("home with KRAFTLAB_HOME = %s", h)
	}
	if h := Home(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/7"})); h != "/run/user/7/kraftlab" {
		t.Errorf("home with XDG_RUNTIME_DIR = %s", h)
	}
	if h := Home(env(nil)); !strings.HasPrefix(h, os.TempDir()) || !strings.Contains(h, "kraftlab-") {
		t.Errorf("fallback home = %s", h)
	}
	if s := SessionName("x", env(map[string]string{EnvSession: "y"})); s != "x" {
		t.Errorf("flag session = %s", s)
	}
	if s := SessionName("", env(map[string]string{EnvSession: "y"})); s != "y" {
		t.Errorf("env session = %s", s)
	}
	if s := SessionName("", env(nil)); s != DefaultSession {
		t.Errorf("default session = %s", s)
	}
}

func TestNewSessionChecksNameAndPathLength(t *testing.T) {
	for _, name := range []string{"", "../x", "a/b", ".hidden", "-x", strings.Repeat("a", 41), "sp ace"} {
		if _, err := NewSession("/tmp", name); err == nil || !strings.Contains(err.Error(), "bad session name") {
			t.Errorf("NewSession(%q) = %v", name, err)
		}
	}
	long := "/tmp/" + strings.Repeat("d", 100)
	_, err := NewSession(long, "default")
	if err == nil || !strings.Contains(err.Error(), "more than the 103 a Unix socket allows; set KRAFTLAB_HOME") {
		t.Errorf("long path = %v", err)
	}
	s, err := NewSession("/tmp/h", "demo-1")
	if err != nil || s.Dir != "/tmp/h/demo-1" || s.Socket != "/tmp/h/demo-1/control.sock" {
		t.Errorf("session %+v, %v", s, err)
	}
}

func TestListenModesAndSecondUpRefused(t *testing.T) {
	home := filepath.Join(shortDir(t), "h")
	s, err := NewSession(home, "default")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{home: 0o700, s.Dir: 0o700, s.Socket: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	_, err = s.Listen()
	var running *RunningError
	if !errors.As(err, &running) || running.PID != os.Getpid() || err.Error() != `playground "default" is already running (pid `+strconv.Itoa(os.Getpid())+`)` {
		t.Errorf("second listen = %v", err)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Socket); !os.IsNotExist(err) {
		t.Errorf("socket left after close: %v", err)
	}
	ln, err = s.Listen()
	if err != nil {
		t.Fatalf("listen after close: %v", err)
	}
	ln.Close()
}

func TestStaleSocketReplaced(t *testing.T) {
	s, _ := NewSession(shortDir(t), "stale")
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A process that died left its socket file behind.
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	dead.SetUnlinkOnClose(false)
	dead.Close()
	if _, err := os.Stat(s.Socket); err != nil {
		t.Fatalf("setup: stale socket missing: %v", err)
	}
	if _, err := NewClient(s).Status(context.Background()); !isNoSession(err) {
		t.Errorf("status on a stale socket = %v, want no session", err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	defer ln.Close()
	c, err := s.Dial(context.Background())
	if err != nil {
		t.Fatalf("dial new socket: %v", err)
	}
	c.Close()
}

func TestLiveSocketWithoutLockRefused(t *testing.T) {
	s, _ := NewSession(shortDir(t), "live")
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("unix", s.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = s.Listen()
	var running *RunningError
	if !errors.As(err, &running) {
		t.Errorf("listen over a live socket = %v", err)
	}
}

func TestSessionFolderMustBeOurs(t *testing.T) {
	home := shortDir(t)
	target := shortDir(t)
	if err := os.Symlink(target, filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	s, _ := NewSession(home, "link")
	if _, err := s.Listen(); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Errorf("symlinked session folder = %v", err)
	}
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	theirs := filepath.Join(home, "theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	s, _ = NewSession(home, "theirs")
	if _, err := s.Listen(); err == nil || !strings.Contains(err.Error(), "belongs to user 12345") {
		t.Errorf("foreign session folder = %v", err)
	}
}

func TestDialWithoutSession(t *testing.T) {
	s, _ := NewSession(shortDir(t), "none")
	_, err := s.Dial(context.Background())
	if !isNoSession(err) || err.Error() != `no playground running (session "none")` {
		t.Errorf("dial = %v", err)
	}
}

func isNoSession(err error) bool {
	var ns *NoSessionError
	return errors.As(err, &ns)
}
