package storage

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Snapshot file suffixes (KIP-630): a snapshot is written as .part, renamed
// when complete, and renamed to .deleted before it is removed.
const (
	snapshotSuffix        = ".checkpoint"
	snapshotPartSuffix    = ".checkpoint.part"
	snapshotDeletedSuffix = ".checkpoint.deleted"
)

// SnapshotID names a snapshot by the log offset it ends at (exclusive: the
// first offset it does not cover) and the epoch of the record before it.
type SnapshotID struct {
	EndOffset int64 `json:"endOffset"`
	Epoch     int32 `json:"epoch"`
}

// String is the snapshot's file name stem, as Kafka prints it.
func (id SnapshotID) String() string {
	return fmt.Sprintf("%020d-%010d", id.EndOffset, id.Epoch)
}

// Compare orders snapshot ids by end offset, then epoch.
func (id SnapshotID) Compare(o SnapshotID) int {
	return cmp.Or(cmp.Compare(id.EndOffset, o.EndOffset), cmp.Compare(id.Epoch, o.Epoch))
}

func parseSnapshotName(name, suffix string) (SnapshotID, bool) {
	stem, ok := strings.CutSuffix(name, suffix)
	if !ok || len(stem) != 31 || stem[20] != '-' {
		return SnapshotID{}, false
	}
	off, err1 := strconv.ParseInt(stem[:20], 10, 64)
	epoch, err2 := strconv.ParseInt(stem[21:], 10, 32)
	if err1 != nil || err2 != nil || off < 0 || epoch < 0 {
		return SnapshotID{}, false
	}
	return SnapshotID{EndOffset: off, Epoch: int32(epoch)}, true
}

// Snapshots is the set of frozen snapshots in a directory. It is safe for
// concurrent use.
type Snapshots struct {
	dir  string
	disk Disk

	mu  sync.Mutex
	ids []SnapshotID // sorted
}

// OpenSnapshots opens the snapshots in dir, creating it if needed. It
// removes what a crash can leave: unfinished .part files and .deleted files.
// It checks every snapshot file whole (see Freeze) and sets a corrupt one
// aside, renamed with a .corrupt suffix and never listed, so that the node
// fetches the leader's instead; but when a corrupt snapshot is the only copy
// of the offsets below the log start (of the log in the same directory), it
// fails with ErrCorruptSnapshot naming the file. Open reports what was set
// aside in its RecoveryReport.
func OpenSnapshots(dir string) (*Snapshots, error) { return OpenSnapshotsOn(dir, nil) }

// OpenSnapshotsOn is OpenSnapshots for snapshots written through disk
// (nil: OS).
func OpenSnapshotsOn(dir string, disk Disk) (*Snapshots, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	st, err := recoverSnapshots(dir, entries)
	if err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	s := &Snapshots{dir: dir, disk: diskOrOS(disk), ids: st.ids}
	for _, e := range entries {
		name := e.Name()
		_, part := parseSnapshotName(name, snapshotPartSuffix)
		_, deleted := parseSnapshotName(name, snapshotDeletedSuffix)
		if part || deleted {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("open snapshots: %w", err)
			}
		}
	}
	return s, nil
}

func (s *Snapshots) path(id SnapshotID, suffix string) string {
	return filepath.Join(s.dir, id.String()+suffix)
}

// List returns the ids of the frozen snapshots, oldest first.
func (s *Snapshots) List() []SnapshotID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}

// Latest returns the id of the newest snapshot, if there is one.
func (s *Snapshots) Latest() (SnapshotID, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return SnapshotID{}, false
	}
	return s.ids[len(s.ids)-1], true
}

// Earliest returns the id of the oldest snapshot, if there is one.
func (s *Snapshots) Earliest() (SnapshotID, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return SnapshotID{}, false
	}
	return s.ids[0], true
}

