package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RecoveryReport says what Open found and repaired.
type RecoveryReport struct {
	// Segment is the file whose torn or corrupt tail was cut off, empty if
	// none was.
	Segment string
	// Position is the byte position the tail was cut at.
	Position int64
	// BytesDropped counts the bytes cut off.
	BytesDropped int64
	// BatchesDropped counts the intact batches among the dropped bytes:
	// batches that passed their CRC but whose offset or epoch did not
	// follow the log.
	BatchesDropped int
	// Reason says why the tail was cut. errors.Is tells a torn write
	// (ErrShortBatch) from damage (ErrCorruptBatch, ErrUnexpectedOffset,
	// ErrStaleEpoch).
	Reason error
	// IndexesRebuilt lists the index files rewritten because they were
	// missing or did not match their segment.
	IndexesRebuilt []string
	// EpochCacheRebuilt says leader-epoch-checkpoint was missing,
	// unreadable or contradicted the segments, and was rebuilt from them.
	EpochCacheRebuilt bool
	// SegmentsDeleted lists segment files deleted: wholly below the log
	// start (a cleanup cut short), or past a cut tail.
	SegmentsDeleted []string
}

// Truncated reports whether Open cut off a tail.
func (r RecoveryReport) Truncated() bool { return r.Segment != "" }

// String describes the repairs in one line, or says "clean".
func (r RecoveryReport) String() string {
	var parts []string
	if r.Truncated() {
		parts = append(parts, fmt.Sprintf("cut %s at position %d: %d bytes (%d intact batches) dropped: %v",
			r.Segment, r.Position, r.BytesDropped, r.BatchesDropped, r.Reason))
	}
	if len(r.IndexesRebuilt) > 0 {
		parts = append(parts, "rebuilt "+strings.Join(r.IndexesRebuilt, ", "))
	}
	if r.EpochCacheRebuilt {
		parts = append(parts, "rebuilt "+epochCacheFile)
	}
	if len(r.SegmentsDeleted) > 0 {
		parts = append(parts, "deleted "+strings.Join(r.SegmentsDeleted, ", "))
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, "; ")
}

// Open opens the log in dir, creating the directory and an empty log if
// needed. It checks every batch on disk first and repairs what a crash
// leaves behind; see the package documentation for what it does with damage.
func Open(dir string, opts Options) (*Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	l := &Log{dir: dir, opts: opts}
	if err := l.load(); err != nil {
		for _, s := range l.segs {
			s.close()
		}
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	l.flushed = l.leo()
	l.lastSync = opts.Now()
	return l, nil
}

func (l *Log) sync() bool { return l.opts.FlushPolicy != FlushNever }

func (l *Log) load() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var bases []int64
	indexes := map[int64]string{}
	for _, e := range entries {
		name := e.Name()
		if base, ok := parseSegmentName(name, logSuffix); ok {
			bases = append(bases, base)
		} else if base, ok := parseSegmentName(name, indexSuffix); ok {
			indexes[base] = name
		} else if name == epochCacheFile+".tmp" || name == logStartFile+".tmp" {
			os.Remove(filepath.Join(l.dir, name))
		}
	}
	slices.Sort(bases)
	for base, name := range indexes {
		if _, found := slices.BinarySearch(bases, base); !found {
			os.Remove(filepath.Join(l.dir, name))
		}
	}
	start, err := readLogStart(l.dir)
	if err != nil {
		return err
	}
	if len(bases) == 0 {
		seg, err := createSegment(l.dir, max(start, 0))
		if err != nil {
			return err
		}
		l.segs, l.start = []*segment{seg}, seg.base
		return l.loadEpochs(nil)
	}
	// Finish an AdvanceLogStart cut short: its segments below the start go.
	for len(bases) > 1 && bases[1] <= start {
		if err := l.deleteSegmentFiles(bases[0]); err != nil {
			return err
		}
		bases = bases[1:]
	}
	epochs, err := l.loadSegments(bases)
	if err != nil {
		return err
	}
	l.start = max(start, l.segs[0].base)
	if l.start > l.leo() {
		// A crash lost data up to past the log start: all that is left is
		// below the start, so the log is empty from there.
		if err := l.truncateFullyLocked(l.start); err != nil {
			return err
		}
		epochs = nil
	}
	return l.loadEpochs(epochs)
}

func (l *Log) deleteSegmentFiles(base int64) error {
	path := filepath.Join(l.dir, segmentName(base)+logSuffix)
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("delete segment: %w", err)
	}
	os.Remove(filepath.Join(l.dir, segmentName(base)+indexSuffix))
	l.recovery.SegmentsDeleted = append(l.recovery.SegmentsDeleted, filepath.Base(path))
	return nil
}

