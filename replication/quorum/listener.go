package quorum

import (
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Listener is a state machine the raft client feeds, in the shape of
// Kafka's RaftClient.Listener: the metadata layer plugs in here on every
// node. The client calls it from its loop goroutine, in log order; it must
// not block. It may call the Node's Append, which only queues.
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
	// BeginShutdown says the incarnation is ending: a graceful stop has
	// begun, or the node was killed or failed. It is called once.
	BeginShutdown()
}
