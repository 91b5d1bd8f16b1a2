package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrCorruptSnapshot: a snapshot file that is not a whole snapshot of the
// id its name gives.
var ErrCorruptSnapshot = errors.New("corrupt snapshot")

// snapshotCorruptSuffix marks a snapshot file found corrupt, renamed so that
// it is kept for inspection but never read again.
const snapshotCorruptSuffix = ".checkpoint.corrupt"

// SnapshotSetAside is a corrupt snapshot file that was renamed out of the
// way, kept for inspection.
type SnapshotSetAside struct {
	// File is the snapshot's name; KeptAs, the name it was renamed to.
	File, KeptAs string
	// Reason says what is wrong with it (ErrCorruptSnapshot, wrapped).
	Reason error
}

// verifySnapshot checks that b is a whole snapshot of id, as Kafka's
// RecordsSnapshotWriter lays one out: v2 batches passing their CRC, with
// offsets counting from zero, every batch of the epoch the name gives
// (Kafka writes a snapshot in its id's epoch), a SnapshotHeader as the first
// record and a SnapshotFooter as the last. It returns the batches.
func verifySnapshot(b []byte, id SnapshotID) ([]Batch, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty file", ErrCorruptSnapshot)
	}
	var out []Batch
	var next int64
	err := Batches(b, func(pos int, batch *Batch) error {
		switch {
		case batch.FirstOffset != next:
			return fmt.Errorf("%w: batch at position %d has offsets %d-%d where %d was expected", ErrCorruptSnapshot, pos, batch.FirstOffset, batch.LastOffset(), next)
		case batch.PartitionLeaderEpoch != id.Epoch:
			return fmt.Errorf("%w: batch at position %d has leader epoch %d, but the file is named for epoch %d", ErrCorruptSnapshot, pos, batch.PartitionLeaderEpoch, id.Epoch)
		}
		next = batch.NextOffset()
		out = append(out, *batch)
		return nil
	})
	if err != nil {
		if !errors.Is(err, ErrCorruptSnapshot) {
			err = fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
		}
		return nil, err
	}
	first, last := &out[0], &out[len(out)-1]
	if t, err := controlRecordAt(first, 0); err != nil || t != ControlSnapshotHeader {
		return nil, fmt.Errorf("%w: the first record is not a SnapshotHeader%s", ErrCorruptSnapshot, because(err))
	}
	if err := checkHeaderValue(first); err != nil {
		return nil, fmt.Errorf("%w: SnapshotHeader: %w", ErrCorruptSnapshot, err)
	}
	if t, err := controlRecordAt(last, -1); err != nil || t != ControlSnapshotFooter {
		return nil, fmt.Errorf("%w: the last record is not a SnapshotFooter (the file may be cut short)%s", ErrCorruptSnapshot, because(err))
	}
	return out, nil
}

func because(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// controlRecordAt returns the control type of the batch's record at index
// i (-1: the last), failing if the batch is not a control batch.
func controlRecordAt(b *Batch, i int) (kmsg.ControlRecordKeyType, error) {
	if !b.IsControl() {
		return 0, errors.New("not a control batch")
	}
	recs, err := b.Records()
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, errors.New("empty control batch")
	}
	if i < 0 {
		i = len(recs) - 1
	}
	return ControlType(recs[i])
}

// checkHeaderValue checks the SnapshotHeader record's value: version 0,
// an 8-byte timestamp, tagged fields.
func checkHeaderValue(b *Batch) error {
	recs, err := b.Records()
	if err != nil {
		return err
	}
	v := recs[0].Value
	if len(v) < 11 || binary.BigEndian.Uint16(v) != 0 {
		return fmt.Errorf("value of %d bytes is not a version 0 header", len(v))
	}
	return nil
}

// readSnapshotFile reads and verifies the snapshot file at path.
func readSnapshotFile(path string, id SnapshotID) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	_, err = verifySnapshot(b, id)
	return err
}

// snapshotState is what recoverSnapshots found in a directory.
type snapshotState struct {
	ids   []SnapshotID // the sound snapshots, sorted
	aside []SnapshotSetAside
}

// covers reports whether a sound snapshot holds every offset below offset.
func (s snapshotState) covers(offset int64) bool {
	return len(s.ids) > 0 && s.ids[len(s.ids)-1].EndOffset >= offset
}

// recoverSnapshots checks every snapshot file of dir and sets the corrupt
// ones aside (renamed with the .corrupt suffix), unless one of them is the
// only copy of the offsets below the log start: then the node cannot start
// from this folder, and it fails with an error naming the file and saying
// what to do. It is idempotent, so both OpenSnapshots and Open run it: the
// first to run sets files aside, and both report them (a file set aside at
// an earlier start is reported as long as it is there).
func recoverSnapshots(dir string, entries []os.DirEntry) (snapshotState, error) {
	var st snapshotState
	type bad struct {
		id  SnapshotID
		err error
	}
	var bads []bad
	for _, e := range entries {
		name := e.Name()
		if id, ok := parseSnapshotName(name, snapshotSuffix); ok {
			err := readSnapshotFile(filepath.Join(dir, name), id)
			switch {
			case err == nil:
				st.ids = append(st.ids, id)
			case errors.Is(err, ErrCorruptSnapshot):
				bads = append(bads, bad{id, err})
			default:
				return st, err // an I/O error is not corruption
			}
		} else if id, ok := parseSnapshotName(name, snapshotCorruptSuffix); ok {
			err := readSnapshotFile(filepath.Join(dir, name), id)
			if err == nil {
				err = fmt.Errorf("%w: set aside at an earlier start", ErrCorruptSnapshot)
			}
			st.aside = append(st.aside, SnapshotSetAside{File: id.String() + snapshotSuffix, KeptAs: name, Reason: err})
		}
	}
	slices.SortFunc(st.ids, SnapshotID.Compare)
	if len(bads) == 0 {
		return st, nil
	}
	start, err := logStartOnDisk(dir, entries)
	if err != nil {
		return st, err
	}
	for _, b := range bads {
		path := filepath.Join(dir, b.id.String()+snapshotSuffix)
		if start > 0 && b.id.EndOffset >= start && !st.covers(start) {
			return st, fmt.Errorf("%s: %w; it is the only copy of the offsets below the log start %d, so the node cannot start from this folder "+
				"(to rebuild the node from the leader, empty its folder: a voter rebuilt so has forgotten what it acknowledged, so rebuild one voter at a time with the others up)",
				path, b.err, start)
		}
		kept := b.id.String() + snapshotCorruptSuffix
		if err := os.Rename(path, filepath.Join(dir, kept)); err != nil {
			return st, fmt.Errorf("set aside corrupt snapshot: %w", err)
		}
		if err := syncDir(dir); err != nil {
			return st, err
		}
		st.aside = append(st.aside, SnapshotSetAside{File: filepath.Base(path), KeptAs: kept, Reason: b.err})
	}
	slices.SortFunc(st.aside, func(a, b SnapshotSetAside) int { return cmp.Compare(a.File, b.File) })
	return st, nil
}

// logStartOnDisk is the log start offset Open will find in dir: the
// checkpointed one, or the first segment's base if that is higher.
func logStartOnDisk(dir string, entries []os.DirEntry) (int64, error) {
	start, err := readLogStart(dir)
	if err != nil {
		return 0, err
	}
	first := int64(-1)
	for _, e := range entries {
		if base, ok := parseSegmentName(e.Name(), logSuffix); ok && (first < 0 || base < first) {
			first = base
		}
	}
	return max(start, first, 0), nil
}
