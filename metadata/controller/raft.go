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

// commit is what the controller reads of a quorum.Commit, so that tests can
// commit, delay or fail appends without a quorum.
type commit interface {
	Done() <-chan struct{}
	Err() error
	Offsets() (first, last int64)
}

// appendFunc appends records for an epoch.
type appendFunc func(epoch int32, records [][]byte) commit

func raftAppender(r Raft) appendFunc {
	return func(epoch int32, records [][]byte) commit { return r.Append(epoch, records) }
}
