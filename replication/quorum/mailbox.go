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
type mailbox struct {
	mu     sync.Mutex
	items  []item
	spare  []item
	closed bool
	wake   chan struct{} // capacity one: "items are waiting"
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

// push queues it and reports whether the loop will see it; after close it
// does not.
func (b *mailbox) push(it item) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	b.items = append(b.items, it)
	first := len(b.items) == 1
	b.mu.Unlock()
	if first {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// take returns everything queued. The slice is the loop's until its next
// take.
func (b *mailbox) take() []item {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.items
	clear(b.spare)
	b.items, b.spare = b.spare[:0], out
	return out
}

// close refuses further pushes and returns what was queued.
func (b *mailbox) close() []item {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	out := b.items
	b.items = nil
	return out
}
