package raft

import (
	"errors"

	"github.com/kraftlab/kraftlab/storage"
)

// SnapshotID names a snapshot by the offset that follows its last record and
// that record's leader epoch (Kafka's OffsetAndEpoch for snapshots).
type SnapshotID = storage.SnapshotID

// ErrSnapshotNotFound is returned by Log.ReadSnapshot for an unknown snapshot.
var ErrSnapshotNotFound = errors.New("snapshot not found")

// Log is the replicated log the node writes (Kafka's ReplicatedLog): Kafka v2
// record batches with their leader epochs, and the snapshots that replace
// its prefix. Its methods are those of storage.Log (and of storage.Snapshots
// for the snapshot half); MemoryLog implements it in memory.
//
// The node calls a Log only from the goroutine that drives it. Flush is called
// by the driver (see Node.NeedsFlush); a Log whose Flush runs on another
// goroutine must make that safe.
type Log interface {
	// LogStartOffset is the first offset the log holds.
	LogStartOffset() int64
	// LogEndOffset is the offset the next appended record gets.
	LogEndOffset() int64
	// LastEpoch is the leader epoch of the last batch, or -1 when the log
	// holds no batch.
	LastEpoch() int32
	// EndOffsetForEpoch returns the largest epoch in the log at most epoch and
	// the offset where it ends (the start of the next epoch, or the log end
	// offset for the latest), or (-1, -1) when epoch is below every epoch in
	// the log.
	EndOffsetForEpoch(epoch int32) (int32, int64)
	// AppendAsLeader encodes records as one batch of leader epoch epoch at
	// the log end offset, and returns its first and last offsets.
	AppendAsLeader(records []storage.Record, epoch int32, timestampMs int64) (base, last int64, err error)
	// AppendControl is AppendAsLeader for a control batch.
	AppendControl(records []storage.Record, epoch int32, timestampMs int64) (base, last int64, err error)
	// AppendAsFollower appends batches fetched from the leader: whole, with
	// good CRCs, starting at the log end offset, epochs never decreasing.
	AppendAsFollower(batches []byte) error
	// Read returns whole batches from the one holding offset, up to maxBytes
	// but always at least one batch when offset is below the log end offset.
	// The bytes must not be modified; they stay valid after later calls.
	Read(offset int64, maxBytes int) ([]byte, error)
	// TruncateTo drops every batch at or past offset, a batch boundary.
	TruncateTo(offset int64) error
	// AdvanceLogStart drops the log below offset (a snapshot's end).
	AdvanceLogStart(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset, as
	// a follower does before it loads a snapshot that ends past its log.
	TruncateFullyAndStartAt(offset int64) error
	// Flush makes everything appended so far durable.
	Flush() error
	// LastFlushedOffset is the end offset of the durable data: a crash keeps
	// the log below it and loses the rest.
	LastFlushedOffset() int64

	// LatestSnapshot returns the id of the newest complete snapshot.
	LatestSnapshot() (SnapshotID, bool)
	// CreateSnapshot starts writing a snapshot; it appears once frozen.
	CreateSnapshot(id SnapshotID) (SnapshotWriter, error)
	// ReadSnapshot returns up to maxBytes of a complete snapshot from
	// position, and the snapshot's total size; ErrSnapshotNotFound (wrapped)
	// when there is no such snapshot.
	ReadSnapshot(id SnapshotID, position int64, maxBytes int) ([]byte, int64, error)
	// DeleteSnapshotsBefore deletes the snapshots older than id.
	DeleteSnapshotsBefore(id SnapshotID) error
}

// SnapshotWriter writes one snapshot's bytes (storage.SnapshotWriter): Kafka
// v2 batches framed by the SnapshotHeader and SnapshotFooter control records.
type SnapshotWriter interface {
	ID() SnapshotID
	// Size is the number of bytes appended so far.
	Size() int64
	Append(chunk []byte) error
	// Freeze makes the snapshot complete and durable.
	Freeze() error
	// Abort discards an unfrozen snapshot; after Freeze it does nothing.
	Abort() error
}

// ElectionState is what a node persists about elections (Kafka's
// quorum-state file): its epoch, the leader it knows in that epoch and the
// candidate it voted for, -1 for none, and the voter set.
type ElectionState = storage.ElectionState

// QuorumStateStore persists the ElectionState; storage.QuorumStateFile
// implements it. Write must be durable when it returns: the node writes
// before a transition takes effect.
type QuorumStateStore interface {
	// Read returns the stored state; a store never written returns epoch 0
	// with no leader and no vote.
	Read() (ElectionState, error)
	Write(ElectionState) error
}
