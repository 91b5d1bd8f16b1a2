package partition

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"
	"time"
)

// DelayedOperation is a request that waits in a Purgatory until it can
// complete or its deadline passes (Kafka's DelayedOperation).
type DelayedOperation interface {
	// TryComplete reports whether the operation can complete now. The
	// purgatory never runs it twice at once for one operation, and never
	// again once it returned true.
	TryComplete() bool
	// OnComplete runs exactly once: after TryComplete returned true
	// (expired false) or at the deadline (expired true). It should answer
	// the request and not block.
	OnComplete(expired bool)
}

// Purgatory holds delayed operations by key (Kafka's
// DelayedOperationPurgatory), without a goroutine or timer of its own: the
// caller calls CheckAndComplete(key) after whatever may let the operations
// watching key complete, and Expire(now) when NextDeadline passes. Keys are
// usually the *Partition an operation waits on. It is safe for concurrent
// use; TryComplete and OnComplete run without its lock held.
type Purgatory[K comparable] struct {
	mu       sync.Mutex
	watchers map[K]map[*waiter[K]]struct{}
	byTime   waitHeap[K]
	seq      uint64 // the last waiter's seq
}

type waiter[K comparable] struct {
	op       DelayedOperation
	deadline time.Time
	keys     []K
	index    int    // in byTime, -1 once out of it
	seq      uint64 // the order it came in: CheckAndComplete tries in it

	mu   sync.Mutex // serialises TryComplete and guards done
	done bool
}

// NewPurgatory returns an empty purgatory.
func NewPurgatory[K comparable]() *Purgatory[K] {
	return &Purgatory[K]{watchers: map[K]map[*waiter[K]]struct{}{}}
}

// TryCompleteElseWatch completes op at once if it can; otherwise it watches
// op under keys until it completes or deadline passes. It reports whether
// op completed now. Like Kafka it tries once more after watching, so a
// change that came between the first try and the watch is not missed.
func (p *Purgatory[K]) TryCompleteElseWatch(op DelayedOperation, deadline time.Time, keys ...K) bool {
	w := &waiter[K]{op: op, deadline: deadline, keys: keys, index: -1}
	if p.try(w) {
		return true
	}
	p.mu.Lock()
	p.seq++
	w.seq = p.seq
	for _, k := range keys {
		set := p.watchers[k]
		if set == nil {
			set = map[*waiter[K]]struct{}{}
			p.watchers[k] = set
		}
		set[w] = struct{}{}
	}
	heap.Push(&p.byTime, w)
	p.mu.Unlock()
	return p.try(w)
}

// try runs TryComplete once and, if it succeeds, removes w and completes it.
func (p *Purgatory[K]) try(w *waiter[K]) bool {
	w.mu.Lock()
	if w.done || !w.op.TryComplete() {
		w.mu.Unlock()
		return false
	}
	w.done = true
	w.mu.Unlock()
	p.remove(w)
	w.op.OnComplete(false)
	return true
}

func (p *Purgatory[K]) remove(w *waiter[K]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range w.keys {
		if set := p.watchers[k]; set != nil {
			delete(set, w)
			if len(set) == 0 {
				delete(p.watchers, k)
			}
		}
	}
	if w.index >= 0 {
		heap.Remove(&p.byTime, w.index)
	}
}

// CheckAndComplete tries every operation watching key and returns how many
// completed.
func (p *Purgatory[K]) CheckAndComplete(key K) int {
	p.mu.Lock()
	ws := make([]*waiter[K], 0, len(p.watchers[key]))
	for w := range p.watchers[key] {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	// In the order they came, as Kafka's watcher list is: two produces
	// that one high watermark completes are answered first come, first
	// answered.
	slices.SortFunc(ws, func(a, b *waiter[K]) int { return cmp.Compare(a.seq, b.seq) })
	n := 0
	for _, w := range ws {
		if p.try(w) {
			n++
		}
	}
	return n
}

// Expire completes, as expired, every operation whose deadline is at or
// before now, and returns how many.
func (p *Purgatory[K]) Expire(now time.Time) int {
	var due []*waiter[K]
	p.mu.Lock()
	for len(p.byTime) > 0 && !p.byTime[0].deadline.After(now) {
		due = append(due, p.byTime[0])
		heap.Pop(&p.byTime)
	}
	p.mu.Unlock()
	n := 0
	for _, w := range due {
		w.mu.Lock()
		expired := !w.done
		w.done = true
		w.mu.Unlock()
		if expired {
			p.remove(w)
			w.op.OnComplete(true)
			n++
		}
	}
	return n
}

// NextDeadline is the earliest deadline of a waiting operation; ok is false
// when none waits.
func (p *Purgatory[K]) NextDeadline() (deadline time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.byTime) == 0 {
		return time.Time{}, false
	}
	return p.byTime[0].deadline, true
}

// Len is the number of operations waiting.
func (p *Purgatory[K]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byTime)
}

// waitHeap orders waiters by deadline (container/heap).
type waitHeap[K comparable] []*waiter[K]

func (h waitHeap[K]) Len() int           { return len(h) }
func (h waitHeap[K]) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h waitHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waitHeap[K]) Push(x any) {
	w := x.(*waiter[K])
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waitHeap[K]) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	w.index = -1
	*h = old[:len(old)-1]
	return w
}
