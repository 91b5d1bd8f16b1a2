package storage

import (
	"errors"
	"fmt"
	"math"
)

// Flush makes everything appended before it was called flushed: under
// FlushAlways and FlushInterval it fsyncs now; under FlushNever it only
// advances LastFlushedOffset, since the data is already with the operating
// system. The fsync runs without the log's lock, so appends and reads on
// other goroutines go on meanwhile, as Kafka's leader appends while its
// previous batch is being flushed; LastFlushedOffset moves only to the end
// the fsync covered. Flushes run one at a time, and truncations wait for
// the one running.
//
// A failed fsync fails the log: after one, the operating system may have
// dropped the data it could not write and report the next fsync clean, so
// nothing written since the last good one can be trusted to be durable.
// The log refuses everything until it is reopened (or crashed, which cuts
// it back to the flushed offset first).
func (l *Log) Flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return l.err
	}
	if !l.sync() {
		defer l.mu.Unlock()
		return l.flushLocked()
	}
	end := l.leo()
	// Unsynced segments are the newest ones: the active segment and any
	// rolled since the last fsync. They are marked clean before the fsync,
	// so that an append meanwhile marks the active one dirty again.
	var dirty []*segment
	for i := len(l.segs) - 1; i >= 0 && l.segs[i].dirty; i-- {
		l.segs[i].dirty = false
		dirty = append(dirty, l.segs[i])
	}
	l.mu.Unlock()
	var err error
	for _, s := range dirty {
		if err = l.opts.Disk.Sync(s.file); err != nil {
			err = fmt.Errorf("flush %s: %w", s.path, err)
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.fail(err)
		return l.err
	}
	if l.err != nil {
		return l.err
	}
	return l.markSynced(end)
}

func (l *Log) flushLocked() error {
	end := l.leo()
	if l.sync() {
		for i := len(l.segs) - 1; i >= 0 && l.segs[i].dirty; i-- {
			s := l.segs[i]
			if err := l.opts.Disk.Sync(s.file); err != nil {
				l.fail(fmt.Errorf("flush %s: %w", s.path, err))
				return l.err
			}
			s.dirty = false
		}
		return l.markSynced(end)
	}
	if l.epochsDirty {
		if err := l.writeEpochs(end); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
	l.flushed = end
	return nil
}

// markSynced records that the segments hold the log up to end durably:
// the index entries and epochs of those batches are written, and the
// flushed offset moves there (never back: an inline flush of a later
// append may have passed it).
func (l *Log) markSynced(end int64) error {
	l.lastSync = l.opts.Now()
	// Only a flush that fsyncs writes the index: under FlushNever the
	// quorum flushes after every append, and the index can wait for
	// roll or close since Open rebuilds one that is short of its segment.
	if err := l.writeIndexes(end); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	if l.epochsDirty {
		if err := l.writeEpochs(end); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
	l.flushed = max(l.flushed, end)
	return nil
}

// Close flushes the log (as Flush does), writes what remains of the index
// and closes its files. The Log is unusable afterwards. Closing a log that
// failed closes its files and returns the failure.
func (l *Log) Close() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	if l.err != nil {
		l.closeFiles(l.err)
		return l.err
	}
	err := l.flushLocked()
	if err == nil {
		// Under FlushNever the flush left the index unwritten.
		err = l.writeIndexes(math.MaxInt64)
	}
	if idx := l.active().indexFile; err == nil && idx != nil && l.sync() {
		err = l.opts.Disk.Sync(idx)
	}
	err = errors.Join(err, l.closeFiles(fmt.Errorf("%w: %s", ErrClosed, l.dir)))
	if err != nil {
		return fmt.Errorf("close log %s: %w", l.dir, err)
	}
	return nil
}

// Crash closes the log as if the process had died now: everything after
// LastFlushedOffset is lost, and index entries and epochs not yet written
// stay unwritten. The Log is unusable afterwards; Open recovers the files
// as it would after a real crash. A log that failed is cut back to its
// flushed offset all the same (what a failed fsync covered is not known
// to be durable, and must not come back as if it were) and Crash returns
// its failure.
func (l *Log) Crash() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	failed := l.err
	err := l.loseUnflushed()
	err = errors.Join(err, l.closeFiles(fmt.Errorf("%w: %s crashed", ErrClosed, l.dir)))
	if failed != nil {
		l.err = failed
		return errors.Join(failed, err)
	}
	if err != nil {
		return fmt.Errorf("crash log %s: %w", l.dir, err)
	}
	return nil
}

// loseUnflushed cuts the segment files at the flushed offset, without the
// bookkeeping a live log needs.
func (l *Log) loseUnflushed() error {
	if len(l.segs) == 0 {
		return nil // a failed truncation left none open
	}
	for len(l.segs) > 1 && l.active().base >= l.flushed {
		if err := l.active().remove(); err != nil {
			return err
		}
		l.segs = l.segs[:len(l.segs)-1]
	}
	seg := l.active()
	pos, _, err := seg.find(l.flushed)
	if err != nil {
		return err
	}
	if err := seg.file.Truncate(pos); err != nil {
		return fmt.Errorf("truncate %s: %w", seg.path, err)
	}
	return nil
}

// closeFiles closes every segment and makes further calls return reason.
func (l *Log) closeFiles(reason error) error {
	var err error
	for _, s := range l.segs {
		err = errors.Join(err, s.close())
	}
	l.err, l.closed = reason, true
	return err
}
