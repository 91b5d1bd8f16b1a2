package benchkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// SyncData flushes f's data, and only the metadata needed to read it back,
// as etcd's WAL and bbolt do on Linux (fdatasync).
func SyncData(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// Preallocate reserves disk blocks for f up to size bytes, falling back to
// a sparse extension on file systems without fallocate.
func Preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}

// preciseSleeper prepares the calling goroutine to sleep with sleepUntil:
// it gets a thread of its own whose timer slack is 1 ns instead of Linux's
// default 50 µs. The thread is thrown away when the goroutine ends, since
// it stays locked.
func preciseSleeper() {
	runtime.LockOSThread()
	// Without it sleeps are only a little later; nothing to report.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

// sleepUntil blocks until t. The runtime's timers wake up to a millisecond
// late on some Linux machines, which an open loop at thousands of records
// per second would charge to the system under test; nanosleep parks the
// thread on a high-resolution timer instead.
func sleepUntil(t time.Time) {
	for d := time.Until(t); d > 0; d = time.Until(t) {
		ts := unix.NsecToTimespec(int64(d))
		// EINTR (the runtime's preemption signal) just goes round again.
		_ = unix.Nanosleep(&ts, nil)
	}
}

// machineTicks reads the whole machine's CPU time from /proc/stat's first
// line: every core's, every process's, in clock ticks.
func machineTicks() (machineCPU, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, false
	}
	m, err := parseProcStat(b)
	return m, err == nil
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: user, nice,
// system, idle, iowait, irq, softirq and steal ticks (guest time is already
// inside user and nice, so it is not added again).
func parseProcStat(b []byte) (machineCPU, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 6 || string(fields[0]) != "cpu" {
		return machineCPU{}, fmt.Errorf("/proc/stat: no aggregate cpu line")
	}
	var v [8]uint64
	for i := range v {
		if i+1 >= len(fields) {
			break // older kernels stop before steal
		}
		n, err := strconv.ParseUint(string(fields[i+1]), 10, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("/proc/stat: field %d: %w", i+1, err)
		}
		v[i] = n
	}
	var m machineCPU
	for _, n := range v {
		m.Total += n
	}
	m.Idle = v[3]
	m.IOWait = v[4]
	return m, nil
}
