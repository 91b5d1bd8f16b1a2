// Package control is the playground's control API: HTTP and JSON over a Unix
// socket that `kraftlab up` serves inside its session folder, the client the
// CLI uses, and the session folders themselves.
package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Environment variables that locate sessions.
const (
	EnvHome    = "KRAFTLAB_HOME"
	EnvSession = "KRAFTLAB_SESSION"
	// DefaultSession is the session name when none is given.
	DefaultSession = "default"
)

const (
	socketName = "control.sock"
	lockName   = "lock"
	// maxSocketPath is the longest socket path every Unix kernel accepts:
	// sun_path holds 108 bytes on Linux and 104 on macOS, NUL included.
	maxSocketPath = 103
)

// Home returns the folder that holds the session folders: $KRAFTLAB_HOME,
// else $XDG_RUNTIME_DIR/kraftlab, else kraftlab-<uid> in the temp folder.
func Home(getenv func(string) string) string {
	if h := getenv(EnvHome); h != "" {
		return h
	}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" {
		return filepath.Join(x, "kraftlab")
	}
	return filepath.Join(os.TempDir(), "kraftlab-"+strconv.Itoa(os.Getuid()))
}

// SessionName returns the name given by flag, else $KRAFTLAB_SESSION, else
// DefaultSession.
func SessionName(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if s := getenv(EnvSession); s != "" {
		return s
	}
	return DefaultSession
}

// Session is one playground's folder and control socket.
type Session struct {
	Name string
	// Dir is the session folder, mode 0700.
	Dir string
	// Socket is the control socket inside Dir, mode 0600.
	Socket string
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// NewSession locates session name under home. It checks the name and the
// socket path's length but touches nothing on disk.
func NewSession(home, name string) (Session, error) {
	if !validName.MatchString(name) {
		return Session{}, fmt.Errorf("bad session name %q: use up to 40 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return Session{}, fmt.Errorf("session folder: %w", err)
	}
	s := Session{Name: name, Dir: filepath.Join(home, name)}
	s.Socket = filepath.Join(s.Dir, socketName)
	if len(s.Socket) > maxSocketPath {
		return Session{}, fmt.Errorf("control socket path %s is %d bytes, more than the %d a Unix socket allows; set %s to a shorter folder",
			s.Socket, len(s.Socket), maxSocketPath, EnvHome)
	}
	return s, nil
}

// RunningError is returned by Listen when the session already runs.
type RunningError struct {
	Session string
	// PID is the process serving it, 0 if unknown.
	PID int
}

func (e *RunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("playground %q is already running (pid %d)", e.Session, e.PID)
	}
	return fmt.Sprintf("playground %q is already running", e.Session)
}

// Listener is the session's control socket, held with the session's lock.
type Listener struct {
	net.Listener
	lock   *os.File
	once   sync.Once
	closed error
}

// Close closes the socket, removes it and releases the session. Closing
// again does nothing.
func (l *Listener) Close() error {
	l.once.Do(func() {
		err := l.Listener.Close() // a Unix listener removes its socket file
		if uerr := syscall.Flock(int(l.lock.Fd()), syscall.LOCK_UN); err == nil && uerr != nil {
			err = fmt.Errorf("unlock session: %w", uerr)
		}
		if cerr := l.lock.Close(); err == nil {
			err = cerr
		}
		l.closed = err
	})
	return l.closed
}

// Listen claims the session and listens on its control socket. It creates
// the folders (mode 0700) as needed, refuses with a *RunningError while
// another process serves the session, and replaces a stale socket left by
// one that died.
func (s Session) Listen() (*Listener, error) {
	if err := ensureDir(filepath.Dir(s.Dir), false); err != nil {
		return nil, err
	}
	if err := ensureDir(s.Dir, true); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(s.Dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open session lock: %w", err)
	}
	// The lock, not the socket, says who owns the session: it is released
	// by the kernel when its holder dies, so it is never stale.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &RunningError{Session: s.Name, PID: readPID(filepath.Join(s.Dir, lockName))}
		}
		return nil, fmt.Errorf("lock session: %w", err)
	}
	ln, err := s.listenLocked()
	if err != nil {
		syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
		return nil, err
	}
	if err := lock.Truncate(0); err == nil {
		lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Listener{Listener: ln, lock: lock}, nil
}

func (s Session) listenLocked() (net.Listener, error) {
	if _, err := os.Lstat(s.Socket); err == nil {
		// We hold the lock, so whoever made this socket is gone; but if
		// something still answers on it, leave it alone.
		if c, err := net.DialTimeout("unix", s.Socket, time.Second); err == nil {
			c.Close()
			return nil, &RunningError{Session: s.Name}
		}
		if err := os.Remove(s.Socket); err != nil {
			return nil, fmt.Errorf("remove stale control socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", s.Socket)
	if err != nil {
		return nil, fmt.Errorf("listen on control socket: %w", err)
	}
	if err := os.Chmod(s.Socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("protect control socket: %w", err)
	}
	return ln, nil
}

// Dial connects to the session's control socket.
func (s Session) Dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", s.Socket)
	if err != nil && (errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)) {
		return nil, &NoSessionError{Session: s.Name}
	}
	return c, err
}

// NoSessionError says that no playground serves the session.
type NoSessionError struct{ Session string }

func (e *NoSessionError) Error() string {
	return fmt.Sprintf("no playground running (session %q)", e.Session)
}

// ensureDir makes dir if needed and checks that it is a real folder owned
// by this user; private also makes it mode 0700, so that nobody else can
// reach the socket inside.
func ensureDir(dir string, private bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make session folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("session folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("session folder %s is not a folder (a symlink?); remove it or set %s", dir, EnvHome)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("session folder %s belongs to user %d, not to you (%d); set %s to a folder of yours", dir, st.Uid, os.Getuid(), EnvHome)
	}
	if private && fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("protect session folder: %w", err)
		}
	}
	return nil
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
