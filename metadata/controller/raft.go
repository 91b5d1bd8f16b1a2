package controller

import "github.com/kraftlab/kraftlab/replication/quorum"

// Raft is what the controller needs of its node's raft client (quorum.Node
// satisfies it).
type Raft interface {
	// Append hands records for the leadership of epoch; the Commit
	// completes when the high watermark passes them (see
	// quorum.Node.Append).
	Append(epoch int32, records [][]byte) *quorum.Commit
}

// PendingAppend is what the controller reads of a quorum.Commit, so that
// tests and simulators can commit, delay or fail appends without a quorum.
type PendingAppend interface {
	// Done is closed when the append committed or failed.
	Done() <-chan struct{}
	// Err is nil once the records committed; valid after Done.
	Err() error
	// Offsets are those of the first and last record; valid after Done.
	Offsets() (first, last int64)
}

// commit is the controller's own name for a PendingAppend.
type commit = PendingAppend

// AppendFunc appends records for the leadership of an epoch.
type AppendFunc func(epoch int32, records [][]byte) PendingAppend

type appendFunc = AppendFunc

func raftAppender(r Raft) appendFunc {
	return func(epoch int32, records [][]byte) commit { return r.Append(epoch, records) }
}
