package quorum

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	// EventRaft: the quorum state machine changed; Raft says how.
	EventRaft EventKind = iota + 1
	// EventRecovery: the node opened its folder at start; Recovery says
	// what recovery found and repaired, Status how the node starts.
	EventRecovery
	// EventFailed: the node stopped on an error it cannot go on from (a
	// disk failure); Err says which.
	EventFailed
	// EventSnapshotFailed: the node could not write a snapshot (a full
	// disk) and runs on from its log; Err says why.
	EventSnapshotFailed
)

var eventKindNames = [...]string{EventRaft: "raft", EventRecovery: "recovery", EventFailed: "failed", EventSnapshotFailed: "snapshot-failed"}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is something that happened to a node, reported as data; the
// playground puts it into words.
type Event struct {
	Time time.Time
	Node int32
	Kind EventKind
	// Raft is the state machine's change (EventRaft).
	Raft raft.Event
	// Status is the node's raft state when the event was reported,
	// without the replica table.
	Status raft.Status
	// AppliedOffset is the node's Status.AppliedOffset when the event was
	// reported.
	AppliedOffset int64
	// Recovery is what opening the folder found (EventRecovery).
	Recovery storage.RecoveryReport
	// Err is why the node stopped (EventFailed) or its snapshot failed
	// (EventSnapshotFailed); storage.FaultOf(Err) names the disk trouble.
	Err error
}

// String describes the event as data, for logs and test failures.
func (e Event) String() string {
	head := fmt.Sprintf("%s node %d epoch %d %v", e.Time.Format("15:04:05.000"), e.Node, e.Status.Epoch, e.Status.Role)
	switch e.Kind {
	case EventRaft:
		return fmt.Sprintf("%s: %v %+v", head, e.Raft.Kind, e.Raft)
	case EventRecovery:
		return fmt.Sprintf("%s: recovery: %v, log [%d, %d)", head, e.Recovery, e.Status.LogStartOffset, e.Status.LogEndOffset)
	}
	return fmt.Sprintf("%s: %v: %v", head, e.Kind, e.Err)
}
