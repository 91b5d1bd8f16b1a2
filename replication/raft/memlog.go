package raft

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/kraftlab/kraftlab/storage"
)

// MemoryLog is a Log held in memory, like Kafka's MockLog: it stores the
// batches it is given (without copying them; callers must not modify them
// afterwards), tracks the flushed offset, and Crash drops the unflushed tail
// as a process death would. Snapshots and truncations are durable at once.
// The simulation and tests use it; it is not safe for concurrent use.
type MemoryLog struct {
	start     int64
	end       int64
	flushed   int64
	batches   []memBatch
	epochs    []storage.EpochEntry
	snapshots []memSnapshot
	// crashes invalidates snapshot writers opened before a Crash.
	crashes int
}

type memBatch struct {
	base, next int64
	epoch      int32
	raw        []byte
}

type memSnapshot struct {
	id   SnapshotID
	data []byte
}

// NewMemoryLog returns an empty log.
func NewMemoryLog() *MemoryLog { return &MemoryLog{} }

// LogStartOffset implements Log.
func (l *MemoryLog) LogStartOffset() int64 { return l.start }

// LogEndOffset implements Log.
func (l *MemoryLog) LogEndOffset() int64 { return l.end }

// LastFlushedOffset implements Log.
func (l *MemoryLog) LastFlushedOffset() int64 { return l.flushed }

// Flush implements Log.
func (l *MemoryLog) Flush() error {
	l.flushed = l.end
	return nil
}

// Crash loses everything after the flushed offset, and any snapshot still
// being written, as if the process had died.
func (l *MemoryLog) Crash() {
	l.crashes++
	if l.flushed < l.end {
		_ = l.truncate(l.flushed)
	}
}

// LastEpoch implements Log.
func (l *MemoryLog) LastEpoch() int32 {
	if len(l.epochs) == 0 {
		return -1
	}
	return l.epochs[len(l.epochs)-1].Epoch
}

// EndOffsetForEpoch implements Log.
func (l *MemoryLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	i := sort.Search(len(l.epochs), func(i int) bool { return l.epochs[i].Epoch > epoch }) - 1
	if i < 0 {
		return -1, -1
	}
	if i == len(l.epochs)-1 {
		return l.epochs[i].Epoch, l.end
	}
	return l.epochs[i].Epoch, l.epochs[i+1].StartOffset
}

// AppendAsLeader implements Log.
func (l *MemoryLog) AppendAsLeader(records []storage.Record, epoch int32, timestampMs int64) (int64, int64, error) {
	return l.appendLeader(records, epoch, timestampMs, false)
}

// AppendControl implements Log.
func (l *MemoryLog) AppendControl(records []storage.Record, epoch int32, timestampMs int64) (int64, int64, error) {
	return l.appendLeader(records, epoch, timestampMs, true)
}

func (l *MemoryLog) appendLeader(records []storage.Record, epoch int32, ts int64, control bool) (int64, int64, error) {
	if len(records) == 0 {
		return 0, 0, errors.New("append: no records")
	}
	base := l.end
	size := storage.BatchHeaderSize
	for _, r := range records {
		size += len(r.Key) + len(r.Value) + 32
	}
	b := storage.AppendBatch(make([]byte, 0, size), storage.BatchSpec{BaseOffset: base, LeaderEpoch: epoch, Control: control, Timestamp: ts}, records)
	if err := l.append(b, false); err != nil {
		return 0, 0, err
	}
	return base, l.end - 1, nil
}

// AppendAsFollower implements Log.
func (l *MemoryLog) AppendAsFollower(batches []byte) error { return l.append(batches, true) }

func (l *MemoryLog) append(b []byte, verify bool) error {
	// Check every batch before appending any, so a bad input leaves the log as it was.
	var add []memBatch
	next, last := l.end, l.LastEpoch()
	for len(b) > 0 {
		base, lastOff, epoch, size, err := storage.PeekBatch(b)
		if err != nil {
			return fmt.Errorf("append at offset %d: %w", next, err)
		}
		if verify {
			if _, err := storage.DecodeBatch(b); err != nil {
				return fmt.Errorf("append at offset %d: %w", next, err)
			}
		}
		if base != next {
			return fmt.Errorf("append: batch at offset %d, log end offset is %d", base, next)
		}
		if epoch < last {
			return fmt.Errorf("append: batch at offset %d has leader epoch %d, below the log's %d", base, epoch, last)
		}
		add = append(add, memBatch{base: base, next: lastOff + 1, epoch: epoch, raw: b[:size:size]})
		next, last = lastOff+1, epoch
		b = b[size:]
	}
	for _, mb := range add {
		if len(l.epochs) == 0 || l.epochs[len(l.epochs)-1].Epoch < mb.epoch {
			l.epochs = append(l.epochs, storage.EpochEntry{Epoch: mb.epoch, StartOffset: mb.base})
		}
		l.batches = append(l.batches, mb)
		l.end = mb.next
	}
	return nil
}

// find returns the index of the batch holding offset.
func (l *MemoryLog) find(offset int64) int {
	return sort.Search(len(l.batches), func(i int) bool { return l.batches[i].next > offset })
}

// Read implements Log.
func (l *MemoryLog) Read(offset int64, maxBytes int) ([]byte, error) {
	if offset < l.start || offset > l.end {
		return nil, fmt.Errorf("read at offset %d: outside the log [%d, %d)", offset, l.start, l.end)
	}
	i := l.find(offset)
	if i == len(l.batches) {
		return nil, nil
	}
	n, size := 1, len(l.batches[i].raw)
	for i+n < len(l.batches) && size+len(l.batches[i+n].raw) <= maxBytes {
		size += len(l.batches[i+n].raw)
		n++
	}
	if n == 1 {
		return l.batches[i].raw, nil
	}
	out := make([]byte, 0, size)
	for _, b := range l.batches[i : i+n] {
		out = append(out, b.raw...)
	}
	return out, nil
}

// TruncateTo implements Log.
func (l *MemoryLog) TruncateTo(offset int64) error {
	if offset < l.start || offset > l.end {
		return fmt.Errorf("truncate to %d: outside the log [%d, %d]", offset, l.start, l.end)
	}
	return l.truncate(offset)
}

func (l *MemoryLog) truncate(offset int64) error {
	i := l.find(offset)
	if i < len(l.batches) && l.batches[i].base != offset {
		return fmt.Errorf("truncate to %d: inside the batch at offset %d", offset, l.batches[i].base)
	}
	l.batches = l.batches[:i:i]
	l.end = offset
	l.flushed = min(l.flushed, offset)
	for len(l.epochs) > 0 && l.epochs[len(l.epochs)-1].StartOffset >= offset {
		l.epochs = l.epochs[:len(l.epochs)-1]
	}
	return nil
}

// LatestSnapshot implements Log.
func (l *MemoryLog) LatestSnapshot() (SnapshotID, bool) {
	if len(l.snapshots) == 0 {
		return SnapshotID{}, false
	}
	return l.snapshots[len(l.snapshots)-1].id, true
}

// Snapshots lists the complete snapshots, oldest first.
func (l *MemoryLog) Snapshots() []SnapshotID {
	ids := make([]SnapshotID, len(l.snapshots))
	for i, s := range l.snapshots {
		ids[i] = s.id
	}
	return ids
}

func (l *MemoryLog) snapshot(id SnapshotID) (memSnapshot, bool) {
	for _, s := range l.snapshots {
		if s.id == id {
			return s, true
		}
	}
	return memSnapshot{}, false
}

// CreateSnapshot implements Log.
func (l *MemoryLog) CreateSnapshot(id SnapshotID) (SnapshotWriter, error) {
	if id.EndOffset < 0 || id.Epoch < 0 {
		return nil, fmt.Errorf("create snapshot %v: negative id", id)
	}
	if _, ok := l.snapshot(id); ok {
		return nil, fmt.Errorf("create snapshot %v: already exists", id)
	}
	return &memSnapshotWriter{log: l, id: id, crashes: l.crashes}, nil
}

// ReadSnapshot implements Log.
func (l *MemoryLog) ReadSnapshot(id SnapshotID, position int64, maxBytes int) ([]byte, int64, error) {
	s, ok := l.snapshot(id)
	if !ok {
		return nil, 0, fmt.Errorf("read snapshot %v: %w", id, ErrSnapshotNotFound)
	}
	size := int64(len(s.data))
	if position < 0 || position > size {
		return nil, size, fmt.Errorf("read snapshot %v at position %d: size is %d", id, position, size)
	}
	end := min(size, position+int64(maxBytes))
	return s.data[position:end:end], size, nil
}

// AdvanceLogStart implements Log.
func (l *MemoryLog) AdvanceLogStart(offset int64) error {
	if offset <= l.start {
		return nil
	}
	if offset > l.end {
		return fmt.Errorf("advance log start to %d: past the log end offset %d", offset, l.end)
	}
	i := l.find(offset)
	if i < len(l.batches) && l.batches[i].base != offset {
		return fmt.Errorf("advance log start to %d: inside the batch at offset %d", offset, l.batches[i].base)
	}
	l.batches = slices.Clone(l.batches[i:])
	l.start = offset
	// The snapshot below the new start is durable: so is the log up to it.
	l.flushed = max(l.flushed, l.start)
	if len(l.batches) == 0 {
		l.epochs = nil
		return nil
	}
	// Keep the epoch that covers the new start, starting there.
	j := sort.Search(len(l.epochs), func(j int) bool { return l.epochs[j].StartOffset > l.start }) - 1
	l.epochs = slices.Clone(l.epochs[max(j, 0):])
	l.epochs[0].StartOffset = l.start
	return nil
}

// TruncateFullyAndStartAt implements Log.
func (l *MemoryLog) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("truncate fully: negative offset %d", offset)
	}
	l.batches, l.epochs = nil, nil
	l.start, l.end, l.flushed = offset, offset, offset
	return nil
}

// DeleteSnapshotsBefore implements Log.
func (l *MemoryLog) DeleteSnapshotsBefore(id SnapshotID) error {
	l.snapshots = slices.DeleteFunc(l.snapshots, func(s memSnapshot) bool { return s.id.Compare(id) < 0 })
	return nil
}

type memSnapshotWriter struct {
	log     *MemoryLog
	id      SnapshotID
	crashes int
	buf     []byte
	done    bool
}

func (w *memSnapshotWriter) ID() SnapshotID { return w.id }
func (w *memSnapshotWriter) Size() int64    { return int64(len(w.buf)) }

func (w *memSnapshotWriter) Append(chunk []byte) error {
	if w.done {
		return fmt.Errorf("snapshot %v: append after freeze or close", w.id)
	}
	w.buf = append(w.buf, chunk...)
	return nil
}

func (w *memSnapshotWriter) Freeze() error {
	if w.done {
		return fmt.Errorf("snapshot %v: freeze after freeze or close", w.id)
	}
	if w.crashes != w.log.crashes {
		return errors.New("snapshot writer outlived a crash")
	}
	w.done = true
	if _, ok := w.log.snapshot(w.id); ok {
		return fmt.Errorf("freeze snapshot %v: already exists", w.id)
	}
	l := w.log
	l.snapshots = append(l.snapshots, memSnapshot{id: w.id, data: w.buf})
	slices.SortFunc(l.snapshots, func(a, b memSnapshot) int { return a.id.Compare(b.id) })
	return nil
}

func (w *memSnapshotWriter) Abort() error {
	w.done = true
	return nil
}

// MemoryQuorumStateStore is a QuorumStateStore in memory; writes are durable
// at once, so it survives a simulated crash.
type MemoryQuorumStateStore struct {
	state   ElectionState
	written bool
}

// Read implements QuorumStateStore.
func (s *MemoryQuorumStateStore) Read() (ElectionState, error) {
	if !s.written {
		return ElectionState{LeaderID: -1, VotedID: -1}, nil
	}
	st := s.state
	st.Voters = slices.Clone(st.Voters)
	return st, nil
}

// Write implements QuorumStateStore.
func (s *MemoryQuorumStateStore) Write(e ElectionState) error {
	e.Voters = slices.Clone(e.Voters)
	s.state, s.written = e, true
	return nil
}
