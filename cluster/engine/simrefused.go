package engine

import (
	"context"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// What the simulated cluster does not model refuses with a clear error
// rather than pretend.

// SetDiskDelay implements cluster.Engine.
func (e *simEngine) SetDiskDelay(int32, time.Duration) error { return notSimulated("a slow disk") }

// Wipe implements cluster.Engine.
func (e *simEngine) Wipe(context.Context, int32) (cluster.WipeReport, error) {
	return cluster.WipeReport{}, notSimulated("a lost disk")
}

// AddController implements cluster.Engine.
func (e *simEngine) AddController(context.Context, int32, bool) (int32, string, error) {
	return 0, "", notSimulated("adding a controller")
}

// RemoveController implements cluster.Engine.
func (e *simEngine) RemoveController(context.Context, int32) error {
	return notSimulated("removing a controller")
}

// UpgradeKRaftVersion implements cluster.Engine.
func (e *simEngine) UpgradeKRaftVersion(context.Context) error {
	return notSimulated("upgrading kraft.version")
}

// SetLoad implements cluster.Engine.
func (e *simEngine) SetLoad(context.Context, int, int) error {
	return notSimulated("the metadata log's background load")
}

// SetTopicLoad implements cluster.Engine: the simulated producer writes
// its own topic on its own.
func (e *simEngine) SetTopicLoad(context.Context, string, int, int) error {
	return notSimulated("a topic's background load")
}

// DeleteTopic implements cluster.Engine.
func (e *simEngine) DeleteTopic(context.Context, string) error {
	return notSimulated("deleting a topic")
}

// ElectLeaders implements cluster.Engine.
func (e *simEngine) ElectLeaders(context.Context, bool, []view.TopicPartition) ([]cluster.Election, error) {
	return nil, notSimulated("electing partition leaders")
}

// AlterReassignments implements cluster.Engine.
func (e *simEngine) AlterReassignments(context.Context, []cluster.Move, int64) ([]cluster.MoveResult, error) {
	return nil, notSimulated("reassigning partitions")
}

// ListReassignments implements cluster.Engine.
func (e *simEngine) ListReassignments(context.Context, []view.TopicPartition) ([]cluster.Reassignment, error) {
	return nil, notSimulated("reassigning partitions")
}

// ClearReplicationThrottles implements cluster.Engine.
func (e *simEngine) ClearReplicationThrottles(context.Context, []string) error {
	return notSimulated("replication throttles")
}

// ReadMetadataLog implements cluster.Engine.
func (e *simEngine) ReadMetadataLog(context.Context, int32, int64, int) (cluster.MetadataLogRead, error) {
	return cluster.MetadataLogRead{}, notSimulated("reading the metadata log's batches")
}

// StepMessages implements cluster.Engine.
func (e *simEngine) StepMessages(cluster.MessageFilter) ([]view.Message, error) {
	return nil, notSimulated("stepping held messages")
}

// DropMessage implements cluster.Engine.
func (e *simEngine) DropMessage(cluster.MessageFilter) (view.Message, error) {
	return view.Message{}, notSimulated("dropping held messages")
}
