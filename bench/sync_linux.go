package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync flushes f's data, and only the metadata needed to read it back,
// as etcd's WAL and bbolt do on Linux.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// preallocate reserves disk blocks for f up to size bytes, falling back to
// a sparse extension on file systems without fallocate.
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}
