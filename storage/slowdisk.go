package storage

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
)

// MaxDiskDelay bounds a SlowDisk's delay: a write that takes longer than
// the quorum's timeouts already stalls a node for good, and a bigger
// delay would only make a kill or a stop wait longer.
const MaxDiskDelay = 10 * time.Second

// SlowDisk is a Disk that takes a delay longer for every write and fsync
// than the Disk under it, as a slow or overloaded device does. The delay
// can change at any time; it is waited on the cluster clock, so a paused
// clock holds the writes and a slowed one stretches them. A SlowDisk is a
// node's hardware: it outlives the node's incarnations, and Cut lets a
// crash end the waits at once. It is safe for concurrent use.
type SlowDisk struct {
	under Disk
	clock *clock.Clock
	delay atomic.Int64 // nanoseconds

	mu sync.Mutex
	// cut is closed while the waits are cut short (Cut(true)); open
	// otherwise, and every wait selects on it.
	cut    chan struct{}
	isCut  bool
	writes atomic.Int64 // writes and fsyncs that waited
}

var _ Disk = (*SlowDisk)(nil)

// NewSlowDisk returns a SlowDisk over under (OS when nil) that waits on c
// (the wall clock when nil). Its delay starts at zero.
func NewSlowDisk(under Disk, c *clock.Clock) *SlowDisk {
	return &SlowDisk{under: diskOrOS(under), clock: c, cut: make(chan struct{})}
}

// SetDelay sets how much longer each write and fsync takes from now on; 0
// makes the disk normal again. A write already waiting keeps its wait.
func (d *SlowDisk) SetDelay(delay time.Duration) error {
	if delay < 0 || delay > MaxDiskDelay {
		return fmt.Errorf("disk delay %v must be between 0 and %v", delay, MaxDiskDelay)
	}
	d.delay.Store(int64(delay))
	return nil
}

// Delay returns the current delay.
func (d *SlowDisk) Delay() time.Duration { return time.Duration(d.delay.Load()) }

// Waited counts the writes and fsyncs that began to wait for the delay.
func (d *SlowDisk) Waited() int64 { return d.writes.Load() }

// Cut, with on, ends every wait at once and lets writes through without
// one until Cut(false): what a crash does to the writes in flight, so
// that a kill or a shutdown never waits for the delay (nor for a paused
// clock). The writes themselves still happen.
func (d *SlowDisk) Cut(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if on == d.isCut {
		return
	}
	d.isCut = on
	if on {
		close(d.cut)
	} else {
		d.cut = make(chan struct{})
	}
}

// wait holds a write or fsync for the delay, or until the waits are cut.
func (d *SlowDisk) wait() {
	delay := d.Delay()
	if delay <= 0 {
		return
	}
	d.mu.Lock()
	cut := d.cut
	d.mu.Unlock()
	select {
	case <-cut:
		return
	default:
	}
	t := d.clock.NewTimer(delay)
	defer t.Stop()
	d.writes.Add(1) // after the timer is armed: tests advance the clock on it
	select {
	case <-t.C:
	case <-cut:
	}
}

// WriteAt implements Disk: it waits, then writes.
func (d *SlowDisk) WriteAt(f *os.File, b []byte, off int64) (int, error) {
	d.wait()
	return d.under.WriteAt(f, b, off)
}

// Sync implements Disk: it waits, then fsyncs.
func (d *SlowDisk) Sync(f *os.File) error {
	d.wait()
	return d.under.Sync(f)
}
