package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var small = Options{SegmentBytes: 2048, IndexIntervalBytes: 300, FlushPolicy: FlushNever}

// fill appends batches of 1 to 4 records of 40-byte values, epoch rising
// every 10 batches, and returns every record's value by offset.
func fill(t testing.TB, l *Log, batches int) map[int64]string {
	t.Helper()
	want := map[int64]string{}
	for i := range batches {
		recs := records(fmt.Sprint("b", i), 1+i%4, 40)
		base, last := mustAppend(t, l, int32(i/10), recs)
		if last-base != int64(len(recs)-1) {
			t.Fatalf("batch %d took offsets %d-%d", i, base, last)
		}
		for j, r := range recs {
			want[base+int64(j)] = string(r.Value)
		}
	}
	return want
}

func TestAppendReadAcrossRolls(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	want := fill(t, l, 120)
	if n := len(segmentFiles(t, dir)); n < 5 {
		t.Fatalf("%d segments, want several rolls", n)
	}
	end := l.LogEndOffset()
	if end != int64(len(want)) || l.LogStartOffset() != 0 {
		t.Fatalf("offsets %d-%d, want 0-%d", l.LogStartOffset(), end, len(want))
	}
	for _, maxBytes := range []int{1, 500, 1 << 20} {
		checkValues(t, readAll(t, l, 0, maxBytes), want)
	}
	// Every offset reads back the batch that holds it.
	for off := range end {
		raw, err := l.Read(off, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := DecodeBatch(raw)
		if err != nil || b.FirstOffset > off || b.LastOffset() < off || b.Size() != len(raw) {
			t.Fatalf("read %d: batch %d-%d of %d bytes (%d read), %v", off, b.FirstOffset, b.LastOffset(), b.Size(), len(raw), err)
		}
	}
	before := rawOf(readAll(t, l, 0, 1<<20))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if r := l.Recovery(); r.String() != "clean" {
		t.Fatalf("reopen after a clean close: %v", r)
	}
	if got := rawOf(readAll(t, l, 0, 1<<20)); string(got) != string(before) || l.LogEndOffset() != end {
		t.Fatalf("reopened log differs: end %d, want %d", l.LogEndOffset(), end)
	}
	base, _ := mustAppend(t, l, 20, records("after", 1, 10))
	if base != end {
		t.Fatalf("append after reopen at %d, want %d", base, end)
	}
}

func TestReadLimits(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{FlushPolicy: FlushNever})
	defer l.Close()
	if raw, err := l.Read(0, 100); err != nil || len(raw) != 0 {
		t.Fatalf("read of an empty log: %d bytes, %v", len(raw), err)
	}
	mustAppend(t, l, 1, records("a", 1, 100))
	mustAppend(t, l, 1, records("b", 10, 100))
	mustAppend(t, l, 1, records("c", 1, 100))
	first, _ := l.Read(0, 1)
	all, _ := l.Read(0, 1<<20)
	if len(first) < 100 || len(all) <= len(first) {
		t.Fatalf("read sizes: one %d, all %d", len(first), len(all))
	}
	// A batch bigger than maxBytes still comes back whole, alone.
	big, err := l.Read(1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := DecodeBatch(big); err != nil || b.FirstOffset != 1 || b.Size() != len(big) {
		t.Fatalf("big batch: %v", err)
	}
	// maxBytes between one and two batches gives one.
	if two, _ := l.Read(0, len(first)+len(big)-1); len(two) != len(first) {
		t.Fatalf("read of %d bytes returned %d", len(first)+len(big)-1, len(two))
	}
	if raw, err := l.Read(l.LogEndOffset(), 100); err != nil || len(raw) != 0 {
		t.Fatalf("read at the log end: %d bytes, %v", len(raw), err)
	}
	for _, off := range []int64{-1, l.LogEndOffset() + 1} {
		if _, err := l.Read(off, 100); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("read %d: %v", off, err)
		}
	}
}

