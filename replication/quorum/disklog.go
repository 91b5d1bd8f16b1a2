package quorum

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// DiskLog is the raft.Log of a node on disk: the storage.Log and the
// storage.Snapshots of one directory, as Kafka keeps __cluster_metadata-0.
// It holds raft.Log's promises where storage is more lenient (truncation
// only at a batch boundary inside the log; no epoch in a log that holds no
// batch). Like the raft.Node that uses it, it is
// driven from one goroutine; the storage underneath is safe for concurrent
// reads.
type DiskLog struct {
	*storage.Log
	snaps *storage.Snapshots
	// tail serves reads of the newest batches from memory; enc is the
	// buffer leader batches are encoded in.
	tail storage.Tail
	enc  []byte
}

var _ raft.Log = (*DiskLog)(nil)

// OpenDiskLog opens (or creates) the log and snapshots in dir, recovering
// from what a crash left: see storage.Open and storage.OpenSnapshots. Both
// write through opts.Disk.
func OpenDiskLog(dir string, opts storage.Options) (*DiskLog, error) {
	snaps, err := storage.OpenSnapshotsOn(dir, opts.Disk)
	if err != nil {
		return nil, err
	}
	log, err := storage.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &DiskLog{Log: log, snaps: snaps}, nil
}

// AppendAsLeader implements raft.Log. The batch is encoded here, so that
// the tail keeps its bytes for the reads that follow.
func (d *DiskLog) AppendAsLeader(records []storage.Record, epoch int32, timestampMs int64) (base, last int64, err error) {
	return d.appendLeader(records, epoch, timestampMs, false)
}

// AppendControl implements raft.Log.
func (d *DiskLog) AppendControl(records []storage.Record, epoch int32, timestampMs int64) (base, last int64, err error) {
	return d.appendLeader(records, epoch, timestampMs, true)
}

func (d *DiskLog) appendLeader(records []storage.Record, epoch int32, ts int64, control bool) (int64, int64, error) {
	if len(records) == 0 {
		return 0, 0, errors.New("append: no records")
	}
	if epoch < 0 {
		return 0, 0, fmt.Errorf("append: negative leader epoch %d", epoch)
	}
	// The node is the log's only writer, so the batch gets this offset.
	end := d.Log.LogEndOffset()
	d.enc = storage.AppendBatch(d.enc[:0], storage.BatchSpec{BaseOffset: end, LeaderEpoch: epoch, Control: control, Timestamp: ts}, records)
	base, last, err := d.Log.AppendBatchesAsLeader(d.enc, epoch)
	if err != nil {
		return 0, 0, err
	}
	if base != end {
		d.tail.Reset() // not the bytes encoded: read them from the file
	} else {
		d.tail.Add(d.enc)
	}
	if cap(d.enc) > maxEncodeBytes {
		d.enc = nil
	}
	return base, last, nil
}

// maxEncodeBytes bounds the encoding buffer an append keeps for the next:
// one outsized batch should not pin its memory for the log's life.
const maxEncodeBytes = 1 << 20

// AppendAsFollower implements raft.Log.
func (d *DiskLog) AppendAsFollower(batches []byte) error {
	if err := d.Log.AppendAsFollower(batches); err != nil {
		return err
	}
	d.tail.Add(batches)
	return nil
}

// Read implements raft.Log, from the tail when it holds offset.
func (d *DiskLog) Read(offset int64, maxBytes int) ([]byte, error) {
	if b, ok := d.tail.Read(offset, maxBytes); ok {
		return b, nil
	}
	return d.Log.Read(offset, maxBytes)
}

// LastFlushedOffset implements raft.Log. Nothing below the log start can
// be lost any more (a snapshot covers it), so the flushed offset is at
// least the log start, as raft.MemoryLog reports it.
func (d *DiskLog) LastFlushedOffset() int64 {
	return max(d.Log.LastFlushedOffset(), d.Log.LogStartOffset())
}

