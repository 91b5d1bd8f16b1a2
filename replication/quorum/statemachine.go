package quorum

import (
	"errors"
	"fmt"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// stateMachine is the node's raft.Listener: it hands committed batches to
// the owner's Listener, keeps the offsets the node's own policies need
// (the snapshot policy, completing Commits) and tells the loop what
// changed.
type stateMachine struct {
	id int32
	// next is the offset of the next record to hand to the listener.
	next int64
	// bytesSinceSnapshot counts committed batch bytes since the last
	// snapshot taken or loaded.
	bytesSinceSnapshot int64
	leader             raft.LeaderAndEpoch
	// writable: the node was told it leads, having applied everything
	// before its epoch; only then may its owner append.
	writable bool
	err      error
	// user is the owner's Listener; nil once it heard BeginShutdown.
	user Listener

	onCommit func(next int64)
}

var _ raft.Listener = (*stateMachine)(nil)

var errCommitGap = errors.New("committed batch does not follow the applied ones")

// HandleCommit implements raft.Listener. The listener gets the batches
// before onCommit completes the Commits they hold: Listener's ordering
// guarantee.
func (sm *stateMachine) HandleCommit(batches []storage.Batch) {
	for i := range batches {
		b := &batches[i]
		if b.FirstOffset != sm.next && sm.err == nil {
			sm.err = fmt.Errorf("%w: batch at %d, next offset %d", errCommitGap, b.FirstOffset, sm.next)
		}
		sm.bytesSinceSnapshot += int64(b.Size())
		sm.next = b.NextOffset()
	}
	if sm.user != nil {
		sm.user.HandleCommit(batches)
	}
	if sm.onCommit != nil {
		sm.onCommit(sm.next)
	}
}

// HandleLoadSnapshot implements raft.Listener.
func (sm *stateMachine) HandleLoadSnapshot(s raft.Snapshot) {
	sm.next = s.ID.EndOffset
	sm.bytesSinceSnapshot = 0
	if sm.user != nil {
		sm.user.HandleLoadSnapshot(s)
	}
}

// HandleLeaderChange implements raft.Listener.
func (sm *stateMachine) HandleLeaderChange(l raft.LeaderAndEpoch) {
	sm.leader = l
	sm.writable = l.LeaderID == sm.id
	if sm.user != nil {
		sm.user.HandleLeaderChange(l)
	}
}

// snapshotRecords asks the listener for its state.
func (sm *stateMachine) snapshotRecords() (int64, [][]byte, error) {
	if sm.user == nil {
		return 0, nil, fmt.Errorf("snapshot of node %d: its listener is shut down", sm.id)
	}
	end, recs, err := sm.user.SnapshotRecords()
	if err != nil {
		return 0, nil, fmt.Errorf("snapshot of node %d's listener: %w", sm.id, err)
	}
	return end, recs, nil
}

// beginShutdown tells the owner's Listener, once.
func (sm *stateMachine) beginShutdown() {
	if sm.user != nil {
		sm.user.BeginShutdown()
		sm.user = nil
	}
}