// loadSegments opens and scans the segments with the given base offsets,
// cutting a torn tail, and returns the epoch changes their batches show.
func (l *Log) loadSegments(bases []int64) ([]EpochEntry, error) {
	var epochs []EpochEntry
	var buf []byte
	lastEpoch := int32(-1)
	for i, base := range bases {
		path := filepath.Join(l.dir, segmentName(base)+logSuffix)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("open segment: %w", err)
		}
		seg := &segment{base: base, next: base, file: f, path: path}
		l.segs = append(l.segs, seg)
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("open segment: %w", err)
		}
		if prev := l.segs[max(i-1, 0)]; i > 0 && base != prev.next {
			// A previous segment that lost its tail in a crash is fine as
			// long as nothing was written after it.
			where := fmt.Sprintf("%s starts at offset %d but %s ends at offset %d", path, base, prev.path, prev.next)
			l.segs = l.segs[:i]
			f.Close()
			if err := l.dropEmptyTail(where, bases[i:]); err != nil {
				return nil, err
			}
			return epochs, prev.openIndex()
		}
		w := &fileWindow{f: f, path: path, size: st.Size(), buf: buf[:0]}
		res, err := scanSegment(w, base, lastEpoch, l.opts.IndexIntervalBytes, &epochs)
		buf = w.buf
		if err != nil {
			return nil, err
		}
		seg.size, seg.next, seg.index, lastEpoch = res.size, res.next, res.index, res.lastEpoch
		last := i == len(bases)-1
		if res.damage != nil {
			if err := l.cutTail(seg, w.size, res, bases[i+1:]); err != nil {
				return nil, err
			}
			last = true
		}
		if err := l.checkIndex(seg, last); err != nil {
			return nil, err
		}
		if last {
			break
		}
	}
	return epochs, nil
}

// cutTail cuts the damaged tail of seg off, if it is a tail: nothing intact
// follows it, in seg or in the later segments.
func (l *Log) cutTail(seg *segment, fileSize int64, res segmentScan, later []int64) error {
	where := fmt.Sprintf("%s: batch at position %d (offset %d expected): %v", seg.path, res.size, res.next, res.damage)
	if res.intactAfter >= 0 {
		return fmt.Errorf("%w: %s, yet an intact batch follows at position %d", ErrCorruptLog, where, res.intactAfter)
	}
	if err := l.dropEmptyTail(where, later); err != nil {
		return err
	}
	if err := seg.file.Truncate(res.size); err != nil {
		return fmt.Errorf("cut tail of %s: %w", seg.path, err)
	}
	if l.sync() {
		if err := seg.file.Sync(); err != nil {
			return fmt.Errorf("cut tail of %s: %w", seg.path, err)
		}
	}
	l.recovery.Segment = filepath.Base(seg.path)
	l.recovery.Position = res.size
	l.recovery.BytesDropped = fileSize - res.size
	l.recovery.BatchesDropped = res.dropped
	l.recovery.Reason = res.damage
	return nil
}

// dropEmptyTail deletes the segments with the given base offsets, which
// follow a break in the log described by where, if none of them holds data;
// otherwise the break is corruption.
func (l *Log) dropEmptyTail(where string, later []int64) error {
	for _, base := range later {
		path := filepath.Join(l.dir, segmentName(base)+logSuffix)
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("open segment: %w", err)
		}
		if st.Size() > 0 {
			return fmt.Errorf("%w: %s, yet %s holds data", ErrCorruptLog, where, path)
		}
	}
	for _, base := range later {
		if err := l.deleteSegmentFiles(base); err != nil {
			return err
		}
	}
	return nil
}

// checkIndex compares seg's index file with the index its scan rebuilt and
// rewrites the file if they differ. The active segment keeps it open.
func (l *Log) checkIndex(seg *segment, active bool) error {
	want := appendIndexEntries(nil, seg.index)
	have, err := os.ReadFile(seg.indexPath())
	if err != nil || !bytes.Equal(have, want) {
		if err := os.WriteFile(seg.indexPath(), want, 0o644); err != nil {
			return fmt.Errorf("rebuild index: %w", err)
		}
		l.recovery.IndexesRebuilt = append(l.recovery.IndexesRebuilt, filepath.Base(seg.indexPath()))
	}
	seg.indexWritten = len(seg.index)
	if active {
		return seg.openIndex()
	}
	return nil
}

// loadEpochs sets the epoch cache from leader-epoch-checkpoint, checked
// against the epoch changes the segments show (raw, not yet cut at the log
// start). Where they disagree, the segments win.
func (l *Log) loadEpochs(raw []EpochEntry) error {
	derived := epochCache{entries: raw}
	derived.truncateFromStart(l.start)
	stored, ok, err := readEpochCache(l.dir)
	leo := l.leo()
	kept := epochCache{entries: slices.Clone(stored)}
	// Epochs past the log end lost their batches in a crash. An epoch
	// starting right at the end is kept only in an empty log, where it
	// comes from AdvanceLogStart and no batch can confirm it.
	n := len(kept.entries)
	for n > 0 && (kept.entries[n-1].StartOffset > leo || (leo > l.start && kept.entries[n-1].StartOffset == leo)) {
		n--
	}
	kept.entries = kept.entries[:n]
	kept.truncateFromStart(l.start)
	if ok && (len(derived.entries) == 0 || slices.Equal(kept.entries, derived.entries)) {
		l.epochs = kept
		if slices.Equal(stored, kept.entries) {
			return nil
		}
	} else {
		l.epochs = derived
		l.recovery.EpochCacheRebuilt = err != nil || len(derived.entries) > 0
	}
	return l.writeEpochs()
}

// writeEpochs persists the epoch cache atomically.
func (l *Log) writeEpochs() error {
	if err := writeFileAtomic(l.dir, epochCacheFile, l.epochs.marshal(), l.sync()); err != nil {
		return err
	}
	l.epochsDirty = false
	return nil
}
