package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// maxKeptBuf bounds the encoding buffer a Log keeps between appends.
const maxKeptBuf = 8 << 20

// AppendAsLeader encodes records as one batch of leader epoch epoch, every
// record stamped timestampMs, and appends it at the log end offset. It
// returns the offsets the batch took. The records' Offset and Timestamp
// fields are ignored.
func (l *Log) AppendAsLeader(records []Record, epoch int32, timestampMs int64) (base, last int64, err error) {
	return l.appendLeader(records, epoch, timestampMs, false)
}

// AppendControl is AppendAsLeader for a control batch (LeaderChange,
// SnapshotHeader, SnapshotFooter records).
func (l *Log) AppendControl(records []Record, epoch int32, timestampMs int64) (base, last int64, err error) {
	return l.appendLeader(records, epoch, timestampMs, true)
}

func (l *Log) appendLeader(records []Record, epoch int32, ts int64, control bool) (int64, int64, error) {
	if len(records) == 0 {
		return 0, 0, errors.New("append: no records")
	}
	if epoch < 0 {
		return 0, 0, fmt.Errorf("append: negative leader epoch %d", epoch)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, 0, l.err
	}
	if last := l.epochs.lastEpoch(); epoch < last {
		return 0, 0, fmt.Errorf("append: %w: epoch %d, log at %d", ErrStaleEpoch, epoch, last)
	}
	base := l.leo()
	l.buf = AppendBatch(l.buf[:0], BatchSpec{BaseOffset: base, LeaderEpoch: epoch, Control: control, Timestamp: ts}, records)
	if len(l.buf)-logOverhead > math.MaxInt32 {
		return 0, 0, fmt.Errorf("append: batch of %d bytes is too large", len(l.buf))
	}
	err := l.write(l.buf)
	if cap(l.buf) > maxKeptBuf {
		l.buf = nil
	}
	if err != nil {
		return 0, 0, err
	}
	return base, base + int64(len(records)) - 1, nil
}

// AppendBatchesAsLeader appends batches a producer encoded (as a Produce
// request carries them, possibly compressed): each must be whole and pass
// its CRC. Like Kafka's leader it assigns offsets from the log end offset
// and stamps the leader epoch, rewriting both in raw in place; the CRC does
// not cover them. It returns the offsets the batches took. On any error
// nothing is appended.
func (l *Log) AppendBatchesAsLeader(raw []byte, epoch int32) (base, last int64, err error) {
	if len(raw) == 0 {
		return 0, 0, errors.New("append: no batches")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, 0, l.err
	}
	if last := l.epochs.lastEpoch(); epoch < last {
		return 0, 0, fmt.Errorf("append: %w: epoch %d, log at %d", ErrStaleEpoch, epoch, last)
	}
	for pos := 0; pos < len(raw); {
		h, err := verifyBatch(raw[pos:])
		if err != nil {
			return 0, 0, fmt.Errorf("append: batch at position %d: %w", pos, err)
		}
		pos += h.size
	}
	base = l.leo()
	next := base
	for pos := 0; pos < len(raw); {
		h, _ := parseHeader(raw[pos:])
		binary.BigEndian.PutUint64(raw[pos:], uint64(next))
		binary.BigEndian.PutUint32(raw[pos+offsetLeaderEpoch:], uint32(epoch))
		next += h.last - h.base + 1
		pos += h.size
	}
	if err := l.write(raw); err != nil {
		return 0, 0, err
	}
	return base, next - 1, nil
}

// AppendAsFollower appends batches a leader encoded, as they came in a Fetch
// response: they must be whole, pass their CRC, start at the log end offset
// and follow each other, with leader epochs that never decrease. On any
// error nothing is appended.
func (l *Log) AppendAsFollower(raw []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	next, epoch := l.leo(), l.epochs.lastEpoch()
	for pos := 0; pos < len(raw); {
		h, err := verifyBatch(raw[pos:])
		switch {
		case err != nil:
		case h.base != next:
			err = fmt.Errorf("%w: batch of offsets %d-%d, log end offset %d", ErrUnexpectedOffset, h.base, h.last, next)
		case h.epoch < epoch:
			err = fmt.Errorf("%w: batch at offset %d has epoch %d, log at %d", ErrStaleEpoch, h.base, h.epoch, epoch)
		}
		if err != nil {
			return fmt.Errorf("append as follower: batch at position %d: %w", pos, err)
		}
		next, epoch = h.last+1, h.epoch
		pos += h.size
	}
	return l.write(raw)
}

