package quorum

import (
	"context"
	"errors"
)

// Errors of Append and the node's actions.
var (
	// ErrNotLeader: the node does not lead, or has not yet applied what
	// came before its epoch; or it lost the leadership before the records
	// committed. A record whose Commit failed so may still be committed by
	// the next leader (it may have reached a majority): its fate is
	// unknown, as with Kafka's NOT_LEADER_OR_FOLLOWER.
	ErrNotLeader = errors.New("not the leader")
	// ErrNotRunning: the node is stopped, killed or failed.
	ErrNotRunning = errors.New("node not running")
)

// Commit is the outcome of an Append: it completes when the high watermark
// passes the last appended record, or fails.
type Commit struct {
	done chan struct{}
	// first and last are the offsets the records took, -1 until assigned.
	first, last int64
	err         error
	n           int
}

func newCommit(n int) *Commit {
	return &Commit{done: make(chan struct{}), first: -1, last: -1, n: n}
}

func failedCommit(err error) *Commit {
	c := newCommit(0)
	c.finish(err)
	return c
}

func (c *Commit) finish(err error) {
	c.err = err
	close(c.done)
}

// Done is closed when the commit completes or fails.
func (c *Commit) Done() <-chan struct{} { return c.done }

// Err is nil once the records are committed; it is only valid after Done.
func (c *Commit) Err() error { return c.err }

// Offsets returns the offsets of the first and last record appended; only
// valid after Done, and -1 if the records never got offsets.
func (c *Commit) Offsets() (first, last int64) { return c.first, c.last }

// Wait waits for the commit or ctx, and returns the last record's offset.
func (c *Commit) Wait(ctx context.Context) (int64, error) {
	select {
	case <-c.done:
		return c.last, c.err
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}
