package storage

import (
	"errors"
	"fmt"
)

// Flush makes everything appended so far flushed: under FlushAlways and
// FlushInterval it fsyncs now; under FlushNever it only advances
// LastFlushedOffset, since the data is already with the operating system.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	if l.sync() {
		// Unsynced segments are the newest ones: the active segment and any
		// rolled since the last fsync.
		for i := len(l.segs) - 1; i >= 0 && l.segs[i].dirty; i-- {
			s := l.segs[i]
			if err := s.file.Sync(); err != nil {
				return fmt.Errorf("flush %s: %w", s.path, err)
			}
			s.dirty = false
		}
		l.lastSync = l.opts.Now()
		// Only a flush that fsyncs writes the index: under FlushNever the
		// quorum flushes after every append, and the index can wait for
		// roll or close since Open rebuilds one that is short of its segment.
		if err := l.writeIndexes(); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
	if l.epochsDirty {
		if err := l.writeEpochs(l.leo()); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
	l.flushed = l.leo()
	return nil
}

// Close flushes the log (as Flush does), writes what remains of the index
// and closes its files. The Log is unusable afterwards. Closing a log that
// failed closes its files and returns the failure.
func (l *Log) Close() error {
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
		err = l.writeIndexes()
	}
	if idx := l.active().indexFile; err == nil && idx != nil && l.sync() {
		err = idx.Sync()
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
// as it would after a real crash.
func (l *Log) Crash() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	if l.err != nil {
		l.closeFiles(l.err)
		return l.err
	}
	err := l.loseUnflushed()
	err = errors.Join(err, l.closeFiles(fmt.Errorf("%w: %s crashed", ErrClosed, l.dir)))
	if err != nil {
		return fmt.Errorf("crash log %s: %w", l.dir, err)
	}
	return nil
}

// loseUnflushed cuts the segment files at the flushed offset, without the
// bookkeeping a live log needs.
func (l *Log) loseUnflushed() error {
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
