package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// closedLog builds a log of 60 batches over several segments, closes it and
// returns its batches.
func closedLog(t *testing.T, dir string) []Batch {
	t.Helper()
	l := openLog(t, dir, small)
	fill(t, l, 60)
	batches := readAll(t, l, 0, 1<<20)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return batches
}

// lastBatchAt returns the position of the last batch in a segment file.
func lastBatchAt(t *testing.T, path string) (int64, Batch) {
	t.Helper()
	var pos int
	var last Batch
	if err := Batches(fileBytes(t, path), func(p int, b *Batch) error { pos, last = p, *b; return nil }); err != nil {
		t.Fatal(err)
	}
	return int64(pos), last
}

func damageFile(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	if err := os.WriteFile(path, fn(fileBytes(t, path)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reopenRecovered opens a damaged log and checks that it holds exactly
// want, then that a second open finds nothing to repair.
func reopenRecovered(t *testing.T, dir string, want []Batch) RecoveryReport {
	t.Helper()
	l := openLog(t, dir, small)
	r := l.Recovery()
	if got := rawOf(readAll(t, l, 0, 1<<20)); string(got) != string(rawOf(want)) || l.LogEndOffset() != want[len(want)-1].NextOffset() {
		t.Fatalf("recovered %d bytes ending at %d, want %d ending at %d (%v)", len(got), l.LogEndOffset(), len(rawOf(want)), want[len(want)-1].NextOffset(), r)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if again := l.Recovery(); again.String() != "clean" {
		t.Fatalf("second open still repairs: %v", again)
	}
	return r
}

func TestRecoverTornTail(t *testing.T) {
	for _, keep := range []int{0, 10, BatchHeaderSize, -1} { // bytes of the last batch left on disk
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			dir := t.TempDir()
			batches := closedLog(t, dir)
			segs := segmentFiles(t, dir)
			pos, last := lastBatchAt(t, segs[len(segs)-1])
			if keep < 0 {
				keep = last.Size() - 1
			}
			damageFile(t, segs[len(segs)-1], func(b []byte) []byte { return b[:pos+int64(keep)] })
			r := reopenRecovered(t, dir, batches[:len(batches)-1])
			if keep == 0 {
				if r.Truncated() {
					t.Fatalf("a cut at a batch boundary is not torn: %v", r)
				}
				return
			}
			if r.Segment != filepath.Base(segs[len(segs)-1]) || r.Position != pos || r.BytesDropped != int64(keep) ||
				r.BatchesDropped != 0 || !errors.Is(r.Reason, ErrShortBatch) {
				t.Fatalf("report: %+v", r)
			}
		})
	}
}

func TestRecoverDamagedLastBatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		at      int // byte of the last batch to change
		set     func(b []byte)
		reason  error
		dropped int
	}{
		{"flipped record byte", -2, func(b []byte) { b[0] ^= 0x10 }, ErrCorruptBatch, 0},
		{"flipped crc", offsetCRC, func(b []byte) { b[0] ^= 1 }, ErrCorruptBatch, 0},
		{"bad magic", offsetMagic, func(b []byte) { b[0] = 1 }, ErrCorruptBatch, 0},
		{"length too short", offsetLength, func(b []byte) { binary.BigEndian.PutUint32(b, 3) }, ErrCorruptBatch, 0},
		{"length past the file", offsetLength, func(b []byte) { binary.BigEndian.PutUint32(b, 1<<30) }, ErrShortBatch, 0},
		// The CRC does not cover the base offset and the epoch: these batches
		// are intact but do not follow the log.
		{"offset gap", 0, func(b []byte) { binary.BigEndian.PutUint64(b, binary.BigEndian.Uint64(b)+5) }, ErrUnexpectedOffset, 1},
		{"epoch back", offsetLeaderEpoch, func(b []byte) { binary.BigEndian.PutUint32(b, 0) }, ErrStaleEpoch, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			batches := closedLog(t, dir)
			segs := segmentFiles(t, dir)
			pos, last := lastBatchAt(t, segs[len(segs)-1])
			at := int(pos) + tc.at
			if tc.at < 0 {
				at = int(pos) + last.Size() + tc.at
			}
			damageFile(t, segs[len(segs)-1], func(b []byte) []byte { tc.set(b[at:]); return b })
			r := reopenRecovered(t, dir, batches[:len(batches)-1])
			if r.Position != pos || r.BytesDropped != int64(last.Size()) || r.BatchesDropped != tc.dropped || !errors.Is(r.Reason, tc.reason) {
				t.Fatalf("report: %+v", r)
			}
		})
	}
}

// Zeros after the last batch are what a power cut can leave when the file
// size reached the disk and the data did not.
func TestRecoverZeroTail(t *testing.T) {
	dir := t.TempDir()
	batches := closedLog(t, dir)
	segs := segmentFiles(t, dir)
	damageFile(t, segs[len(segs)-1], func(b []byte) []byte { return append(b, make([]byte, 4096)...) })
	if r := reopenRecovered(t, dir, batches); r.BytesDropped != 4096 {
		t.Fatalf("report: %v", r)
	}
}

// A torn tail in the second-last segment, with the last one empty: the cut
// is still a tail, and the empty segment goes.
func TestRecoverTornTailBeforeEmptySegment(t *testing.T) {
	dir := t.TempDir()
	batches := closedLog(t, dir)
	segs := segmentFiles(t, dir)
	var inLast int
	for _, b := range batches {
		if b.FirstOffset >= mustBase(t, segs[len(segs)-1]) {
			inLast++
		}
	}
	damageFile(t, segs[len(segs)-1], func([]byte) []byte { return nil })
	damageFile(t, segs[len(segs)-2], func(b []byte) []byte { return b[:len(b)-3] })
	r := reopenRecovered(t, dir, batches[:len(batches)-inLast-1])
	if r.Segment != filepath.Base(segs[len(segs)-2]) || len(r.SegmentsDeleted) != 1 || r.SegmentsDeleted[0] != filepath.Base(segs[len(segs)-1]) {
		t.Fatalf("report: %v", r)
	}
}

