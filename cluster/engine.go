package cluster

import (
	"context"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/image"
)

// Engine is a running cluster: the controllers and brokers, their
// listeners, the links between them and their faults (cluster.go's engine
// in the product, a model of it in the tests of the packages above).
// Everything user-facing (the Playground, the control API, the CLI, the
// TUI and scenarios) drives an Engine only through a Playground, which resolves node references, checks that an
// action makes sense, records the baseline and publishes action events.
//
// An Engine publishes its own state changes (elections, role changes,
// BeginQuorumEpoch, EndQuorumEpoch, truncations, snapshots) to the Events
// it was started with. Its methods are safe for concurrent use; the
// Playground calls at most one action at a time, but view.View at any moment.
type Engine interface {
	// View returns one consistent snapshot: ClusterID, Timestamp, every
	// node (a view.Node, with its Replicas table while it leads, and its RPC
	// counters), every directed link between nodes (a view.Link, with its
	// counters), the background load (Load), and once brokers exist
	// Brokers, Partitions and Fetchers. Nodes that are not running report
	// State killed or stopped, no Role, and the offsets they had on disk.
	// View never waits on a stuck node.
	View() view.View
	// Kill stops node id at once, as kill -9 would: its listener and
	// connections close, its goroutines end, nothing more is written. Its
	// data folder stays, for Start.
	Kill(id int32) error
	// Start restarts a killed or stopped node from its data folder (the
	// quorum-state file, the log, the snapshots), on the same listener
	// address, and returns once it listens.
	Start(ctx context.Context, id int32) error
	// Stop shuts node id down gracefully: a leader first resigns with
	// EndQuorumEpoch, as Kafka's controlled shutdown does, then the node
	// flushes and closes.
	Stop(ctx context.Context, id int32) error
	// Resign makes node id, the leader, resign without stopping: it sends
	// EndQuorumEpoch with its followers as preferred successors and moves
	// to Resigned.
	Resign(ctx context.Context, id int32) error
	// SetLinks replaces the faults of the given directed links, all at
	// once. A fault on From → To applies to every message From sends To.
	SetLinks(changes []LinkChange) error
	// SetDiskDelay makes every write and fsync of node id's files (its
	// metadata log, snapshots, quorum-state file and, on a broker, its
	// partition logs) take delay longer, waited on the cluster clock; 0
	// makes its disk normal again. The delay is the node's hardware: it
	// stays across kills and restarts, and a kill does not wait for it.
	// View reports it as the node's DiskDelayMs.
	SetDiskDelay(id int32, delay time.Duration) error
	// Snapshot makes node id snapshot its committed metadata at its high
	// watermark, then advances its log start offset to the snapshot's end
	// offset (deleting the log before it), as Kafka's metadata log cleaner
	// may once a snapshot exists. It returns the snapshot's ID.
	Snapshot(ctx context.Context, id int32) (view.SnapshotID, error)
	// Wipe makes node id lose its disk: it is killed if it runs, its data
	// folder is emptied and formatted again for the same cluster and node,
	// as after a replaced disk, and it starts empty and catches up from the
	// leader. It returns what the node had on disk before.
	Wipe(ctx context.Context, id int32) (WipeReport, error)
	// AddController grows a dynamic quorum (kraft.version 1) by one
	// controller, as an operator does with Kafka. With id 0 it starts a
	// new controller, the next id, as an observer, with a
	// controller.properties for Kafka's kafka-metadata-quorum
	// add-controller in its folder; with the id of a running controller
	// that is an observer (one removed, or one whose wiped folder has a
	// new directory id) it takes that one. Then, if vote, it waits for the
	// controller to catch up and sends the leader AddRaftVoter with the
	// controller's current directory id, as that tool does, returning once
	// the new voter set committed. It returns the controller's id and the
	// path of its controller.properties, also when it fails after starting
	// it.
	AddController(ctx context.Context, id int32, vote bool) (int32, string, error)
	// RemoveController sends the leader RemoveRaftVoter for controller id
	// with the directory id its voter set names (kafka-metadata-quorum
	// remove-controller --controller-directory-id) and returns once the
	// new voter set committed; the controller keeps running, as an
	// observer.
	RemoveController(ctx context.Context, id int32) error
	// UpgradeKRaftVersion sends the leader UpdateFeatures for
	// kraft.version 1 (kafka-features upgrade --feature kraft.version=1),
	// retrying while a voter has not described itself to the leader yet,
	// and returns once the upgrade committed: a static quorum is then a
	// dynamic one. A dynamic quorum has nothing to upgrade.
	UpgradeKRaftVersion(ctx context.Context) error
	// SetLoad starts, changes or (recordsPerSec 0) stops the background
	// load: records of recordBytes bytes appended to the metadata log on
	// the current leader, recordsPerSec of them a second, as a producer
	// would. It follows the leader across elections, pauses while there
	// is none, and reports what it did in view.View's Load. It returns at once.
	SetLoad(ctx context.Context, recordsPerSec, recordBytes int) error
	// SetTopicLoad starts, changes or (recordsPerSec 0) stops the
	// background load of a topic: records of recordBytes bytes produced
	// to it through the brokers by a real Kafka client, recordsPerSec of
	// them a second. It reports what it did in view.View's TopicLoad and
	// returns at once.
	SetTopicLoad(ctx context.Context, topic string, recordsPerSec, recordBytes int) error
	// CreateTopic asks the active controller to create a topic, through a
	// running broker as a Kafka client would (CreateTopics, forwarded),
	// and returns once the controller committed it. A refusal wraps
	// ErrRefused with Kafka's error.
	CreateTopic(ctx context.Context, spec TopicSpec) error
	// DeleteTopic asks the active controller to delete the topic named
	// name, the same way.
	DeleteTopic(ctx context.Context, name string) error
	// ElectLeaders asks the active controller for preferred (or, with
	// unclean, unclean) leader elections of the partitions named, every
	// partition when none, through a running broker as
	// kafka-leader-election does, and returns each partition's answer
	// (only those that needed one when none were named).
	ElectLeaders(ctx context.Context, unclean bool, partitions []view.TopicPartition) ([]Election, error)
	// AlterReassignments moves partitions to other replicas, or cancels
	// their reassignments (a Move without replicas), through a running
	// broker as kafka-reassign-partitions --execute and --cancel do
	// (AlterPartitionReassignments), and returns each partition's answer.
	// A positive throttle is first set as that tool sets it: the rate on
	// every broker the moves involve, and the moved partitions' replicas
	// as the topics' throttled replicas.
	AlterReassignments(ctx context.Context, moves []Move, throttle int64) ([]MoveResult, error)
	// ListReassignments returns the reassignments in progress of the
	// partitions named, every one when none (ListPartitionReassignments).
	ListReassignments(ctx context.Context, partitions []view.TopicPartition) ([]Reassignment, error)
	// ClearReplicationThrottles removes the replication throttles as
	// kafka-reassign-partitions --verify does once a reassignment is
	// done: the rates of every broker and the throttled replicas of the
	// topics named.
	ClearReplicationThrottles(ctx context.Context, topics []string) error
	// MetadataImage returns the metadata image node id's loader last
	// published: the committed log as far as that node has applied it.
	MetadataImage(id int32) (*image.MetadataImage, error)
	// ReadMetadataLog reads whole batches of node id's metadata log, up to
	// about maxBytes, from the one holding offset (from the log start when
	// offset is below it), and where its log and high watermark stand.
	ReadMetadataLog(ctx context.Context, id int32, offset int64, maxBytes int) (MetadataLogRead, error)
	// Clock is the playground's cluster clock, which every timer of the
	// engine reads; nil for an engine without one.
	Clock() *clock.Clock
	// HeldMessages returns the messages the links hold, in the order
	// they came.
	HeldMessages() []view.Message
	// StepMessages delivers the oldest held message f matches, and first
	// those held before it on its connection (which delivers in order);
	// with f.All, every held message. It returns them in order.
	StepMessages(f MessageFilter) ([]view.Message, error)
	// DropMessage loses the oldest held message f matches, silently, as
	// a lossy link does.
	DropMessage(f MessageFilter) (view.Message, error)
	// Trace returns the last messages that crossed the links, at most
	// last (every one the trace keeps when last <= 0), oldest first, with
	// how many were recorded and how many the trace keeps; no Nodes.
	Trace(last int) view.Trace
	// Close stops every node and every goroutine, and removes the data
	// folder unless Config.DataDir named one.
	Close() error
}

// StartFunc starts an Engine for cfg. Its events go to events. ctx bounds
// the start only, not the engine's life.
type StartFunc func(ctx context.Context, cfg Config, events *Events) (Engine, error)

// WipeReport is what a wiped node had on disk before its disk was lost.
type WipeReport struct {
	// LogStartOffset and LogEndOffset bound the log it lost.
	LogStartOffset, LogEndOffset int64
	// Epoch is the epoch it last knew, and VotedID its vote in it.
	Epoch   int32
	VotedID int32
	// Dynamic marks a controller of a dynamic quorum (kraft.version 1):
	// its folder was formatted with a new directory id, NewDirectoryID,
	// where the voter set names OldDirectoryID (empty if it names none:
	// the controller was no voter), both as Kafka prints them.
	Dynamic                        bool
	OldDirectoryID, NewDirectoryID string
}

// LinkChange sets the fault of the directed link From → To.
type LinkChange struct {
	From, To int32
	Fault    view.LinkFault
}
