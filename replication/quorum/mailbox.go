package quorum

import (
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// item is one thing for the loop to do. Exactly one group of fields is set.
type item struct {
	// An inbound request.
	req *wire.Request
	// The outcome of a request the node sent to peer: resp or err.
	peer int32
	id   uint64
	resp kmsg.Response
	err  error
	// An append by the node's owner, for its leadership of epoch.
	records [][]byte
	commit  *Commit
	epoch   int32
	// A call into the loop; err is set when the loop is gone and fn runs
	// in the caller's place instead.
	fn func(in *instance, now time.Time, err error)
}

// mailbox is the loop's queue: pushing never blocks, so the wire layer's
// goroutines and the node's owners can always hand over work, and the loop
// takes everything queued at once, which batches appends and flushes.
type mailbox = queue[item]

func newMailbox() *mailbox { return newQueue[item]() }

// queue is a list that any goroutine pushes to without waiting and one
// goroutine takes whole: the raft loop's mailbox, a listener's queue.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	spare  []T
	closed bool
	wake   chan struct{} // capacity one: "items are waiting"
}

func newQueue[T any]() *queue[T] { return &queue[T]{wake: make(chan struct{}, 1)} }

// push queues it and reports whether the taker will see it; after close it
// does not.
func (q *queue[T]) push(it T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	first := len(q.items) == 1
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// take returns everything queued. The slice is the taker's until its next
// take.
func (q *queue[T]) take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	clear(q.spare)
	q.items, q.spare = q.spare[:0], out
	return out
}

// close refuses further pushes and returns what was queued.
func (q *queue[T]) close() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	out := q.items
	q.items = nil
	return out
}