// Create starts writing snapshot id. The snapshot appears in List only once
// its writer is frozen.
func (s *Snapshots) Create(id SnapshotID) (*SnapshotWriter, error) {
	if id.EndOffset < 0 || id.Epoch < 0 {
		return nil, fmt.Errorf("create snapshot %v: negative end offset or epoch", id)
	}
	s.mu.Lock()
	_, exists := slices.BinarySearchFunc(s.ids, id, SnapshotID.Compare)
	s.mu.Unlock()
	if exists {
		return nil, fmt.Errorf("create snapshot %v: %w", id, fs.ErrExist)
	}
	path := s.path(id, snapshotPartSuffix)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create snapshot: %w", err)
	}
	return &SnapshotWriter{s: s, id: id, f: f, path: path}, nil
}

// Open opens frozen snapshot id for reading.
func (s *Snapshots) Open(id SnapshotID) (*SnapshotReader, error) {
	f, err := os.Open(s.path(id, snapshotSuffix))
	if err != nil {
		return nil, fmt.Errorf("open snapshot: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open snapshot: %w", err)
	}
	return &SnapshotReader{id: id, f: f, path: f.Name(), size: st.Size()}, nil
}

// Delete removes snapshot id: renamed to .deleted first, so that a crash
// never leaves a half-deleted snapshot under its real name, then unlinked.
// Readers that have it open can finish.
func (s *Snapshots) Delete(id SnapshotID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(id)
}

func (s *Snapshots) deleteLocked(id SnapshotID) error {
	i, found := slices.BinarySearchFunc(s.ids, id, SnapshotID.Compare)
	if !found {
		return fmt.Errorf("delete snapshot %v: %w", id, fs.ErrNotExist)
	}
	deleted := s.path(id, snapshotDeletedSuffix)
	if err := os.Rename(s.path(id, snapshotSuffix), deleted); err != nil {
		return fmt.Errorf("delete snapshot: %w", err)
	}
	s.ids = slices.Delete(s.ids, i, i+1)
	if err := os.Remove(deleted); err != nil {
		return fmt.Errorf("delete snapshot: %w", err)
	}
	return nil
}

// DeleteBefore deletes every snapshot older than id, as the log cleaner does
// once a newer snapshot covers them.
func (s *Snapshots) DeleteBefore(id SnapshotID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.ids) > 0 && s.ids[0].Compare(id) < 0 {
		if err := s.deleteLocked(s.ids[0]); err != nil {
			return err
		}
	}
	return nil
}

// SnapshotWriter writes one snapshot. It is not safe for concurrent use.
type SnapshotWriter struct {
	s    *Snapshots
	id   SnapshotID
	f    *os.File
	path string
	size int64
	done bool
	// failed is why an Append failed; the writer takes nothing more.
	failed error
}

// ID is the id of the snapshot being written.
func (w *SnapshotWriter) ID() SnapshotID { return w.id }

// Size is the number of bytes appended so far: the position a follower asks
// for next in FetchSnapshot.
func (w *SnapshotWriter) Size() int64 { return w.size }

// Append adds raw bytes to the snapshot. They need not end on a batch
// boundary (FetchSnapshot chunks do not); Freeze checks the whole. After a
// failed Append (a full disk) the writer refuses more and Freeze: the file
// may hold part of the bytes, and only Abort is left.
func (w *SnapshotWriter) Append(b []byte) error {
	if w.done {
		return fmt.Errorf("append to snapshot %v: writer already frozen or aborted", w.id)
	}
	if w.failed != nil {
		return w.failed
	}
	if _, err := w.s.disk.WriteAt(w.f, b, w.size); err != nil {
		w.failed = fmt.Errorf("append to snapshot %v: %w", w.id, err)
		return w.failed
	}
	w.size += int64(len(b))
	return nil
}