func TestAppendAsFollower(t *testing.T) {
	leader := openLog(t, t.TempDir(), small)
	defer leader.Close()
	fill(t, leader, 30)
	follower := openLog(t, t.TempDir(), small)
	defer follower.Close()
	for off := int64(0); off < leader.LogEndOffset(); {
		raw, err := leader.Read(off, 700)
		if err != nil {
			t.Fatal(err)
		}
		if err := follower.AppendAsFollower(raw); err != nil {
			t.Fatal(err)
		}
		off = follower.LogEndOffset()
	}
	if string(rawOf(readAll(t, follower, 0, 1<<20))) != string(rawOf(readAll(t, leader, 0, 1<<20))) {
		t.Fatal("follower's log differs from the leader's")
	}
	if fmt.Sprint(follower.Epochs()) != fmt.Sprint(leader.Epochs()) {
		t.Fatalf("epochs: follower %v, leader %v", follower.Epochs(), leader.Epochs())
	}

	end := follower.LogEndOffset()
	good := AppendBatch(nil, BatchSpec{BaseOffset: end, LeaderEpoch: 5}, records("x", 2, 10))
	next := AppendBatch(nil, BatchSpec{BaseOffset: end + 2, LeaderEpoch: 5}, records("y", 1, 10))
	flipped := append([]byte(nil), next...)
	flipped[len(flipped)-1] ^= 1
	cases := []struct {
		name string
		raw  []byte
		want error
	}{
		{"gap", AppendBatch(nil, BatchSpec{BaseOffset: end + 1, LeaderEpoch: 5}, records("x", 1, 10)), ErrUnexpectedOffset},
		{"overlap", AppendBatch(nil, BatchSpec{BaseOffset: end - 1, LeaderEpoch: 5}, records("x", 1, 10)), ErrUnexpectedOffset},
		{"stale epoch", AppendBatch(nil, BatchSpec{BaseOffset: end, LeaderEpoch: 1}, records("x", 1, 10)), ErrStaleEpoch},
		{"bad crc after a good batch", append(append([]byte(nil), good...), flipped...), ErrCorruptBatch},
		{"torn after a good batch", append(append([]byte(nil), good...), next[:len(next)-3]...), ErrShortBatch},
		{"not contiguous after a good batch", append(append([]byte(nil), good...), good...), ErrUnexpectedOffset},
	}
	for _, c := range cases {
		if err := follower.AppendAsFollower(c.raw); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		if follower.LogEndOffset() != end {
			t.Fatalf("%s: log end moved to %d", c.name, follower.LogEndOffset())
		}
	}
	if err := follower.AppendAsFollower(append(good, next...)); err != nil || follower.LogEndOffset() != end+3 {
		t.Fatalf("good batches: %v, end %d", err, follower.LogEndOffset())
	}
}

