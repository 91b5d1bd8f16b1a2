package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/kraftlab/kraftlab/storage/disktest"
)

// What a full or failing disk does to the storage: nothing acknowledged is
// lost, no torn batch is ever built on, and once space returns the
// storage takes writes again. The Disk is disktest's, whose writes are
// real writes cut short where the space runs out.

func recs(tag string, n, size int) []storage.Record {
	out := make([]storage.Record, n)
	for i := range out {
		out[i] = storage.Record{Value: bytes.Repeat([]byte(tag[:1]), size)}
	}
	return out
}

func openOn(t *testing.T, dir string, disk storage.Disk, opts storage.Options) *storage.Log {
	t.Helper()
	opts.Disk = disk
	l, err := storage.Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

func segmentSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = st.Size()
	}
	return out
}

func readLog(t *testing.T, l *storage.Log) []byte {
	t.Helper()
	var out []byte
	for next := l.LogStartOffset(); next < l.LogEndOffset(); {
		raw, err := l.Read(next, 1<<20)
		if err != nil {
			t.Fatalf("read %d: %v", next, err)
		}
		err = storage.Batches(raw, func(_ int, b *storage.Batch) error {
			next = b.NextOffset()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, raw...)
	}
	return out
}

// A batch the disk has room for only part of is cut back at once: the
// segment holds whole batches only, the next append (smaller than the torn
// part) continues at the same offset and position, and reopening finds no
// torn tail to cut. Under a segment size that makes the failed batch roll,
// the new segment goes too.
func TestFullDiskCutsTornAppendBack(t *testing.T) {
	for _, segBytes := range []int{1 << 20, 3000} {
		t.Run(fmt.Sprint("segment bytes ", segBytes), func(t *testing.T) {
			dir := t.TempDir()
			disk := disktest.New()
			opts := storage.Options{FlushPolicy: storage.FlushNever, SegmentBytes: segBytes}
			l := openOn(t, dir, disk, opts)
			for i := range 3 {
				if _, _, err := l.AppendAsLeader(recs(fmt.Sprint("a", i), 4, 200), 1, 1); err != nil {
					t.Fatal(err)
				}
			}
			end, before := l.LogEndOffset(), segmentSizes(t, dir)

			disk.SetFree(700) // part of the next batch
			_, _, err := l.AppendAsLeader(recs("big", 4, 400), 1, 1)
			if !errors.Is(err, syscall.ENOSPC) || storage.FaultOf(err) != storage.FaultDiskFull {
				t.Fatalf("append on a full disk: %v (fault %v), want ENOSPC", err, storage.FaultOf(err))
			}
			if got := segmentSizes(t, dir); !mapsEqual(got, before) {
				t.Fatalf("segments after the torn append %v, before %v: the torn bytes stayed", got, before)
			}
			if l.LogEndOffset() != end {
				t.Fatalf("log end %d after a failed append, want %d", l.LogEndOffset(), end)
			}

			disk.Free()
			base, _, err := l.AppendAsLeader(recs("s", 1, 10), 1, 1)
			if err != nil || base != end {
				t.Fatalf("append once space returned: base %d, %v; want base %d", base, err, end)
			}
			want := readLog(t, l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openOn(t, dir, disk, opts)
			defer l.Close()
			if r := l.Recovery(); r.Truncated() {
				t.Fatalf("reopen cut a tail: %v", r)
			}
			if got := readLog(t, l); !bytes.Equal(got, want) {
				t.Fatalf("reopened log differs: %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A failed fsync fails the log: the operating system may have dropped what
// it could not write, so the log refuses to go on as if it were durable.
// A crash then keeps exactly the flushed part.
func TestFailedFsyncFailsTheLog(t *testing.T) {
	dir := t.TempDir()
	disk := disktest.New()
	// The quorum's policy: appends never fsync, Flush does.
	opts := storage.Options{FlushPolicy: storage.FlushInterval, FlushInterval: 1<<63 - 1}
	l := openOn(t, dir, disk, opts)
	if _, _, err := l.AppendAsLeader(recs("a", 3, 100), 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := l.LogEndOffset()
	if _, _, err := l.AppendAsLeader(recs("b", 3, 100), 1, 1); err != nil {
		t.Fatal(err)
	}
	disk.FailSync(syscall.EIO)
	if err := l.Flush(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("flush with a failing fsync: %v", err)
	}
	if l.LastFlushedOffset() != flushed {
		t.Fatalf("flushed offset %d after a failed fsync, want %d", l.LastFlushedOffset(), flushed)
	}
	disk.FailSync(nil)
	if _, _, err := l.AppendAsLeader(recs("c", 1, 10), 1, 1); err == nil || !strings.Contains(err.Error(), "reopen") {
		t.Fatalf("append after a failed fsync: %v, want the log failed", err)
	}
	if err := l.Flush(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a second flush after a failed fsync: %v, want the failure again", err)
	}
	if err := l.Crash(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("crash of the failed log: %v, want its failure", err)
	}
	l = openOn(t, dir, disk, opts)
	defer l.Close()
	if l.LogEndOffset() != flushed {
		t.Fatalf("reopened log ends at %d, want the flushed %d", l.LogEndOffset(), flushed)
	}
}

func snapshot(t *testing.T, epoch int32) []byte {
	t.Helper()
	raw := storage.AppendBatch(nil, storage.BatchSpec{Control: true, LeaderEpoch: epoch}, []storage.Record{storage.SnapshotHeaderRecord(1)})
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 1, LeaderEpoch: epoch}, recs("s", 20, 100))
	return storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 21, Control: true, LeaderEpoch: epoch}, []storage.Record{storage.SnapshotFooterRecord()})
}

// A snapshot the disk cannot hold is refused whole: its writer takes no
// more bytes and cannot be frozen, nothing is listed, no partial file is
// left, and the next snapshot is written once space returns.
func TestFullDiskRefusesSnapshot(t *testing.T) {
	dir := t.TempDir()
	disk := disktest.New()
	s, err := storage.OpenSnapshotsOn(dir, disk)
	if err != nil {
		t.Fatal(err)
	}
	id := storage.SnapshotID{EndOffset: 10, Epoch: 1}
	raw := snapshot(t, 1)
	w, err := s.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	disk.SetFree(int64(len(raw) / 2))
	if err := w.Append(raw); storage.FaultOf(err) != storage.FaultDiskFull {
		t.Fatalf("append to a snapshot on a full disk: %v", err)
	}
	disk.Free()
	if err := w.Append(raw[len(raw)/2:]); err == nil {
		t.Fatal("a writer that failed took more bytes")
	}
	if err := w.Freeze(); err == nil {
		t.Fatal("a writer that failed was frozen")
	}
	if ids := s.List(); len(ids) != 0 {
		t.Fatalf("listed %v after a failed snapshot", ids)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	w, err = s.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	if ids := s.List(); !slices.Equal(ids, []storage.SnapshotID{id}) {
		t.Fatalf("listed %v, want %v", ids, id)
	}
}

// A quorum-state write the disk cannot take leaves the old state, and no
// temporary file.
func TestFullDiskKeepsQuorumState(t *testing.T) {
	dir := t.TempDir()
	disk := disktest.New()
	q := storage.NewQuorumStateFileOn(dir, disk)
	old := storage.ElectionState{Epoch: 3, LeaderID: 1, VotedID: 2, Voters: []int32{1, 2, 3}}
	if err := q.Write(old); err != nil {
		t.Fatal(err)
	}
	disk.Fill()
	if err := q.Write(storage.ElectionState{Epoch: 4, LeaderID: -1, VotedID: 3, Voters: []int32{1, 2, 3}}); storage.FaultOf(err) != storage.FaultDiskFull {
		t.Fatalf("write on a full disk: %v", err)
	}
	got, err := q.Read()
	if err != nil || got.Epoch != old.Epoch || got.VotedID != old.VotedID || got.LeaderID != old.LeaderID {
		t.Fatalf("read %+v, %v after a failed write; want %+v", got, err, old)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

// ProbeWrite tells a folder that takes writes from one that does not, and
// leaves nothing behind.
func TestProbeWrite(t *testing.T) {
	dir := t.TempDir()
	disk := disktest.New()
	if err := storage.ProbeWrite(disk, dir); err != nil {
		t.Fatal(err)
	}
	disk.Fill()
	if err := storage.ProbeWrite(disk, dir); storage.FaultOf(err) != storage.FaultDiskFull {
		t.Fatalf("probe of a full disk: %v", err)
	}
	disk.Free()
	disk.FailSync(syscall.EIO)
	if err := storage.ProbeWrite(disk, dir); storage.FaultOf(err) != storage.FaultIO {
		t.Fatalf("probe of a disk whose fsync fails: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

func TestFaultOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want storage.Fault
	}{
		{nil, storage.NoFault},
		{errors.New("not from a file"), storage.NoFault},
		{fmt.Errorf("append: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), storage.FaultDiskFull},
		{syscall.EDQUOT, storage.FaultDiskFull},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}, storage.FaultReadOnly},
		{&os.PathError{Op: "sync", Path: "x", Err: syscall.EIO}, storage.FaultIO},
		{&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}, storage.FaultIO},
	} {
		if got := storage.FaultOf(c.err); got != c.want {
			t.Errorf("FaultOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
