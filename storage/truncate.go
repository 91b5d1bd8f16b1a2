package storage

import (
	"errors"
	"fmt"
	"slices"
)

// TruncateTo removes the tail of the log from offset on, with whole batches:
// every batch whose last offset is at least offset goes, so a truncation
// point inside a batch takes the log end offset down to that batch's base.
// (Raft truncates at epoch boundaries, which are batch boundaries.) Later
// segments are deleted, and the epoch cache forgets the epochs that started
// in the removed tail. An offset at or past the log end changes nothing; one
// below the log start is an error (see TruncateFullyAndStartAt).
func (l *Log) TruncateTo(offset int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if offset < l.start {
		return fmt.Errorf("truncate to %d: %w: below the log start %d", offset, ErrOffsetOutOfRange, l.start)
	}
	if offset >= l.leo() {
		return nil
	}
	// The epochs the truncation leaves are written first: a crash before
	// the segments are cut then leaves the checkpoint behind them, which
	// Open mends, rather than ahead of them, which it takes for lost data.
	_, end, err := l.segmentFor(offset).find(offset)
	if err != nil {
		return err
	}
	left := epochCache{entries: slices.Clone(l.epochs.entries)}
	left.truncateFromEnd(end)
	if _, err := l.writeEpochCache(left, min(l.flushed, end), end); err != nil {
		return err
	}
	if err := l.truncateLocked(offset); err != nil {
		l.fail(err)
		return l.err
	}
	return l.writeEpochs(l.flushed)
}

// truncateLocked removes every batch whose last offset is at least offset,
// the segments after them, and index entries past the remaining bytes, even
// those of bytes never written.
func (l *Log) truncateLocked(offset int64) error {
	for len(l.segs) > 1 && l.active().base >= offset {
		if err := l.active().remove(); err != nil {
			return err
		}
		l.segs = l.segs[:len(l.segs)-1]
	}
	seg := l.active()
	pos, next, err := seg.find(offset)
	if err != nil {
		return err
	}
	if err := seg.truncate(pos, next); err != nil {
		return err
	}
	if seg.indexFile == nil {
		if err := seg.openIndex(); err != nil {
			return err
		}
	}
	if l.epochs.truncateFromEnd(seg.next) {
		l.epochsDirty = true
	}
	l.flushed = min(l.flushed, seg.next)
	if seg.next < l.start {
		// The log start was inside the batch just removed.
		return l.truncateFullyLocked(l.start)
	}
	return nil
}

// AdvanceLogStart moves the log start offset up to offset, which may be as
// far as the log end offset; a lower offset changes nothing. The new start
// is checkpointed first, then the segments wholly below it are deleted, so
// a crash in between only leaves Open some segments to delete. When the
// start reaches the log end, the active segment is replaced by an empty one
// and the log holds no batches; the epoch cache keeps the epoch of the end.
func (l *Log) AdvanceLogStart(offset int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if offset <= l.start {
		return nil
	}
	if end := l.leo(); offset > end {
		return fmt.Errorf("advance log start to %d: %w: log end offset is %d", offset, ErrOffsetOutOfRange, end)
	}
	if err := writeLogStart(l.opts.Disk, l.dir, offset, l.sync()); err != nil {
		return err
	}
	l.start = offset
	if l.epochs.truncateFromStart(offset) {
		if err := l.writeEpochs(l.flushed); err != nil {
			return err
		}
	}
	if offset == l.leo() && l.active().size > 0 {
		if _, err := l.roll(offset); err != nil {
			return err
		}
	}
	for len(l.segs) > 1 && l.segs[1].base <= offset {
		if err := l.segs[0].remove(); err != nil {
			return err
		}
		l.segs = l.segs[1:]
	}
	return nil
}

// TruncateFullyAndStartAt empties the log and restarts it at offset, as a
// follower does before it loads a snapshot that ends past its log: all
// segments are deleted, the epoch cache is cleared, and the log start and
// end offsets become offset.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("truncate fully: negative offset %d", offset)
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if err := writeLogStart(l.opts.Disk, l.dir, offset, l.sync()); err != nil {
		return err
	}
	// Emptied first, for the reason TruncateTo gives.
	if _, err := l.writeEpochCache(epochCache{}, offset, offset); err != nil {
		return err
	}
	if err := l.truncateFullyLocked(offset); err != nil {
		l.fail(err)
		return l.err
	}
	return l.writeEpochs(offset)
}

func (l *Log) truncateFullyLocked(offset int64) error {
	var err error
	for _, s := range l.segs {
		err = errors.Join(err, s.remove())
	}
	l.segs = nil
	if err != nil {
		return err
	}
	seg, err := createSegment(l.dir, offset)
	if err != nil {
		return err
	}
	l.segs = []*segment{seg}
	l.start, l.flushed = offset, offset
	l.epochs.entries = l.epochs.entries[:0]
	l.epochsDirty = true
	if l.sync() {
		return syncDir(l.dir)
	}
	return nil
}
