package datasim

import (
	"container/heap"
	"time"
)

// event is one thing that happens at a virtual time; seq orders events at
// the same time by when they were scheduled.
type event struct {
	at   time.Time
	seq  uint64
	what string
	fn   func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// at schedules fn at t (never before now).
func (s *Sim) at(t time.Time, what string, fn func()) {
	if t.Before(s.now) {
		t = s.now
	}
	s.seq++
	heap.Push(&s.queue, &event{at: t, seq: s.seq, what: what, fn: fn})
}

// after schedules fn d from now.
func (s *Sim) after(d time.Duration, what string, fn func()) { s.at(s.now.Add(d), what, fn) }
