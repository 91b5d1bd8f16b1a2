package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// SnapshotsSetAside lists the corrupt snapshot files of the directory,
	// renamed with a .corrupt suffix and kept for inspection: the node
	// does without them (it fetches the leader's snapshot if it needs
	// one). A file set aside at an earlier start is listed while it is
	// there.
	SnapshotsSetAside []SnapshotSetAside
	// SetAside lists the damaged segment files kept for inspection under
	// Options.SetAsideDamage: each renamed or copied with a .corrupt
	// suffix before the log was cut.
	SetAside []string

	// Lost is at least how many records the log had flushed, and so may
	// have acknowledged, that are gone: what the files show beyond what
	// survives (see LostEvidence). A crash only loses unflushed records,
	// which the log never acknowledged; these are more. For a voter this
	// is dangerous: with records it acknowledged gone, it can vote for a
	// candidate that lacks committed records and help elect a leader
	// that does (what the directory ids of Kafka's KIP-853 guard
	// against). 0 when nothing shows a loss.
	Lost int64
	// LostExact says Lost is the exact count rather than a lower bound.
	LostExact bool
	// LostEvidence says, one sentence each, what shows the loss.
	LostEvidence []string
}

// LostRecords reports whether the files show that records the log had
// flushed are gone.
func (r RecoveryReport) LostRecords() bool { return r.Lost > 0 }

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
	if len(r.SetAside) > 0 {
		parts = append(parts, "set damaged segments aside as "+strings.Join(r.SetAside, ", "))
	}
	for _, a := range r.SnapshotsSetAside {
		parts = append(parts, fmt.Sprintf("set corrupt snapshot %s aside as %s: %v", a.File, a.KeptAs, a.Reason))
	}
	if r.Lost > 0 {
		n := "at least "
		if r.LostExact {
			n = ""
		}
		parts = append(parts, fmt.Sprintf("LOST %s%d records the log had flushed (%s); "+
			"a voter that lost records it acknowledged can help elect a leader that lacks committed records (Kafka's KIP-853 directory ids guard against this)",
			n, r.Lost, strings.Join(r.LostEvidence, "; ")))
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
	snaps, err := recoverSnapshots(l.dir, entries)
	if err != nil {
		return err
	}
	l.recovery.SnapshotsSetAside = snaps.aside
	start, err := readLogStart(l.dir)
	if err != nil {
		return err
	}
	l.startCheckpointed = start >= 0
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
	if first, from := l.segs[0].base, max(start, 0); first > from && !snaps.covers(first) {
		// Nothing removes the first segment without checkpointing the
		// log start first (AdvanceLogStart, TruncateFullyAndStartAt), and
		// no snapshot holds the offsets below it: they were deleted.
		l.lost(first-from, true, fmt.Sprintf("%s is the first segment, yet nothing of offsets %d-%d survives and no snapshot holds them",
			filepath.Base(l.segs[0].path), from, first-1))
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
			if _, err := l.dropTail(where, prev.next, bases[i:]); err != nil {
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
			if err := l.cutTail(seg, w, res, bases[i+1:]); err != nil {
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
// follows it, in seg or in the later segments. Under SetAsideDamage it also
// cuts damage that intact data follows, keeping the whole segment as a
// .corrupt copy and reporting the records the cut drops.
func (l *Log) cutTail(seg *segment, w *fileWindow, res segmentScan, later []int64) error {
	where := fmt.Sprintf("%s: batch at position %d (offset %d expected): %v", seg.path, res.size, res.next, res.damage)
	if res.intactAfter >= 0 && !l.opts.SetAsideDamage {
		return fmt.Errorf("%w: %s, yet an intact batch follows at position %d", ErrCorruptLog, where, res.intactAfter)
	}
	end, err := l.dropTail(where, res.next, later)
	if err != nil {
		return err
	}
	if res.intactAfter >= 0 || end > 0 {
		// Not a crash's torn tail: the segment is evidence, kept whole.
		kept, err := setAside(seg.path, true)
		if err != nil {
			return err
		}
		l.recovery.SetAside = append(l.recovery.SetAside, filepath.Base(kept))
	}
	if res.intactAfter >= 0 {
		intact, err := intactEnd(w, res.intactAfter)
		if err != nil {
			return err
		}
		end = max(end, intact)
		l.lost(max(end-res.next, 1), false, fmt.Sprintf("%s, yet intact batches up to offset %d follow (the segment is kept as %s)",
			where, end-1, filepath.Base(seg.path)+corruptSuffix))
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
	l.recovery.BytesDropped = w.size - res.size
	l.recovery.BatchesDropped = res.dropped
	l.recovery.Reason = res.damage
	return nil
}

// dropTail deletes the segments with the given base offsets, which follow
// a break in the log at offset from described by where, if none of them
// holds data; otherwise the break is corruption. Under SetAsideDamage the
// ones holding data are renamed with the .corrupt suffix instead, the loss
// is reported, and dropTail returns the end offset of the intact batches
// they start with (0 when none holds data).
func (l *Log) dropTail(where string, from int64, later []int64) (int64, error) {
	var end int64
	var aside []string
	for _, base := range later {
		path := filepath.Join(l.dir, segmentName(base)+logSuffix)
		st, err := os.Stat(path)
		if err != nil {
			return 0, fmt.Errorf("open segment: %w", err)
		}
		if st.Size() == 0 {
			continue
		}
		if !l.opts.SetAsideDamage {
			return 0, fmt.Errorf("%w: %s, yet %s holds data", ErrCorruptLog, where, path)
		}
		segEnd, err := segmentIntactEnd(path, base, st.Size())
		if err != nil {
			return 0, err
		}
		end = max(end, segEnd)
		kept, err := setAside(path, false)
		if err != nil {
			return 0, err
		}
		os.Remove(filepath.Join(l.dir, segmentName(base)+indexSuffix))
		aside = append(aside, filepath.Base(kept))
	}
	for _, base := range later {
		path := filepath.Join(l.dir, segmentName(base)+logSuffix)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue // set aside
		}
		if err := l.deleteSegmentFiles(base); err != nil {
			return 0, err
		}
	}
	if len(aside) > 0 {
		l.recovery.SetAside = append(l.recovery.SetAside, aside...)
		l.lost(max(end-from, 1), false, fmt.Sprintf("%s, yet %s held data up to offset %d (set aside)",
			where, strings.Join(aside, ", "), end-1))
	}
	return end, nil
}

// intactEnd is the end offset of the run of intact batches that starts at
// position from of w's file.
func intactEnd(w *fileWindow, from int64) (int64, error) {
	var end int64
	for p := from; p < w.size; {
		b, h, bad := w.batch(p)
		if w.err != nil {
			return 0, w.err
		}
		if bad != nil {
			break
		}
		end = h.last + 1
		p += int64(len(b))
	}
	return end, nil
}

// segmentIntactEnd is the end offset of the intact batches a segment file
// of size bytes, based at base, starts with (base if none).
func segmentIntactEnd(path string, base, size int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open segment: %w", err)
	}
	defer f.Close()
	var epochs []EpochEntry
	res, err := scanSegment(&fileWindow{f: f, path: path, size: size}, base, -1, 0, &epochs)
	if err != nil {
		return 0, err
	}
	return res.next, nil
}

// setAside keeps a damaged file for inspection under a name no log, index
// or snapshot takes: path with a .corrupt suffix (numbered if one is there
// already). It copies the file when keep says the original stays in use,
// and renames it otherwise. It returns the new path.
func setAside(path string, keep bool) (string, error) {
	dst := path + corruptSuffix
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = fmt.Sprintf("%s%s.%d", path, corruptSuffix, i)
	}
	if !keep {
		if err := os.Rename(path, dst); err != nil {
			return "", fmt.Errorf("set aside %s: %w", path, err)
		}
		return dst, nil
	}
	if err := copyFile(path, dst); err != nil {
		return "", fmt.Errorf("set aside %s: %w", path, err)
	}
	return dst, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// lost records evidence of n records gone (at least n unless exact).
// Exact counts add up; lower bounds from the tail overlap, so the largest
// counts.
func (l *Log) lost(n int64, exact bool, evidence string) {
	r := &l.recovery
	if exact {
		l.lostExact += n
	} else {
		l.lostTail = max(l.lostTail, n)
	}
	r.Lost = l.lostExact + l.lostTail
	r.LostExact = l.lostTail == 0
	r.LostEvidence = append(r.LostEvidence, evidence)
}

// indexEvidence looks in seg's old index file for entries past the
// segment's recovered end. Entries reach the file only for flushed batches
// (see Log.flushLocked and Log.roll), so such an entry is a flushed batch
// that is gone. The entries before it must be the ones the scan rebuilt, and
// the rest must rise, or the file is taken for garbage and proves nothing.
func (l *Log) indexEvidence(seg *segment, have, want []byte) {
	if len(have) <= len(want) || len(have)%indexEntrySize != 0 || !bytes.Equal(have[:len(want)], want) {
		return
	}
	prev := indexEntry{}
	if n := len(seg.index); n > 0 {
		prev = seg.index[n-1]
	}
	var last indexEntry
	for off := len(want); off < len(have); off += indexEntrySize {
		e := indexEntry{rel: binary.BigEndian.Uint32(have[off:]), pos: binary.BigEndian.Uint32(have[off+4:])}
		if int64(e.pos) < seg.size || (off > 0 && (e.rel <= prev.rel || e.pos <= prev.pos)) {
			return
		}
		prev, last = e, e
	}
	if gone := seg.base + int64(last.rel) + 1 - seg.next; gone > 0 {
		l.lost(gone, false, fmt.Sprintf("%s has an entry for offset %d at byte %d, past the %d bytes left in %s",
			filepath.Base(seg.indexPath()), seg.base+int64(last.rel), last.pos, seg.size, filepath.Base(seg.path)))
	}
}

// checkIndex compares seg's index file with the index its scan rebuilt and
// rewrites the file if they differ. The active segment keeps it open.
func (l *Log) checkIndex(seg *segment, active bool) error {
	want := appendIndexEntries(nil, seg.index)
	have, err := os.ReadFile(seg.indexPath())
	if err == nil {
		l.indexEvidence(seg, have, want)
	}
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
	// leader-epoch-checkpoint is written only with flushed batches (see
	// Log.writeEpochs), so an epoch that starts past the log end, or at it
	// in a log that holds batches, names a flushed batch that is gone. (An
	// epoch starting at the end of an empty log whose start was moved there
	// is the epoch AdvanceLogStart keeps.)
	if n := len(stored); n > 0 {
		e := stored[n-1]
		legit := e.StartOffset == leo && leo == l.start && l.startCheckpointed
		if e.StartOffset >= leo && e.StartOffset >= l.start && !legit {
			l.lost(e.StartOffset+1-leo, false, fmt.Sprintf("%s says epoch %d starts at offset %d, but the log ends at %d",
				epochCacheFile, e.Epoch, e.StartOffset, leo))
		}
	}
	kept := epochCache{entries: slices.Clone(stored)}
	// Epochs past the log end lost their batches (reported above). An epoch
	// starting right at the end is kept only in an empty log, where it
	// comes from AdvanceLogStart (so the start is checkpointed) and no
	// batch can confirm it.
	n := len(kept.entries)
	for n > 0 && (kept.entries[n-1].StartOffset > leo || (kept.entries[n-1].StartOffset == leo && (leo > l.start || !l.startCheckpointed))) {
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
	return l.writeEpochs(leo)
}

// writeEpochs persists the epoch cache atomically, leaving out the epochs
// that start at or past durable (the end of the flushed data) unless one
// is the epoch of an empty log's start: so the file only ever names batches
// that were flushed, which makes it evidence when they are gone. What is
// left out stays dirty, for the next flush.
func (l *Log) writeEpochs(durable int64) error {
	n, err := l.writeEpochCache(l.epochs, durable, l.leo())
	if err != nil {
		return err
	}
	l.epochsDirty = n < len(l.epochs.entries)
	return nil
}

// writeEpochCache writes c as writeEpochs does, for a log ending at end,
// and returns how many entries it wrote.
func (l *Log) writeEpochCache(c epochCache, durable, end int64) (int, error) {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= durable && !(n == 1 && end == l.start && c.entries[0].StartOffset == l.start) {
		n--
	}
	c.entries = c.entries[:n]
	return n, writeFileAtomic(l.dir, epochCacheFile, c.marshal(), l.sync())
}
