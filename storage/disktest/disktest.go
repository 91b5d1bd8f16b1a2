// Package disktest gives tests a storage.Disk whose space runs out as a
// real disk's does, and whose fsyncs can fail: the layers above storage
// (the quorum, the servers) meet ENOSPC and EIO without a file system to
// fill. The writes that go through are real writes to the real files.
package disktest

import (
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/kraftlab/kraftlab/storage"
)

// Disk is a storage.Disk with a budget of free bytes. Every byte written
// spends the budget (an overwrite too; truncating or removing files gives
// none back), and a write larger than what is left writes the part that
// fits and fails with ENOSPC, as a full file system does. A new Disk has no
// limit. It is safe for concurrent use.
type Disk struct {
	mu      sync.Mutex
	free    int64 // -1: no limit
	syncErr error
	refused int
}

var _ storage.Disk = (*Disk)(nil)

// New returns a Disk without a limit.
func New() *Disk { return &Disk{free: -1} }

// Fill leaves no free byte: every write fails with ENOSPC.
func (d *Disk) Fill() { d.SetFree(0) }

// SetFree leaves n free bytes.
func (d *Disk) SetFree(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.free = max(n, 0)
}

// Free lifts the limit: space has returned.
func (d *Disk) Free() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.free = -1
}

// FailSync makes every fsync fail with err, as a disk that cannot write
// back its cache does (EIO); nil lets them succeed again.
func (d *Disk) FailSync(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.syncErr = err
}

// Refused counts the writes and fsyncs that failed.
func (d *Disk) Refused() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.refused
}

// WriteAt implements storage.Disk.
func (d *Disk) WriteAt(f *os.File, b []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.free < 0 || int64(len(b)) <= d.free {
		n, err := f.WriteAt(b, off)
		if d.free >= 0 {
			d.free -= int64(n)
		}
		return n, err
	}
	n, err := f.WriteAt(b[:d.free], off)
	d.free -= int64(n)
	d.refused++
	if err == nil {
		err = &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

// Sync implements storage.Disk.
func (d *Disk) Sync(f *os.File) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.syncErr != nil {
		d.refused++
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: d.syncErr}
	}
	return f.Sync()
}
