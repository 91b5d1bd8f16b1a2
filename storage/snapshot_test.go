package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// snapshotBytes encodes a snapshot the way the quorum frames one: a
// SnapshotHeader control batch, data batches, a SnapshotFooter batch, all in
// the snapshot's epoch.
func snapshotBytes(epoch int32, n int) ([]byte, []Record) {
	raw := AppendBatch(nil, BatchSpec{Control: true, LeaderEpoch: epoch}, []Record{SnapshotHeaderRecord(1700000000000)})
	var data []Record
	off := int64(1)
	for i := range n {
		recs := records(fmt.Sprint("s", i), 5, 100)
		raw = AppendBatch(raw, BatchSpec{BaseOffset: off, LeaderEpoch: epoch}, recs)
		off += int64(len(recs))
		data = append(data, recs...)
	}
	raw = AppendBatch(raw, BatchSpec{BaseOffset: off, Control: true, LeaderEpoch: epoch}, []Record{SnapshotFooterRecord()})
	return raw, data
}

func TestSnapshotWriteListReadDelete(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Latest(); ok {
		t.Fatal("latest snapshot of an empty directory")
	}
	raw, data := snapshotBytes(3, 20)
	ids := []SnapshotID{{EndOffset: 500, Epoch: 3}, {EndOffset: 100, Epoch: 1}, {EndOffset: 500, Epoch: 4}, {EndOffset: 0, Epoch: 0}}
	for _, id := range ids {
		raw, _ := snapshotBytes(id.Epoch, 20)
		w, err := s.Create(id)
		if err != nil {
			t.Fatal(err)
		}
		// Chunks that do not respect batch boundaries, as FetchSnapshot delivers them.
		for pos := 0; pos < len(raw); pos += 777 {
			if err := w.Append(raw[pos:min(pos+777, len(raw))]); err != nil {
				t.Fatal(err)
			}
		}
		if w.Size() != int64(len(raw)) {
			t.Fatalf("writer size %d, want %d", w.Size(), len(raw))
		}
		if got := len(s.List()); got != 0 && id == ids[0] {
			t.Fatal("a snapshot is listed before it is frozen")
		}
		if err := w.Freeze(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000500-0000000003.checkpoint")); err != nil {
		t.Fatalf("snapshot file name: %v", err)
	}
	want := "[00000000000000000000-0000000000 00000000000000000100-0000000001 00000000000000000500-0000000003 00000000000000000500-0000000004]"
	if got := fmt.Sprint(s.List()); got != want {
		t.Fatalf("list %s, want %s", got, want)
	}
	if l, _ := s.Latest(); l != (SnapshotID{500, 4}) {
		t.Fatalf("latest %v", l)
	}
	if _, err := s.Create(SnapshotID{100, 1}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("create of an existing snapshot: %v", err)
	}

	r, err := s.Open(SnapshotID{500, 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != int64(len(raw)) {
		t.Fatalf("reader size %d", r.Size())
	}
	var got []byte
	for pos := int64(0); ; {
		chunk, err := r.ReadAt(pos, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(chunk) == 0 {
			break
		}
		if len(chunk) > 1000 {
			t.Fatalf("chunk of %d bytes", len(chunk))
		}
		got = append(got, chunk...)
		pos += int64(len(chunk))
	}
	if string(got) != string(raw) {
		t.Fatal("chunks do not add up to the snapshot")
	}
	if _, err := r.ReadAt(r.Size()+1, 10); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past the end: %v", err)
	}
	recs, err := r.Records()
	if err != nil || len(recs) != len(data) {
		t.Fatalf("records: %d, %v", len(recs), err)
	}
	for i := range recs {
		if string(recs[i].Value) != string(data[i].Value) {
			t.Fatalf("record %d: %q", i, recs[i].Value)
		}
	}

	// Deleting a snapshot a reader has open leaves the reader working.
	if err := s.Delete(SnapshotID{500, 3}); err != nil {
		t.Fatal(err)
	}
	if chunk, err := r.ReadAt(0, 10); err != nil || len(chunk) != 10 {
		t.Fatalf("read of a deleted snapshot: %v", err)
	}
	r.Close()
	if err := s.Delete(SnapshotID{500, 3}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Open(SnapshotID{500, 3}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a deleted snapshot: %v", err)
	}
	if err := s.DeleteBefore(SnapshotID{500, 4}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.List()); got != "[00000000000000000500-0000000004]" {
		t.Fatalf("after DeleteBefore: %s", got)
	}
	if e, _ := s.Earliest(); e != (SnapshotID{500, 4}) {
		t.Fatalf("earliest %v", e)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d files, want 1", len(entries))
	}
}

func TestSnapshotFreezeChecksBatches(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := snapshotBytes(1, 3)
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)/2] ^= 4
	for name, b := range map[string][]byte{"torn": raw[:len(raw)-1], "flipped": flipped, "empty": nil} {
		w, err := s.Create(SnapshotID{EndOffset: 10, Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Freeze(); err == nil {
			t.Fatalf("%s snapshot frozen", name)
		}
		if len(s.List()) != 0 {
			t.Fatalf("%s snapshot listed", name)
		}
		if err := w.Append(raw); err == nil {
			t.Fatal("append after a failed freeze")
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("failed freezes left %d files", len(entries))
	}
	w, _ := s.Create(SnapshotID{EndOffset: 10, Epoch: 1})
	w.Append(raw)
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatal("abort left a file")
	}
}

func TestOpenSnapshotsCleansUp(t *testing.T) {
	dir := t.TempDir()
	raw, _ := snapshotBytes(2, 1)
	files := map[string]bool{ // name: kept
		"00000000000000000100-0000000002.checkpoint":         true,
		"00000000000000000200-0000000002.checkpoint.part":    false,
		"00000000000000000050-0000000001.checkpoint.deleted": false,
		"00000000000000000000.log":                           true,
		"quorum-state":                                       true,
		"notes.checkpoint":                                   true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := OpenSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.List()); got != "[00000000000000000100-0000000002]" {
		t.Fatalf("list %s", got)
	}
	for name, kept := range files {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != kept {
			t.Fatalf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
}