// write appends whole, checked batches that continue the log, rolling
// segments as they fill, then applies the flush policy. On error it undoes
// the part already written.
func (l *Log) write(raw []byte) error {
	orig := l.leo()
	seg := l.active()
	run := 0 // start in raw of the bytes not yet written to seg
	for pos := 0; pos < len(raw); {
		h, _ := parseHeader(raw[pos:])
		at := seg.size + int64(pos-run)
		if at > 0 && (at+int64(h.size) > int64(l.opts.SegmentBytes) || h.last-seg.base > math.MaxInt32) {
			if err := l.writeRun(seg, raw[run:pos]); err != nil {
				return l.undo(orig, err)
			}
			var err error
			if seg, err = l.roll(h.base); err != nil {
				return l.undo(orig, err)
			}
			run, at = pos, 0
		}
		seg.maybeIndex(h.last, at, l.opts.IndexIntervalBytes)
		if l.epochs.assign(h.epoch, h.base) {
			l.epochsDirty = true
		}
		pos += h.size
	}
	if err := l.writeRun(seg, raw[run:]); err != nil {
		return l.undo(orig, err)
	}
	switch l.opts.FlushPolicy {
	case FlushAlways:
		return l.flushLocked()
	case FlushInterval:
		if l.opts.Now().Sub(l.lastSync) >= l.opts.FlushInterval {
			return l.flushLocked()
		}
	}
	return nil
}

// closeIndex syncs (as the policy says) and closes the index file of a
// segment that is no longer the active one.
func (l *Log) closeIndex(s *segment) error {
	if s.indexFile == nil {
		return nil
	}
	if l.sync() {
		if err := l.opts.Disk.Sync(s.indexFile); err != nil {
			return fmt.Errorf("sync %s: %w", s.indexPath(), err)
		}
	}
	err := s.indexFile.Close()
	s.indexFile = nil
	return err
}

// writeIndexes writes every entry of a batch below flushed not yet in an
// index file (the index names flushed batches alone) and closes the index
// files of the segments before the active one once they are whole.
func (l *Log) writeIndexes(flushed int64) error {
	for i := len(l.segs) - 1; i >= 0; i-- {
		s := l.segs[i]
		if i < len(l.segs)-1 && s.indexWritten == len(s.index) && s.indexFile == nil {
			break // older segments were written whole at their roll
		}
		var err error
		if l.scratch, err = s.writeIndexBelow(l.opts.Disk, l.scratch, flushed); err != nil {
			return err
		}
		if i < len(l.segs)-1 && s.indexWritten == len(s.index) {
			if err := l.closeIndex(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeRun appends whole batches to seg's file. A write that fails part
// way (a disk that fills up in the middle of a batch) is cut back to the
// last whole batch at once, so that no later append, flush or read builds
// on a torn one; if even the cut fails, the log fails and refuses
// everything until it is reopened, and Open cuts the torn tail.
func (l *Log) writeRun(seg *segment, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if n, err := l.opts.Disk.WriteAt(seg.file, b, seg.size); err != nil {
		err = fmt.Errorf("append to %s: %w", seg.path, err)
		if n > 0 {
			if terr := seg.file.Truncate(seg.size); terr != nil {
				l.fail(fmt.Errorf("%w; cutting the %d bytes written back to the last whole batch at position %d: %w", err, n, seg.size, terr))
				return l.err
			}
		}
		return err
	}
	seg.dirty = true
	seg.size += int64(len(b))
	// The run's last batch is found by walking it; runs are a handful of
	// batches, and a header read costs nothing next to the write.
	for pos := 0; pos < len(b); {
		h, _ := parseHeader(b[pos:])
		seg.next = h.last + 1
		pos += h.size
	}
	return nil
}

// undo takes the log back to end offset orig after a failed append.
func (l *Log) undo(orig int64, err error) error {
	if terr := l.truncateLocked(orig); terr != nil {
		l.fail(errors.Join(err, terr))
	}
	if l.err != nil {
		return l.err
	}
	return err
}

// roll starts a new active segment at base. The old segment's index gets
// the entries of its flushed batches now; if some of its batches are not
// flushed yet (a follower append that fills it and goes on), its index
// file stays open for the flush that writes the rest (see closeIndexes).
func (l *Log) roll(base int64) (*segment, error) {
	old := l.active()
	var err error
	if l.scratch, err = old.writeIndexBelow(l.opts.Disk, l.scratch, l.flushed); err != nil {
		return nil, err
	}
	if old.indexWritten == len(old.index) {
		if err := l.closeIndex(old); err != nil {
			return nil, fmt.Errorf("roll: %w", err)
		}
	}
	seg, err := createSegment(l.dir, base)
	if err != nil {
		return nil, err
	}
	if l.sync() {
		if err := syncDir(l.dir); err != nil {
			seg.close()
			os.Remove(seg.path)
			os.Remove(seg.indexPath())
			return nil, fmt.Errorf("roll: %w", err)
		}
	}
	l.segs = append(l.segs, seg)
	return seg, nil
}
