package interop

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: Linux exports them in
// USER_HZ ticks, 100 a second on every architecture Go runs on, whatever
// the kernel's own HZ.
const userHZ = 100

// ProcessCPU is the user plus system CPU time the processes have used so
// far, all their threads included (JIT and GC threads of a JVM, every
// goroutine of a Go process), read from /proc/PID/stat in 10 ms ticks.
func ProcessCPU(pids []int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, fmt.Errorf("cpu of process %d: %w", pid, err)
		}
		d, err := parseProcStatCPU(b)
		if err != nil {
			return 0, fmt.Errorf("cpu of process %d: %w", pid, err)
		}
		total += d
	}
	return total, nil
}

// parseProcStatCPU reads utime and stime (fields 14 and 15) of one
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself, so the fields are counted from
// the last ')'.
func parseProcStatCPU(b []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, errors.New("stat: no command name")
	}
	// After the name: field 3 (state) is the first, so utime is the 12th.
	f := bytes.Fields(b[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("stat: cpu ticks %q: %w", s, err)
		}
		if ticks += n; ticks > 1<<62/uint64(time.Second/userHZ) {
			return 0, fmt.Errorf("stat: cpu ticks %d out of range", ticks)
		}
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}
