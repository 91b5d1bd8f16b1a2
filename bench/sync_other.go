//go:build !linux

package main

import "os"

// fdatasync falls back to a full fsync where fdatasync is not available.
func fdatasync(f *os.File) error { return f.Sync() }

// preallocate extends f to size bytes; without fallocate the blocks are
// allocated on first write.
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }
