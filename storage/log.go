package storage

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Errors of the Log, wrapped with detail; test for them with errors.Is.
var (
	// ErrOffsetOutOfRange: a read below the log start or past the log end.
	ErrOffsetOutOfRange = errors.New("offset out of range")
	// ErrUnexpectedOffset: a batch that does not start at the offset the
	// log expects next.
	ErrUnexpectedOffset = errors.New("unexpected batch offset")
	// ErrStaleEpoch: a batch whose leader epoch is below the log's last one.
	ErrStaleEpoch = errors.New("leader epoch below the log's last epoch")
	// ErrCorruptLog: Open found damage that is not a torn tail.
	ErrCorruptLog = errors.New("corrupt log")
	// ErrClosed: the log was closed or crashed.
	ErrClosed = errors.New("log closed")
)

// FlushPolicy says when a Log fsyncs; see the package documentation.
type FlushPolicy int

// Flush policies.
const (
	// FlushAlways fsyncs inside every append.
	FlushAlways FlushPolicy = iota
	// FlushInterval fsyncs inside an append once Options.FlushInterval has
	// passed since the last fsync.
	FlushInterval
	// FlushNever never fsyncs; Flush only marks the data as flushed.
	FlushNever
)

// String returns "always", "interval" or "never".
func (p FlushPolicy) String() string {
	switch p {
	case FlushAlways:
		return "always"
	case FlushInterval:
		return "interval"
	case FlushNever:
		return "never"
	}
	return fmt.Sprintf("FlushPolicy(%d)", int(p))
}

// Options configure a Log. The zero value means Kafka's defaults and
// FlushAlways.
type Options struct {
	// SegmentBytes is the size at which a segment rolls (Kafka's
	// segment.bytes; metadata.log.segment.bytes for the metadata log).
	// Default 1 GiB.
	SegmentBytes int
	// IndexIntervalBytes is how many bytes may follow an index entry before
	// the next batch gets one (index.interval.bytes). Default 4096.
	IndexIntervalBytes int
	// FlushPolicy says when appends fsync.
	FlushPolicy FlushPolicy
	// FlushInterval is the most time an append leaves unflushed under
	// FlushInterval (Kafka's flush.ms).
	FlushInterval time.Duration
	// Now is the clock FlushInterval is measured with. Default time.Now.
	Now func() time.Time
	// SetAsideDamage makes Open cut the log at damage that intact data
	// follows instead of failing with ErrCorruptLog: the damaged segment
	// is copied whole to <segment>.log.corrupt and cut at its first bad
	// batch, later segments holding data are renamed with that suffix,
	// and RecoveryReport says which records are gone (Lost, SetAside).
	// For a replica that can fetch what it lost from another; a voter of
	// the metadata quorum must not forget what it acknowledged, so its
	// log leaves it off.
	SetAsideDamage bool
	// Disk carries the log's writes and fsyncs. Default OS.
	Disk Disk
}

func (o Options) withDefaults() (Options, error) {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 1 << 30
	}
	if o.IndexIntervalBytes == 0 {
		o.IndexIntervalBytes = 4096
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Disk = diskOrOS(o.Disk)
	switch {
	case o.SegmentBytes < BatchHeaderSize || o.SegmentBytes > math.MaxInt32:
		return o, fmt.Errorf("segment bytes %d: want %d to %d", o.SegmentBytes, BatchHeaderSize, math.MaxInt32)
	case o.IndexIntervalBytes < 0:
		return o, fmt.Errorf("index interval bytes %d is negative", o.IndexIntervalBytes)
	case o.FlushPolicy < FlushAlways || o.FlushPolicy > FlushNever:
		return o, fmt.Errorf("unknown flush policy %d", int(o.FlushPolicy))
	case o.FlushPolicy == FlushInterval && o.FlushInterval <= 0:
		return o, fmt.Errorf("flush interval %v must be positive", o.FlushInterval)
	}
	return o, nil
}

// Log is a partition's log: Kafka v2 record batches in segment files, with
// the leader-epoch cache kept in step. Offsets run from LogStartOffset to
// LogEndOffset (exclusive). A Log is safe for concurrent use; reads run in
// parallel with each other, appends and truncations one at a time.
type Log struct {
	dir  string
	opts Options

	// flushMu is held by Flush across its fsync, which runs without mu so
	// that appends and reads go on meanwhile (group commit); whatever
	// closes or removes segment files takes it first (flushMu before mu).
	flushMu sync.Mutex

	mu          sync.RWMutex
	segs        []*segment // by base offset; the last one is active
	start       int64
	flushed     int64
	lastSync    time.Time
	epochs      epochCache
	epochsDirty bool // epochs changed since leader-epoch-checkpoint was written
	recovery    RecoveryReport
	// Recovery bookkeeping: the log start was checkpointed on disk, and
	// the records shown lost, exact and at least.
	startCheckpointed   bool
	lostExact, lostTail int64
	err                 error // once set (closed, crashed, failed), every call returns it
	closed              bool  // files closed

	buf     []byte // encodes leader batches
	scratch []byte // encodes index entries
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// LogStartOffset is the first offset of the log; offsets below it are gone.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.start
}

// Size is the bytes of the log's batches over all its segments (Kafka's
// UnifiedLog.size).
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// LogEndOffset is the offset the next batch will take.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.leo()
}

// LastFlushedOffset is the end offset of the data the flush policy has made
// durable: a crash keeps the log up to it.
func (l *Log) LastFlushedOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.flushed
}

// LastEpoch is the leader epoch of the log's last batch, or -1 if the log
// has never held one.
func (l *Log) LastEpoch() int32 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.lastEpoch()
}

// EndOffsetForEpoch answers OffsetsForLeaderEpoch the way Kafka does: the
// largest epoch of the log at most epoch, and its end offset — the start of
// the next epoch, or the log end offset for the latest one. It returns
// (-1, -1) when epoch is below every epoch the log knows.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.endOffsetFor(epoch, l.leo())
}

// Epochs returns the leader-epoch cache: each epoch in the log with the
// offset it starts at.
func (l *Log) Epochs() []EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append([]EpochEntry(nil), l.epochs.entries...)
}

// Recovery says what Open found and repaired.
func (l *Log) Recovery() RecoveryReport {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.recovery
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

func (l *Log) leo() int64 {
	if len(l.segs) == 0 { // only in a log that failed
		return l.start
	}
	return l.active().next
}

// fail makes the log unusable after an error left its files in a state the
// Log can no longer describe; reopening recovers from the files.
func (l *Log) fail(err error) {
	if l.err == nil {
		l.err = fmt.Errorf("log %s failed, reopen it: %w", l.dir, err)
	}
}

// segmentFor returns the segment holding offset, which must be in the log.
func (l *Log) segmentFor(offset int64) *segment {
	lo, hi := 0, len(l.segs)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.segs[mid].base <= offset {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return l.segs[lo]
}
