package raft

import "github.com/kraftlab/kraftlab/storage"

// LeaderAndEpoch names the leader of an epoch; LeaderID is -1 while unknown.
type LeaderAndEpoch struct {
	LeaderID int32
	Epoch    int32
}

// Snapshot is a snapshot handed to Listener.HandleLoadSnapshot: the state at
// ID.EndOffset, as the records its writer gave to Node.CreateSnapshot.
type Snapshot struct {
	ID SnapshotID
	// LastContainedLogTimestamp is the append time, in Unix milliseconds, of
	// the last record the snapshot covers (SnapshotHeaderRecord).
	LastContainedLogTimestamp int64
	// Records are the snapshot's data records; keys and values alias memory
	// that is only valid during the call.
	Records []storage.Record
}

// Listener is the state machine fed by the quorum (Kafka's
// RaftClient.Listener). The node calls it synchronously, from Step, Tick,
// Flushed and the other entry points; it must not call back into the node.
type Listener interface {
	// HandleCommit is handed committed batches, control batches included, in
	// offset order and never past the high watermark. The batches alias log
	// memory that is only valid during the call.
	HandleCommit(batches []storage.Batch)
	// HandleLoadSnapshot replaces the state with a snapshot. It happens when
	// the next offset to apply is below the log start offset, never on a
	// leader that has announced itself with HandleLeaderChange.
	HandleLoadSnapshot(s Snapshot)
	// HandleLeaderChange reports a new leader or epoch. A node hears of its
	// own leadership only once it has applied everything before its epoch's
	// first offset, so it may then append knowing the full committed state.
	HandleLeaderChange(l LeaderAndEpoch)
}
