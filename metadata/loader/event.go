package loader

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	// EventSnapshotLoaded: a snapshot replaced the image; Snapshot and
	// Records say which and how many records it had.
	EventSnapshotLoaded EventKind = iota + 1
	// EventReplayed: the first log batches handed after the start or a
	// snapshot load were replayed; Records counts their metadata records,
	// Offset is the last offset the image then holds, Snapshot the
	// snapshot they were replayed on (zero if none).
	EventReplayed
	// EventLoadError: a record or snapshot could not be decoded or
	// replayed and the loader stopped there; Offset, RecordType and Err
	// say which and why.
	EventLoadError
	// EventApplyError: a publisher failed on an image; Err says how.
	EventApplyError
)

var eventKindNames = [...]string{
	EventSnapshotLoaded: "snapshot loaded",
	EventReplayed:       "replayed",
	EventLoadError:      "load error",
	EventApplyError:     "apply error",
}

// String names the kind as the loader's logs do.
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is something the loader did, reported as data.
type Event struct {
	Time time.Time
	Node int32
	Kind EventKind
	// Snapshot is the snapshot loaded (EventSnapshotLoaded) or replayed on
	// (EventReplayed; HasSnapshot false if none).
	Snapshot    raft.SnapshotID
	HasSnapshot bool
	// Records counts the snapshot's records or those replayed.
	Records int
	// SnapshotRecords counts the records of the snapshot the replay
	// followed (EventReplayed with HasSnapshot).
	SnapshotRecords int
	// Offset is the record's offset (EventLoadError) or the image's last
	// offset (EventReplayed).
	Offset int64
	// RecordType is the type of the record that failed, e.g.
	// "PartitionChangeRecord" ("snapshot" for a snapshot that failed as a
	// whole).
	RecordType string
	Err        error
}

// String describes the event as data, for logs and test failures.
func (e Event) String() string {
	head := fmt.Sprintf("%s node %d loader", e.Time.Format("15:04:05.000"), e.Node)
	switch e.Kind {
	case EventSnapshotLoaded:
		return fmt.Sprintf("%s: loaded snapshot %v (%d records)", head, e.Snapshot, e.Records)
	case EventReplayed:
		if e.HasSnapshot {
			return fmt.Sprintf("%s: loaded snapshot %v (%d records), then replayed %d records up to offset %d", head, e.Snapshot, e.SnapshotRecords, e.Records, e.Offset)
		}
		return fmt.Sprintf("%s: replayed %d records up to offset %d", head, e.Records, e.Offset)
	case EventLoadError:
		return fmt.Sprintf("%s: stopped at %s at offset %d: %v", head, e.RecordType, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: %v: %v", head, e.Kind, e.Err)
}