func TestTruncateTo(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	want := fill(t, l, 120)
	segs := len(segmentFiles(t, dir))
	batches := readAll(t, l, 0, 1<<20)

	// Inside the active segment, in the middle of a batch: the whole batch goes.
	b := batches[len(batches)-2]
	if b.LastOffset() == b.FirstOffset {
		b = batches[len(batches)-3]
	}
	if err := l.TruncateTo(b.FirstOffset + 1); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != b.FirstOffset {
		t.Fatalf("end %d after truncating inside batch %d-%d", l.LogEndOffset(), b.FirstOffset, b.LastOffset())
	}
	for off := range want {
		if off >= b.FirstOffset {
			delete(want, off)
		}
	}
	checkValues(t, readAll(t, l, 0, 1<<20), want)

	// Across segments: later segment files are deleted.
	cut := batches[len(batches)/3].FirstOffset
	if err := l.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	for off := range want {
		if off >= cut {
			delete(want, off)
		}
	}
	if n := len(segmentFiles(t, dir)); n >= segs/2 || l.LogEndOffset() != cut {
		t.Fatalf("after truncating to %d: %d of %d segments, end %d", cut, n, segs, l.LogEndOffset())
	}
	checkValues(t, readAll(t, l, 0, 1<<20), want)
	if err := l.TruncateTo(l.LogEndOffset() + 5); err != nil || l.LogEndOffset() != cut {
		t.Fatalf("truncate past the end: %v, end %d", err, l.LogEndOffset())
	}

	// Appends continue from the cut, and the log reopens as it was.
	base, _ := mustAppend(t, l, 30, records("new", 2, 40))
	want[base], want[base+1] = string(records("new", 2, 40)[0].Value), string(records("new", 2, 40)[1].Value)
	if base != cut {
		t.Fatalf("append after truncation at %d, want %d", base, cut)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if r := l.Recovery(); r.String() != "clean" {
		t.Fatalf("recovery after truncations: %v", r)
	}
	checkValues(t, readAll(t, l, 0, 1<<20), want)

	// Down to the first offset: one empty segment remains.
	if err := l.TruncateTo(0); err != nil || l.LogEndOffset() != 0 || len(segmentFiles(t, dir)) != 1 {
		t.Fatalf("truncate to 0: %v, end %d, %d segments", err, l.LogEndOffset(), len(segmentFiles(t, dir)))
	}
}

func TestAdvanceLogStart(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	want := fill(t, l, 120)
	segs := segmentFiles(t, dir)
	batches := readAll(t, l, 0, 1<<20)
	mid := batches[len(batches)/2]
	if mid.NumRecords < 2 {
		mid = batches[len(batches)/2+1]
	}
	start := mid.FirstOffset + 1 // inside a batch: allowed, as Kafka's DeleteRecords
	if err := l.AdvanceLogStart(start); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != start {
		t.Fatalf("log start %d, want %d", l.LogStartOffset(), start)
	}
	left := segmentFiles(t, dir)
	if len(left) >= len(segs) || len(left) == 0 {
		t.Fatalf("%d of %d segments left", len(left), len(segs))
	}
	if _, err := l.Read(start-2, 100); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start: %v", err)
	}
	// The batch holding the start comes back whole.
	if raw, err := l.Read(start, 1); err != nil || len(raw) != mid.Size() {
		t.Fatalf("read at the log start: %d bytes, %v", len(raw), err)
	}
	if err := l.AdvanceLogStart(start - 5); err != nil || l.LogStartOffset() != start {
		t.Fatalf("moving the start back: %v, start %d", err, l.LogStartOffset())
	}
	if err := l.AdvanceLogStart(l.LogEndOffset() + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("start past the end: %v", err)
	}
	if err := l.TruncateTo(start - 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("truncate below the start: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openLog(t, dir, small)
	if l.LogStartOffset() != start || l.Recovery().String() != "clean" {
		t.Fatalf("reopened: start %d, recovery %v", l.LogStartOffset(), l.Recovery())
	}
	for off := range want {
		if off < mid.FirstOffset {
			delete(want, off)
		}
	}
	checkValues(t, readAll(t, l, start, 1<<20), want)

	// Up to the log end: no batch left, but the epoch of the end is known.
	end, last := l.LogEndOffset(), l.LastEpoch()
	if err := l.AdvanceLogStart(end); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 1 || l.LogStartOffset() != end || l.LogEndOffset() != end {
		t.Fatalf("start at the end: %d segments, offsets %d-%d", n, l.LogStartOffset(), l.LogEndOffset())
	}
	if e, o := l.EndOffsetForEpoch(last); e != last || o != end {
		t.Fatalf("EndOffsetForEpoch(%d) = %d, %d in an empty log", last, e, o)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if e, o := l.EndOffsetForEpoch(last + 3); e != last || o != end || l.LogStartOffset() != end {
		t.Fatalf("reopened empty log: EndOffsetForEpoch = %d, %d; start %d", e, o, l.LogStartOffset())
	}
	if base, _ := mustAppend(t, l, last+1, records("z", 1, 5)); base != end {
		t.Fatalf("append to the emptied log at %d, want %d", base, end)
	}
}

// An AdvanceLogStart cut short after its checkpoint leaves segments that
// Open deletes.
func TestOpenDeletesSegmentsBelowStart(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	fill(t, l, 60)
	segs := segmentFiles(t, dir)
	third, err := parseSegmentName(filepath.Base(segs[2]), logSuffix)
	if !err {
		t.Fatal(segs[2])
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := writeLogStart(OS, dir, third+1, false); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if got := l.Recovery().SegmentsDeleted; len(got) != 2 || l.LogStartOffset() != third+1 {
		t.Fatalf("deleted %v, start %d", got, l.LogStartOffset())
	}
	if _, err := os.Stat(segs[1]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("segment below the start still there: %v", err)
	}
}

func TestTruncateFullyAndStartAt(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	fill(t, l, 40)
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1000 || l.LastEpoch() != -1 || len(segmentFiles(t, dir)) != 1 {
		t.Fatalf("offsets %d-%d, epoch %d", l.LogStartOffset(), l.LogEndOffset(), l.LastEpoch())
	}
	mustAppend(t, l, 7, records("s", 3, 10))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1003 || l.LastEpoch() != 7 {
		t.Fatalf("reopened: offsets %d-%d, epoch %d", l.LogStartOffset(), l.LogEndOffset(), l.LastEpoch())
	}
}

func TestAppendRejects(t *testing.T) {
	l := openLog(t, t.TempDir(), small)
	mustAppend(t, l, 3, records("a", 1, 10))
	if _, _, err := l.AppendAsLeader(records("b", 1, 10), 2, 0); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	if _, _, err := l.AppendAsLeader(nil, 3, 0); err == nil {
		t.Fatal("empty append accepted")
	}
	base, last, err := l.AppendControl([]Record{LeaderChangeRecord(1, []int32{1, 2, 3}, []int32{1, 2})}, 4, 0)
	if err != nil || base != 1 || last != 1 {
		t.Fatalf("control append: %d-%d %v", base, last, err)
	}
	raw, _ := l.Read(1, 1)
	if b, err := DecodeBatch(raw); err != nil || !b.IsControl() || b.PartitionLeaderEpoch != 4 {
		t.Fatalf("control batch read back: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"append": func() error { _, _, err := l.AppendAsLeader(records("c", 1, 1), 4, 0); return err }(),
		"read":   func() error { _, err := l.Read(0, 1); return err }(),
		"flush":  l.Flush(),
		"close":  l.Close(),
		"crash":  l.Crash(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("%s after close: %v", name, err)
		}
	}
	if _, err := Open(t.TempDir(), Options{FlushPolicy: FlushInterval}); err == nil {
		t.Fatal("FlushInterval without an interval accepted")
	}
}

// Reads run alongside appends, truncations and start moves; run with -race.
func TestConcurrentReads(t *testing.T) {
	l := openLog(t, t.TempDir(), small)
	defer l.Close()
	fill(t, l, 10)
	done := make(chan struct{})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				start, end := l.LogStartOffset(), l.LogEndOffset()
				raw, err := l.Read(start+(end-start)/2, 500)
				if err != nil && !errors.Is(err, ErrOffsetOutOfRange) {
					errs <- err
					return
				}
				if err := Batches(raw, func(int, *Batch) error { return nil }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 200 {
		mustAppend(t, l, 1, records("c", 1+i%3, 50))
		switch i % 50 {
		case 20:
			if err := l.TruncateTo(l.LogEndOffset() - 5); err != nil {
				t.Error(err)
			}
		case 40:
			if err := l.AdvanceLogStart(l.LogEndOffset() - 30); err != nil {
				t.Error(err)
			}
		}
	}
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A producer's batches, offsets from 0, get the log's offsets and epoch.
func TestAppendBatchesAsLeader(t *testing.T) {
	l := openLog(t, t.TempDir(), small)
	defer l.Close()
	mustAppend(t, l, 2, records("a", 3, 10))
	produced := AppendBatch(nil, BatchSpec{LeaderEpoch: -1}, records("p", 2, 10))
	produced = AppendBatch(produced, BatchSpec{LeaderEpoch: -1}, records("q", 4, 10))
	base, last, err := l.AppendBatchesAsLeader(produced, 3)
	if err != nil || base != 3 || last != 8 {
		t.Fatalf("append: %d-%d %v", base, last, err)
	}
	got := readAll(t, l, 3, 1<<20)
	if len(got) != 2 || got[0].FirstOffset != 3 || got[1].FirstOffset != 5 || got[1].PartitionLeaderEpoch != 3 || l.LastEpoch() != 3 {
		t.Fatalf("batches %+v", got)
	}
	bad := AppendBatch(nil, BatchSpec{}, records("r", 1, 10))
	bad[len(bad)-1] ^= 1
	if _, _, err := l.AppendBatchesAsLeader(append(AppendBatch(nil, BatchSpec{}, records("s", 1, 10)), bad...), 3); !errors.Is(err, ErrCorruptBatch) || l.LogEndOffset() != 9 {
		t.Fatalf("bad batch: %v, end %d", err, l.LogEndOffset())
	}
	if _, _, err := l.AppendBatchesAsLeader(AppendBatch(nil, BatchSpec{}, records("s", 1, 10)), 2); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
}
