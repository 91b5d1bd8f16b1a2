package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSnapshot freezes snapshot id with n data batches in dir.
func writeSnapshot(t *testing.T, dir string, id SnapshotID, n int) string {
	t.Helper()
	s, err := OpenSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := snapshotBytes(id.Epoch, n)
	w, err := s.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, id.String()+snapshotSuffix)
}

// snapshotDamage is every kind of damage a snapshot file can take.
func snapshotDamage(raw []byte) map[string][]byte {
	flip := func(pos int) []byte {
		b := append([]byte(nil), raw...)
		b[pos] ^= 0x10
		return b
	}
	garbage := make([]byte, 300)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	_, lastPos := lastBatch(raw)
	m := map[string][]byte{
		"garbage":          garbage,
		"empty":            {},
		"cut to 100 bytes": raw[:100],
		"cut by one byte":  raw[:len(raw)-1],
		"no footer":        raw[:lastPos], // cut at a batch boundary
		"no header":        raw[len(AppendBatch(nil, BatchSpec{Control: true}, []Record{SnapshotHeaderRecord(0)})):],
	}
	for _, pos := range []int{0, 9, offsetLeaderEpoch + 3, offsetMagic, offsetCRC, offsetAttributes, 70, len(raw) / 2, len(raw) - 1} {
		m[fmt.Sprintf("byte %d flipped", pos)] = flip(pos)
	}
	return m
}

func lastBatch(raw []byte) (Batch, int) {
	var last Batch
	var at int
	Batches(raw, func(pos int, b *Batch) error { last, at = *b, pos; return nil })
	return last, at
}

// Every single flipped byte of a snapshot is caught: the CRC covers the
// records, and the fields it leaves out (base offset, length, leader epoch,
// magic, the CRC itself) are checked against the file name and the layout.
func TestVerifySnapshotCatchesEveryFlippedByte(t *testing.T) {
	id := SnapshotID{EndOffset: 100, Epoch: 3}
	raw, _ := snapshotBytes(id.Epoch, 2)
	if _, err := verifySnapshot(raw, id); err != nil {
		t.Fatal(err)
	}
	for pos := range raw {
		for _, bit := range []byte{0x01, 0x80} {
			b := append([]byte(nil), raw...)
			b[pos] ^= bit
			if _, err := verifySnapshot(b, id); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("byte %d ^ %#x: %v", pos, bit, err)
			}
		}
	}
	if _, err := verifySnapshot(raw, SnapshotID{EndOffset: 100, Epoch: 4}); err == nil || !strings.Contains(err.Error(), "named for epoch 4") {
		t.Fatalf("a snapshot under another epoch's name: %v", err)
	}
	for name, b := range snapshotDamage(raw) {
		if _, err := verifySnapshot(b, id); !errors.Is(err, ErrCorruptSnapshot) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A corrupt snapshot the log does not need (its log still starts at 0) is
// set aside, kept as .corrupt, never listed, and reported by Open.
func TestCorruptSnapshotSetAside(t *testing.T) {
	raw, _ := snapshotBytes(2, 3)
	for name, bad := range snapshotDamage(raw) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, small)
			fill(t, l, 30)
			l.Close()
			id := SnapshotID{EndOffset: 20, Epoch: 2}
			path := writeSnapshot(t, dir, id, 3)
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := OpenSnapshots(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.List(); len(got) != 0 {
				t.Fatalf("listed %v", got)
			}
			kept := path + ".corrupt"
			if b, err := os.ReadFile(kept); err != nil || string(b) != string(bad) {
				t.Fatalf("not kept for inspection: %v", err)
			}
			l = openLog(t, dir, small)
			defer l.Close()
			r := l.Recovery()
			if len(r.SnapshotsSetAside) != 1 || r.SnapshotsSetAside[0].KeptAs != filepath.Base(kept) || !errors.Is(r.SnapshotsSetAside[0].Reason, ErrCorruptSnapshot) {
				t.Fatalf("report %+v", r.SnapshotsSetAside)
			}
			if s := r.String(); !strings.Contains(s, "set corrupt snapshot "+id.String()+".checkpoint aside as "+filepath.Base(kept)) || r.LostRecords() {
				t.Fatalf("report says %q", s)
			}
		})
	}
}

// Open alone sets a corrupt snapshot aside too (it runs the same check).
func TestOpenSetsCorruptSnapshotAside(t *testing.T) {
	dir := t.TempDir()
	path := writeSnapshot(t, dir, SnapshotID{EndOffset: 5, Epoch: 1}, 1)
	damageFile(t, path, func(b []byte) []byte { return b[:len(b)-3] })
	l := openLog(t, dir, small)
	defer l.Close()
	if r := l.Recovery(); len(r.SnapshotsSetAside) != 1 {
		t.Fatalf("report %v", r)
	}
	if s, err := OpenSnapshots(dir); err != nil || len(s.List()) != 0 {
		t.Fatalf("snapshots after Open: %v %v", s, err)
	}
}