func mustBase(t *testing.T, path string) int64 {
	base, ok := parseSegmentName(filepath.Base(path), logSuffix)
	if !ok {
		t.Fatalf("not a segment: %s", path)
	}
	return base
}

// Damage followed by intact data is not a crash's doing: Open refuses to
// drop the good batches and names the place.
func TestRecoverCorruptMiddle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		seg    func(n int) int // which segment to damage
		damage func(t *testing.T, path string, b []byte) []byte
	}{
		{"flipped byte mid active segment", func(n int) int { return n - 1 },
			func(_ *testing.T, _ string, b []byte) []byte { b[len(b)/2] ^= 0x01; return b }},
		{"flipped byte in an older segment", func(int) int { return 1 },
			func(_ *testing.T, _ string, b []byte) []byte { b[len(b)-5] ^= 0x80; return b }},
		{"torn older segment", func(int) int { return 0 },
			func(_ *testing.T, _ string, b []byte) []byte { return b[:len(b)-20] }},
		{"last batch of an older segment gone", func(int) int { return 0 },
			func(t *testing.T, path string, b []byte) []byte { pos, _ := lastBatchAt(t, path); return b[:pos] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			closedLog(t, dir)
			segs := segmentFiles(t, dir)
			path := segs[tc.seg(len(segs))]
			damageFile(t, path, func(b []byte) []byte { return tc.damage(t, path, b) })
			damaged := fileBytes(t, path)
			_, err := Open(dir, small)
			if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), filepath.Base(path)) || !strings.Contains(err.Error(), "offset") {
				t.Fatalf("open: %v", err)
			}
			t.Log(err)
			if string(fileBytes(t, path)) != string(damaged) {
				t.Fatal("a failed open changed the damaged segment")
			}

			// A replica's log sets the damage aside instead: the
			// prefix before it stays, the damaged segment is kept whole
			// as .corrupt, and the report says what is gone.
			opts := small
			opts.SetAsideDamage = true
			l, err := Open(dir, opts)
			if err != nil {
				t.Fatalf("open with SetAsideDamage: %v", err)
			}
			r := l.Recovery()
			if !r.LostRecords() || len(r.SetAside) == 0 || l.LogEndOffset() > mustBase(t, path)+int64(len(damaged)) {
				t.Fatalf("set aside: %v, log end %d", r, l.LogEndOffset())
			}
			for _, kept := range r.SetAside {
				if _, err := os.Stat(filepath.Join(dir, kept)); err != nil {
					t.Fatalf("set aside %s: %v", kept, err)
				}
			}
			if kept := filepath.Base(path) + corruptSuffix; slices.Contains(r.SetAside, kept) &&
				string(fileBytes(t, filepath.Join(dir, kept))) != string(damaged) {
				t.Fatalf("the damaged segment was not kept whole")
			}
			t.Log(r)
			end := l.LogEndOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, opts)
			defer l.Close()
			if again := l.Recovery(); again.String() != "clean" || l.LogEndOffset() != end {
				t.Fatalf("second open: %v, log end %d, want %d", again, l.LogEndOffset(), end)
			}
		})
	}
}

func TestRecoverIndexes(t *testing.T) {
	dir := t.TempDir()
	batches := closedLog(t, dir)
	segs := segmentFiles(t, dir)
	index := func(i int) string { return strings.TrimSuffix(segs[i], logSuffix) + indexSuffix }
	if len(fileBytes(t, index(1))) == 0 {
		t.Fatal("test needs indexes with entries")
	}
	if err := os.Remove(index(0)); err != nil {
		t.Fatal(err)
	}
	damageFile(t, index(1), func(b []byte) []byte { b[3] ^= 0xff; return b })
	damageFile(t, index(len(segs)-1), func(b []byte) []byte { return b[:len(b)-3] })
	// An index left behind by a deleted segment goes.
	if err := os.WriteFile(filepath.Join(dir, segmentName(999999)+indexSuffix), []byte{1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	r := reopenRecovered(t, dir, batches)
	if len(r.IndexesRebuilt) != 3 || r.Truncated() {
		t.Fatalf("report: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, segmentName(999999)+indexSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stray index: %v", err)
	}
	// Every offset still reads through the rebuilt indexes.
	l := openLog(t, dir, small)
	defer l.Close()
	for _, b := range batches {
		raw, err := l.Read(b.LastOffset(), 1)
		if err != nil || string(raw) != string(b.Raw) {
			t.Fatalf("read %d: %v", b.LastOffset(), err)
		}
	}
}

func TestRecoverEmptyDirAndGarbage(t *testing.T) {
	dir := t.TempDir()
	// Files the log does not own are left alone.
	if err := os.WriteFile(filepath.Join(dir, QuorumStateFileName), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := openLog(t, dir, small)
	if l.LogEndOffset() != 0 || l.LogStartOffset() != 0 || l.Recovery().String() != "clean" {
		t.Fatalf("fresh log: %d-%d %v", l.LogStartOffset(), l.LogEndOffset(), l.Recovery())
	}
	l.Close()
	// A segment of pure garbage.
	damageFile(t, segmentFiles(t, dir)[0], func([]byte) []byte { return []byte("this is not a record batch, not at all, not even close to one") })
	l = openLog(t, dir, small)
	defer l.Close()
	if r := l.Recovery(); !r.Truncated() || l.LogEndOffset() != 0 {
		t.Fatalf("garbage segment: %v", r)
	}
}
