//go:build !linux

package benchkit

import (
	"os"
	"time"
)

// SyncData falls back to a full fsync where fdatasync is not available.
func SyncData(f *os.File) error { return f.Sync() }

// Preallocate extends f to size bytes; without fallocate the blocks are
// allocated on first write.
func Preallocate(f *os.File, size int64) error { return f.Truncate(size) }

// preciseSleeper has nothing to prepare where sleepUntil uses the runtime's
// timers.
func preciseSleeper() {}

// sleepUntil blocks until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// machineTicks has no /proc/stat to read; the report leaves the machine's
// columns empty.
func machineTicks() (machineCPU, bool) { return machineCPU{}, false }
