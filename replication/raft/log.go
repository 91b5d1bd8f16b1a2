package raft

import (
	"errors"
	"fmt"
)

// SnapshotID names a snapshot by the offset that follows its last record and
// that record's leader epoch (Kafka's OffsetAndEpoch for snapshots).
type SnapshotID struct {
	EndOffset int64
	Epoch     int32
}

func (s SnapshotID) String() string { return fmt.Sprintf("%d-%d", s.EndOffset, s.Epoch) }

// ErrSnapshotNotFound is returned by Log.ReadSnapshot for an unknown snapshot.
var ErrSnapshotNotFound = errors.New("snapshot not found")

// Log is the replicated log the node writes (Kafka's ReplicatedLog): Kafka v2
// record batches, as produced by storage.AppendBatch, with their leader
// epochs, and the snapshots that replace its prefix. storage.Log implements
// it on disk, MemoryLog in memory.
//
// The node calls a Log only from the goroutine that drives it. Flush is called
// by the driver (see Node.NeedsFlush); a Log whose Flush runs on another
// goroutine must make that safe.
type Log interface {
	// LogStartOffset is the first offset the log holds; after AdvanceLogStart
	// or TruncateToSnapshot it equals the snapshot's end offset.
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
	// AppendAsLeader appends batches the leader built at the log end offset.
	AppendAsLeader(batches []byte) error
	// AppendAsFollower appends batches fetched from the leader; their base
	// offset must be the log end offset. It checks every batch's CRC.
	AppendAsFollower(batches []byte) error
	// Read returns whole batches from the one holding offset, up to maxBytes
	// but always at least one batch when offset is below the log end offset.
	// The bytes must not be modified; they stay valid after later calls.
	Read(offset int64, maxBytes int) ([]byte, error)
	// TruncateTo drops every batch at or past offset, which must be a batch
	// boundary at or above the log start offset.
	TruncateTo(offset int64) error
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
	// position, and the snapshot's total size.
	ReadSnapshot(id SnapshotID, position int64, maxBytes int) ([]byte, int64, error)
	// AdvanceLogStart drops the batches below the snapshot's end offset, which
	// must be within the log, and deletes the snapshots older than it.
	AdvanceLogStart(id SnapshotID) error
	// TruncateToSnapshot drops every batch and restarts the log at the
	// snapshot's end offset, with the snapshot's epoch as the last epoch; it
	// deletes the snapshots older than it. A follower does this after
	// fetching a snapshot past its log end.
	TruncateToSnapshot(id SnapshotID) error
}

// SnapshotWriter writes one snapshot's bytes: Kafka v2 batches framed by the
// SnapshotHeader and SnapshotFooter control records.
type SnapshotWriter interface {
	ID() SnapshotID
	// Size is the number of bytes appended so far.
	Size() int64
	Append(chunk []byte) error
	// Freeze makes the snapshot complete and durable.
	Freeze() error
	// Close abandons an unfrozen snapshot; after Freeze it only releases.
	Close() error
}

// ElectionState is what a node persists about elections: its epoch, the
// leader it knows in that epoch and the candidate it voted for (-1 for none).
// Kafka keeps it in the quorum-state file.
type ElectionState struct {
	LeaderEpoch int32
	LeaderID    int32
	VotedID     int32
}

// QuorumStateStore persists the ElectionState. Write must be durable when it
// returns: the node writes before a transition takes effect.
type QuorumStateStore interface {
	// Read returns the stored state, and false when none was ever written.
	Read() (ElectionState, bool, error)
	Write(ElectionState) error
}