// empty reports whether the log holds no batch. storage keeps the epoch of
// the end in an empty log, for its leader-epoch checkpoint; raft.Log has
// no epoch there, and raft falls back to the snapshot the log starts from.
func (d *DiskLog) empty() bool { return d.Log.LogStartOffset() == d.Log.LogEndOffset() }

// LastEpoch implements raft.Log.
func (d *DiskLog) LastEpoch() int32 {
	if d.empty() {
		return -1
	}
	return d.Log.LastEpoch()
}

// EndOffsetForEpoch implements raft.Log.
func (d *DiskLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	if d.empty() {
		return -1, -1
	}
	return d.Log.EndOffsetForEpoch(epoch)
}

// TruncateTo implements raft.Log: offset must be a batch boundary within
// the log (storage would round down to one, and ignore an offset past the
// end).
func (d *DiskLog) TruncateTo(offset int64) error {
	start, end := d.Log.LogStartOffset(), d.Log.LogEndOffset()
	if offset < start || offset > end {
		return fmt.Errorf("truncate to %d: outside the log [%d, %d]", offset, start, end)
	}
	if offset == end {
		return nil
	}
	if err := d.checkBoundary(offset); err != nil {
		return fmt.Errorf("truncate to %d: %w", offset, err)
	}
	d.tail.Reset()
	return d.Log.TruncateTo(offset)
}

// checkBoundary fails unless offset is the base offset of a batch in the
// log or the log end offset.
func (d *DiskLog) checkBoundary(offset int64) error {
	if offset == d.Log.LogEndOffset() {
		return nil
	}
	data, err := d.Log.Read(offset, storage.BatchHeaderSize)
	if err != nil {
		return err
	}
	base, _, _, _, err := storage.PeekBatch(data)
	if err != nil && !errors.Is(err, storage.ErrShortBatch) {
		return err
	}
	if base != offset {
		return fmt.Errorf("inside the batch at offset %d", base)
	}
	return nil
}

// AdvanceLogStart implements raft.Log: offset must be a batch boundary.
func (d *DiskLog) AdvanceLogStart(offset int64) error {
	start := d.Log.LogStartOffset()
	if offset <= start {
		return nil
	}
	if end := d.Log.LogEndOffset(); offset > end {
		return fmt.Errorf("advance log start to %d: past the log end offset %d", offset, end)
	}
	if err := d.checkBoundary(offset); err != nil {
		return fmt.Errorf("advance log start to %d: %w", offset, err)
	}
	if base, ok := d.tail.Base(); ok && base < offset {
		d.tail.Reset()
	}
	return d.Log.AdvanceLogStart(offset)
}

// TruncateFullyAndStartAt implements raft.Log.
func (d *DiskLog) TruncateFullyAndStartAt(offset int64) error {
	d.tail.Reset()
	return d.Log.TruncateFullyAndStartAt(offset)
}

// LatestSnapshot implements raft.Log.
func (d *DiskLog) LatestSnapshot() (raft.SnapshotID, bool) { return d.snaps.Latest() }

// Snapshots lists the complete snapshots, oldest first.
func (d *DiskLog) Snapshots() []raft.SnapshotID { return d.snaps.List() }

// CreateSnapshot implements raft.Log.
func (d *DiskLog) CreateSnapshot(id raft.SnapshotID) (raft.SnapshotWriter, error) {
	w, err := d.snaps.Create(id)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// ReadSnapshot implements raft.Log.
func (d *DiskLog) ReadSnapshot(id raft.SnapshotID, position int64, maxBytes int) ([]byte, int64, error) {
	r, err := d.snaps.Open(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("read snapshot %v: %w", id, raft.ErrSnapshotNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	data, err := r.ReadAt(position, maxBytes)
	return data, r.Size(), err
}

// DeleteSnapshotsBefore implements raft.Log.
func (d *DiskLog) DeleteSnapshotsBefore(id raft.SnapshotID) error { return d.snaps.DeleteBefore(id) }
