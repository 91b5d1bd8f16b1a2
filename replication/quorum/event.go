package quorum

import (
	"fmt"
	"time"
)

// EventKind says what happened to a node. The names are the playground's
// event kinds.
type EventKind string

// Event kinds.
const (
	// EventElection: the node won an election and leads its epoch.
	EventElection EventKind = "election"
	// EventRoleChange: the node moved between quorum roles.
	EventRoleChange EventKind = "role-change"
	// EventBeginQuorumEpoch: the node, a voter, accepted a new leader's
	// BeginQuorumEpoch.
	EventBeginQuorumEpoch EventKind = "begin-quorum-epoch"
	// EventEndQuorumEpoch: the node, resigning, sent EndQuorumEpoch; or, a
	// voter, it received one.
	EventEndQuorumEpoch EventKind = "end-quorum-epoch"
	// EventTruncation: the node cut its log back to where it agrees with
	// the leader (a Fetch response carried a DivergingEpoch).
	EventTruncation EventKind = "truncation"
	// EventSnapshotTaken: the node wrote a snapshot of its state.
	EventSnapshotTaken EventKind = "snapshot-taken"
	// EventSnapshotLoaded: the node loaded a snapshot into its state, one
	// fetched from the leader or, at start, its own latest.
	EventSnapshotLoaded EventKind = "snapshot-loaded"
	// EventHighWatermark: the leader committed the first record of its
	// epoch.
	EventHighWatermark EventKind = "high-watermark"
	// EventRecovery: the node opened its folder; the message says what
	// recovery found and repaired.
	EventRecovery EventKind = "recovery"
	// EventFailed: the node stopped on an error it cannot go on from (a
	// disk failure, a safety check of the quorum).
	EventFailed EventKind = "failed"
)

// Event is something that happened to a node.
type Event struct {
	Time  time.Time
	Node  int32
	Kind  EventKind
	Epoch int32
	// Message says what happened, in a sentence.
	Message string
}

func (e Event) String() string {
	return fmt.Sprintf("%s node %d %s (epoch %d): %s", e.Time.Format("15:04:05.000"), e.Node, e.Kind, e.Epoch, e.Message)
}
