package quorum

import (
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// State is what the node's owner did to it, as opposed to its raft role.
type State string

// Node states.
const (
	StateNew      State = "new"      // never started
	StateRunning  State = "running"  // its loop runs
	StateStopping State = "stopping" // a graceful Stop is under way
	StateStopped  State = "stopped"  // stopped gracefully
	StateKilled   State = "killed"   // killed: crashed on purpose
	StateFailed   State = "failed"   // stopped on an error; Err says which
)

// Status is a snapshot of a node for views: its raft state, how far it
// fed its listener and what happened to it. A node that is not running reports the role and
// epoch it had when it stopped, with the log end offset it kept on disk.
type Status struct {
	raft.Status
	State State
	// Err is why the node failed or could not start, led by the kind of
	// disk trouble if it was one ("disk full: ..."); empty otherwise. A
	// leader that failed says so while it hands its leadership over.
	Err string
	// Fault is the kind of disk trouble Err reports, storage.NoFault if
	// it is none.
	Fault storage.Fault
	// SnapshotError is why the node's latest snapshot could not be
	// written ("disk full: ..."): the node runs on from its log and tries
	// again when the snapshot policy next says so. Empty once a snapshot
	// is written.
	SnapshotError string
	// Writable: the node leads and has applied everything before its
	// epoch, so Append is accepted.
	Writable bool
	// AppliedOffset is the offset of the next record the node hands its
	// Listener: the listener has been handed the log below it.
	AppliedOffset int64
	// Truncations counts the times the node cut its log back because the
	// leader's Fetch response said it diverged, since the Node was made.
	Truncations int64
	// SnapshotsLoaded counts the snapshots the node fetched from a leader
	// and loaded; SnapshotsTaken those it wrote of its own state.
	SnapshotsLoaded int64
	SnapshotsTaken  int64
	// Unsafe counts the news the node refused because it would break
	// Raft's safety (raft.EventUnsafe), since the Node was made; LastUnsafe
	// is the latest such refusal, nil if none.
	Unsafe     int64
	LastUnsafe *raft.Event
	// Recovery is what the last start found on disk.
	Recovery storage.RecoveryReport
	// Starts counts the node's starts.
	Starts int
}

// Running reports whether the node's loop runs.
func (s *Status) Running() bool { return s.State == StateRunning || s.State == StateStopping }
