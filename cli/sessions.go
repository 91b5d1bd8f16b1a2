package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kraftlab/kraftlab/cluster/control"
)

// Files of a session folder: the control package's lock and socket, and
// the marker in which up writes where its temporary data folder is, so
// that a later up can remove it if this one dies.
const (
	lockFile   = "lock"
	socketFile = "control.sock"
	dataMarker = "data-dir"
)

// staleAge keeps cleanStale away from a session that another up is just
// setting up (it opens the lock file, then takes the lock, then writes its
// PID there): a session is stale once its lock is free and either the PID
// in it is gone or the lock file is older than this.
const staleAge = 10 * time.Second

// writeDataMarker records up's temporary data folder in its session folder.
func writeDataMarker(s control.Session, dir string) {
	os.WriteFile(filepath.Join(s.Dir, dataMarker), []byte(dir+"\n"), 0o600)
}

// removeSessionFiles removes what a session folder holds, and the folder
// if that leaves it empty. The caller holds the session's lock, or knows
// that nobody does.
func removeSessionFiles(dir string) {
	for _, name := range []string{socketFile, dataMarker, lockFile} {
		os.Remove(filepath.Join(dir, name))
	}
	os.Remove(dir) // only if empty: leaves alone what someone else put there
}

// lockHeld says whether a process holds the session's lock, that is, its
// up still runs. A missing lock file is no session.
func lockHeld(dir string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, nil
		}
		return false, err
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, nil
}

// waitSessionGone waits until the session's up has let its session go:
// nodes stopped, data folder and session folder removed, lock released.
func waitSessionGone(ctx context.Context, s control.Session) error {
	for {
		held, err := lockHeld(s.Dir)
		if err != nil {
			return err
		}
		if !held {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// cleanStale removes the session folders under home that a dead process
// left behind (lock not held: up was killed with kill -9, or the machine
// went down), with the temporary data folder each names. It returns one
// line per session removed.
func cleanStale(home string) []string {
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil
	}
	var done []string
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		dir := filepath.Join(home, ent.Name())
		lock, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR, 0)
		if err != nil {
			continue // not a session folder, or not ours to open
		}
		if fi, err := lock.Stat(); err != nil || (time.Since(fi.ModTime()) < staleAge && !deadPID(lock)) {
			lock.Close()
			continue
		}
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			lock.Close()
			continue // its up runs, or is starting
		}
		_, sockErr := os.Lstat(filepath.Join(dir, socketFile))
		data := readDataMarker(dir)
		if sockErr != nil && data == "" {
			// A clean exit of an older kraftlab: only the lock file is left.
			removeSessionFiles(dir)
			lock.Close()
			continue
		}
		line := fmt.Sprintf("removed session %q left by a process that is gone (%s)", ent.Name(), dir)
		if data != "" {
			os.RemoveAll(data)
			line = fmt.Sprintf("removed session %q left by a process that is gone (%s, data %s)", ent.Name(), dir, data)
		}
		removeSessionFiles(dir)
		lock.Close()
		done = append(done, line)
	}
	return done
}

// readDataMarker returns the temporary data folder a session's up made,
// or "" if none, or if the marker names something up would not have made.
func readDataMarker(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, dataMarker))
	if err != nil {
		return ""
	}
	data := strings.TrimSpace(string(b))
	if !filepath.IsAbs(data) || !strings.HasPrefix(filepath.Base(data), "kraftlab-") {
		return ""
	}
	return data
}

// deadPID says whether the lock file names a process that no longer exists.
func deadPID(lock *os.File) bool {
	b := make([]byte, 32)
	n, _ := lock.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// socketOnly is the control socket as the API server sees it: closing it
// (as the server's Shutdown does) removes the socket but keeps the
// session's lock, which up holds until its nodes are stopped and its
// folders removed, so that down can wait for that.
type socketOnly struct{ *control.Listener }

func (l socketOnly) Close() error { return l.Listener.Listener.Close() }