// A corrupt newest snapshot is set aside when an older sound one still
// covers the log start; the node then starts from the older one.
func TestCorruptSnapshotOlderOneCovers(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	fill(t, l, 30)
	old := writeSnapshot(t, dir, SnapshotID{EndOffset: 10, Epoch: 0}, 1)
	if err := l.AdvanceLogStart(10); err != nil {
		t.Fatal(err)
	}
	l.Close()
	newer := writeSnapshot(t, dir, SnapshotID{EndOffset: 25, Epoch: 1}, 2)
	damageFile(t, newer, func(b []byte) []byte { b[len(b)/2] ^= 1; return b })
	s, err := OpenSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.List()); got != "["+filepath.Base(strings.TrimSuffix(old, snapshotSuffix))+"]" {
		t.Fatalf("list %s", got)
	}
}

// A corrupt snapshot that is the only copy of the offsets below the log
// start cannot be set aside: nothing else would hold them. Opening fails
// with an error naming the file, and leaves it where it is.
func TestCorruptOnlySnapshotRefused(t *testing.T) {
	raw, _ := snapshotBytes(1, 2)
	for name, bad := range snapshotDamage(raw) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, small)
			fill(t, l, 30)
			id := SnapshotID{EndOffset: 20, Epoch: 1}
			path := writeSnapshot(t, dir, id, 2)
			if err := l.AdvanceLogStart(id.EndOffset); err != nil {
				t.Fatal(err)
			}
			l.Close()
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := OpenSnapshots(dir)
			if !errors.Is(err, ErrCorruptSnapshot) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "only copy of the offsets below the log start 20") {
				t.Fatalf("open snapshots: %v", err)
			}
			if _, err := Open(dir, small); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("open log: %v", err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the refused snapshot moved: %v", err)
			}
		})
	}
}

// A log that a follower restarted at a snapshot: the snapshot is the only
// copy of everything below, whatever the log holds.
func TestCorruptSnapshotOfARestartedLogRefused(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	fill(t, l, 5)
	id := SnapshotID{EndOffset: 500, Epoch: 7}
	path := writeSnapshot(t, dir, id, 2)
	if err := l.TruncateFullyAndStartAt(id.EndOffset); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, 7, records("x", 3, 10))
	l.Close()
	damageFile(t, path, func(b []byte) []byte { return b[:10] })
	if _, err := OpenSnapshots(dir); !errors.Is(err, ErrCorruptSnapshot) {
		t.Fatalf("open snapshots: %v", err)
	}
}

