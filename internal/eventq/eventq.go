// Package eventq is the virtual-time event queue of the seeded
// simulations (raftsim, datasim): events come out in time order, and
// those due at the same time in the order they were scheduled, so that a
// run never depends on a heap's or a map's order.
package eventq

import (
	"container/heap"
	"time"
)

// Queue holds events of type T by due time. The zero value is empty and
// ready to use.
type Queue[T any] struct {
	h   events[T]
	seq uint64
}

type event[T any] struct {
	at  time.Time
	seq uint64
	v   T
}

// Push schedules v at at.
func (q *Queue[T]) Push(at time.Time, v T) {
	q.seq++
	heap.Push(&q.h, event[T]{at: at, seq: q.seq, v: v})
}

// Len is how many events wait.
func (q *Queue[T]) Len() int { return len(q.h) }

// Next is when the first event is due; ok is false when none waits.
func (q *Queue[T]) Next() (at time.Time, ok bool) {
	if len(q.h) == 0 {
		return time.Time{}, false
	}
	return q.h[0].at, true
}

// Pop takes the first event. The queue must not be empty.
func (q *Queue[T]) Pop() (time.Time, T) {
	e := heap.Pop(&q.h).(event[T])
	return e.at, e.v
}

type events[T any] []event[T]

func (h events[T]) Len() int { return len(h) }
func (h events[T]) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h events[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events[T]) Push(x any)   { *h = append(*h, x.(event[T])) }
func (h *events[T]) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
