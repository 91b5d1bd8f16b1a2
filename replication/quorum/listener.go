package quorum

import (
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Listener is the state machine the raft client feeds, in the shape of
// Kafka's RaftClient.Listener: the metadata layer (metadata/loader) plugs
// in here on every node, and the state is the listener's alone — the node
// keeps only the offset it has handed over. The client calls it from its
// loop goroutine, in log order; it must not block. It may call the Node's
// Append, which only queues.
//
// Ordering: the listener is handed a committed batch before the Commit of
// any record in it completes (Commit.Done), so an appender that waits on
// its Commit finds its records in the listener's state — unless the
// listener runs on a NewListenerQueue, which applies them a moment later
// on its own goroutine.
type Listener interface {
	// HandleCommit is handed committed batches, control batches included,
	// in offset order. The batches alias log memory that is only valid
	// during the call.
	HandleCommit(batches []storage.Batch)
	// HandleLoadSnapshot replaces the listener's state with a snapshot's:
	// the next offset to apply was below the log start.
	HandleLoadSnapshot(s raft.Snapshot)
	// HandleLeaderChange reports a new leader or epoch. The node hears of
	// its own leadership only once it has applied everything before its
	// epoch, and may append for that epoch from then on.
	HandleLeaderChange(l raft.LeaderAndEpoch)
	// SnapshotRecords returns the listener's state as the records of a
	// snapshot and the offset of the log it holds: the state after every
	// record below endOffset, a batch boundary it was handed. The node
	// calls it on its loop goroutine, where no batch can arrive meanwhile,
	// and writes the records as they are; they need not outlive the call.
	SnapshotRecords() (endOffset int64, records [][]byte, err error)
	// BeginShutdown says the incarnation is ending: a graceful stop has
	// begun, or the node was killed or failed. It is called once.
	BeginShutdown()
}