// Freeze completes the snapshot: it checks that the file is a whole
// snapshot of its id as Kafka lays one out (batches passing their CRC with
// offsets from zero, all in the id's epoch, a SnapshotHeader record first and
// a SnapshotFooter last; OpenSnapshots checks the same), fsyncs it, renames it to its final name
// and fsyncs the directory. After a failed check the writer is aborted.
func (w *SnapshotWriter) Freeze() error {
	if w.done {
		return fmt.Errorf("freeze snapshot %v: writer already frozen or aborted", w.id)
	}
	if w.failed != nil {
		w.Abort()
		return fmt.Errorf("freeze snapshot %v: %w", w.id, w.failed)
	}
	if err := w.freeze(); err != nil {
		w.Abort()
		return fmt.Errorf("freeze snapshot %v: %w", w.id, err)
	}
	return nil
}

func (w *SnapshotWriter) freeze() error {
	if _, err := checkSnapshotFile(w.f, w.path, w.size, w.id); err != nil {
		return err
	}
	if err := w.s.disk.Sync(w.f); err != nil {
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	w.done = true
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	i, exists := slices.BinarySearchFunc(w.s.ids, w.id, SnapshotID.Compare)
	if exists {
		os.Remove(w.path)
		return fs.ErrExist
	}
	if err := os.Rename(w.path, w.s.path(w.id, snapshotSuffix)); err != nil {
		os.Remove(w.path)
		return err
	}
	if err := syncDir(w.s.dir); err != nil {
		return err
	}
	w.s.ids = slices.Insert(w.s.ids, i, w.id)
	return nil
}

// Abort discards the snapshot being written. It does nothing after Freeze.
func (w *SnapshotWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	err := errors.Join(w.f.Close(), os.Remove(w.path))
	if err != nil {
		return fmt.Errorf("abort snapshot %v: %w", w.id, err)
	}
	return nil
}

// SnapshotReader reads one frozen snapshot. It is safe for concurrent use.
type SnapshotReader struct {
	id   SnapshotID
	f    *os.File
	path string
	size int64
}

// ID is the snapshot's id.
func (r *SnapshotReader) ID() SnapshotID { return r.id }

// Size is the snapshot's size in bytes.
func (r *SnapshotReader) Size() int64 { return r.size }

// ReadAt returns up to maxBytes raw bytes from position pos, as a
// FetchSnapshot response carries them: they need not end on a batch
// boundary. At the end of the snapshot it returns no bytes.
func (r *SnapshotReader) ReadAt(pos int64, maxBytes int) ([]byte, error) {
	if pos < 0 || pos > r.size {
		return nil, fmt.Errorf("read snapshot %v at position %d: %w: size is %d", r.id, pos, ErrOffsetOutOfRange, r.size)
	}
	if maxBytes <= 0 {
		return nil, fmt.Errorf("read snapshot %v: max bytes %d must be positive", r.id, maxBytes)
	}
	buf := make([]byte, min(int64(maxBytes), r.size-pos))
	if _, err := r.f.ReadAt(buf, pos); err != nil {
		return nil, fmt.Errorf("read snapshot %s at position %d: %w", r.path, pos, err)
	}
	return buf, nil
}

// Batches reads the whole snapshot and decodes its batches, checking each
// one's CRC. The batches alias one buffer.
func (r *SnapshotReader) Batches() ([]Batch, error) {
	return checkSnapshotFile(r.f, r.path, r.size, r.id)
}

// Records returns the data records of the snapshot, in order, leaving out
// control batches (SnapshotHeader, SnapshotFooter).
func (r *SnapshotReader) Records() ([]Record, error) {
	batches, err := r.Batches()
	if err != nil {
		return nil, err
	}
	var out []Record
	for i := range batches {
		if batches[i].IsControl() {
			continue
		}
		recs, err := batches[i].Records()
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", r.path, err)
		}
		out = append(out, recs...)
	}
	return out, nil
}

// Close closes the snapshot file.
func (r *SnapshotReader) Close() error { return r.f.Close() }

// checkSnapshotFile reads a snapshot file of the given size and verifies
// it as a whole snapshot of id.
func checkSnapshotFile(f *os.File, path string, size int64, id SnapshotID) ([]Batch, error) {
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", path, err)
	}
	out, err := verifySnapshot(buf, id)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return out, nil
}