// lostLog builds a flushed log of several epochs and segments, as a voter
// that acknowledged every record would have it, and returns how many
// records it holds.
func lostLog(t *testing.T, dir string, opts Options) int64 {
	t.Helper()
	l := openLog(t, dir, opts)
	for i := range 40 {
		mustAppend(t, l, int32(i/8), records(fmt.Sprint(i), 2, 60))
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	n := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// A voter with no snapshot whose segment was emptied: recovery used to
// call that clean. The leader-epoch checkpoint and the index still name
// flushed batches, so the report says records are lost, at least how many
// (never more than were there), and why that is dangerous.
func TestLostRecordsOfAnEmptiedSegment(t *testing.T) {
	for _, policy := range []FlushPolicy{FlushAlways, FlushNever} {
		t.Run(policy.String(), func(t *testing.T) {
			opts := Options{IndexIntervalBytes: 300, FlushPolicy: policy} // one segment
			dir := t.TempDir()
			total := lostLog(t, dir, opts)
			segs := segmentFiles(t, dir)
			if len(segs) != 1 {
				t.Fatalf("%d segments", len(segs))
			}
			if err := os.Truncate(segs[0], 0); err != nil {
				t.Fatal(err)
			}
			l := openLog(t, dir, opts)
			r := l.Recovery()
			l.Close()
			if !r.LostRecords() || r.LostExact || r.Lost > total || r.Lost < total/2 {
				t.Fatalf("lost %d (exact %v) of %d: %v", r.Lost, r.LostExact, total, r)
			}
			s := r.String()
			for _, want := range []string{"LOST at least", "leader-epoch-checkpoint says epoch 4 starts at offset 64", ".index has an entry for offset", "help elect a leader that lacks committed records", "KIP-853"} {
				if !strings.Contains(s, want) {
					t.Errorf("report lacks %q: %s", want, s)
				}
			}
			// The loss is reported once: the files are mended.
			l = openLog(t, dir, opts)
			defer l.Close()
			if again := l.Recovery(); again.String() != "clean" {
				t.Fatalf("second open: %v", again)
			}
		})
	}
}

// A segment whose name says it starts at offset N, with nothing below N
// and no snapshot holding it: exactly N records are gone.
func TestLostRecordsBelowTheFirstSegment(t *testing.T) {
	dir := t.TempDir()
	lostLog(t, dir, small)
	segs := segmentFiles(t, dir)
	for _, p := range segs[:2] {
		os.Remove(p)
	}
	first, _ := parseSegmentName(filepath.Base(segs[2]), logSuffix)
	l := openLog(t, dir, small)
	r := l.Recovery()
	l.Close()
	if r.Lost != first || !r.LostExact || !strings.Contains(r.String(), fmt.Sprintf("LOST %d records", first)) {
		t.Fatalf("lost %d (exact %v), want exactly %d: %v", r.Lost, r.LostExact, first, r)
	}

	// The same with a snapshot that holds those offsets is no loss.
	dir = t.TempDir()
	lostLog(t, dir, small)
	segs = segmentFiles(t, dir)
	os.Remove(segs[0])
	first, _ = parseSegmentName(filepath.Base(segs[1]), logSuffix)
	writeSnapshot(t, dir, SnapshotID{EndOffset: first, Epoch: 0}, 1)
	l = openLog(t, dir, small)
	defer l.Close()
	if r := l.Recovery(); r.LostRecords() {
		t.Fatalf("a snapshot covers the offsets: %v", r)
	}
}

// Garbage in an index file is rebuilt but proves nothing.
func TestGarbageIndexIsNoEvidence(t *testing.T) {
	dir := t.TempDir()
	lostLog(t, dir, small)
	segs := segmentFiles(t, dir)
	idx := strings.TrimSuffix(segs[len(segs)-1], logSuffix) + indexSuffix
	junk := make([]byte, 64)
	for i := range junk {
		junk[i] = byte(255 - i)
	}
	os.WriteFile(idx, junk, 0o644)
	l := openLog(t, dir, small)
	defer l.Close()
	if r := l.Recovery(); r.LostRecords() || len(r.IndexesRebuilt) != 1 {
		t.Fatalf("report %v", r)
	}
}

// What a crash loses was never flushed, so it is never reported as lost,
// whatever the policy, even when an append rolled segments or a truncation
// was under way.
func TestCrashLosesNothingReported(t *testing.T) {
	now := time.Unix(1700000000, 0)
	clock := func() time.Time { return now }
	for _, opts := range []Options{
		{SegmentBytes: 2048, IndexIntervalBytes: 200, FlushPolicy: FlushAlways},
		{SegmentBytes: 2048, IndexIntervalBytes: 200, FlushPolicy: FlushNever},
		{SegmentBytes: 2048, IndexIntervalBytes: 200, FlushPolicy: FlushInterval, FlushInterval: time.Hour, Now: clock},
	} {
		t.Run(opts.FlushPolicy.String(), func(t *testing.T) {
			for step := range 6 {
				dir := t.TempDir()
				l := openLog(t, dir, opts)
				mustAppend(t, l, 1, records("a", 3, 50))
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
				// A follower append of many batches that fills segments
				// and rolls inside one call, never flushed.
				var raw []byte
				next := l.LogEndOffset()
				for i := range 30 {
					raw = AppendBatch(raw, BatchSpec{BaseOffset: next, LeaderEpoch: int32(2 + i/10)}, records(fmt.Sprint(i), 2, 50))
					next += 2
				}
				if err := l.AppendAsFollower(raw); err != nil {
					t.Fatal(err)
				}
				switch step {
				case 1:
					l.TruncateTo(l.LogEndOffset() - 10)
				case 2:
					l.TruncateTo(5)
				case 3:
					l.TruncateFullyAndStartAt(3)
				case 4:
					l.AdvanceLogStart(3)
				}
				if err := l.Crash(); err != nil {
					t.Fatal(err)
				}
				l = openLog(t, dir, opts)
				r := l.Recovery()
				l.Close()
				if r.LostRecords() || len(r.SnapshotsSetAside) > 0 {
					t.Fatalf("step %d: a crash reported as loss: %v", step, r)
				}
			}
		})
	}
}

// The index file only ever names flushed batches.
func TestIndexNamesFlushedBatchesOnly(t *testing.T) {
	opts := Options{SegmentBytes: 2048, IndexIntervalBytes: 100, FlushPolicy: FlushInterval, FlushInterval: time.Hour, Now: func() time.Time { return time.Unix(0, 0) }}
	dir := t.TempDir()
	l := openLog(t, dir, opts)
	var raw []byte
	for i := range 40 {
		raw = AppendBatch(raw, BatchSpec{BaseOffset: int64(i * 2), LeaderEpoch: 1}, records(fmt.Sprint(i), 2, 50))
	}
	if err := l.AppendAsFollower(raw); err != nil {
		t.Fatal(err)
	}
	check := func(flushed int64) {
		t.Helper()
		for _, seg := range segmentFiles(t, dir) {
			base, _ := parseSegmentName(filepath.Base(seg), logSuffix)
			b, _ := os.ReadFile(strings.TrimSuffix(seg, logSuffix) + indexSuffix)
			for off := 0; off+8 <= len(b); off += 8 {
				if o := base + int64(binary.BigEndian.Uint32(b[off:])); o >= flushed {
					t.Fatalf("%s names offset %d, flushed up to %d", seg, o, flushed)
				}
			}
		}
	}
	check(l.LastFlushedOffset())
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	check(l.LastFlushedOffset())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, opts)
	defer l.Close()
	if r := l.Recovery(); r.String() != "clean" {
		t.Fatalf("after flush and close: %v", r)
	}
}
