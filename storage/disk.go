package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Disk carries the writes and fsyncs of a Log, its Snapshots and a
// QuorumStateFile to their files: the operating system's (OS) in
// production. Tests swap in a Disk that fails as a full or broken one does
// (see package disktest), to see what the layers above make of it. Files
// are opened, read, renamed and truncated with the operating system
// directly: a full disk refuses new data, and those calls need none.
type Disk interface {
	// WriteAt writes b to f at off as (*os.File).WriteAt does: it may
	// write part of b before it fails.
	WriteAt(f *os.File, b []byte, off int64) (int, error)
	// Sync commits f to stable storage as (*os.File).Sync does.
	Sync(f *os.File) error
}

// OS is the Disk of the operating system's files.
var OS Disk = osDisk{}

type osDisk struct{}

func (osDisk) WriteAt(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }
func (osDisk) Sync(f *os.File) error                                { return f.Sync() }

func diskOrOS(d Disk) Disk {
	if d == nil {
		return OS
	}
	return d
}

// Fault is what kind of disk trouble an error reports, as an operator
// would name it; NoFault for an error that did not come from a file.
type Fault uint8

// The faults.
const (
	NoFault Fault = iota
	// FaultDiskFull: no space left on the device, or the quota is used up
	// (ENOSPC, EDQUOT). Freeing space cures it.
	FaultDiskFull
	// FaultReadOnly: the file system is mounted read-only (EROFS).
	FaultReadOnly
	// FaultIO: any other error the operating system returned for a file
	// (EIO, EMFILE, ...).
	FaultIO
)

var faultNames = [...]string{NoFault: "no fault", FaultDiskFull: "disk full", FaultReadOnly: "read-only file system", FaultIO: "disk error"}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", f)
}

// FaultOf sorts an error by the disk trouble it reports.
func FaultOf(err error) Fault {
	switch {
	case err == nil:
		return NoFault
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return FaultDiskFull
	case errors.Is(err, syscall.EROFS):
		return FaultReadOnly
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	var sysErr *os.SyscallError
	if errors.As(err, &pathErr) || errors.As(err, &linkErr) || errors.As(err, &sysErr) {
		return FaultIO
	}
	return NoFault
}

// Describe words err for an operator: led by the kind of disk trouble it
// reports, if any ("disk full: ..."), so that the cure comes first.
func Describe(err error) string {
	f := FaultOf(err)
	if f == NoFault {
		return err.Error()
	}
	return f.String() + ": " + err.Error()
}

// probeName is the file ProbeWrite writes.
const probeName = "write-probe.tmp"

// probeBytes is what ProbeWrite writes: one block of the common file
// systems (ext4, xfs, tmpfs pages), the least a new file takes.
const probeBytes = 4096

// ProbeWrite checks that dir takes new data again: it writes a block to a
// file there through disk, fsyncs it and removes it. A node that stopped
// on a disk fault probes before it starts again, so that it does not start
// only to fail at its first write.
func ProbeWrite(disk Disk, dir string) error {
	disk = diskOrOS(disk)
	path := filepath.Join(dir, probeName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("probe %s: %w", dir, err)
	}
	_, err = disk.WriteAt(f, make([]byte, probeBytes), 0)
	if err == nil {
		err = disk.Sync(f)
	}
	err = errors.Join(err, f.Close(), os.Remove(path))
	if err != nil {
		return fmt.Errorf("probe %s: %w", dir, err)
	}
	return nil
}
