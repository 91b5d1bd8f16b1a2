package datasim

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/internal/eventq"
)

// Env is the simulation the data plane runs in: its virtual clock, event
// queue, random source, trace and network. Run makes one of its own; the
// whole-cluster simulation (package cluster/sim) lends metasim's, so that
// one seed decides every layer.
type Env interface {
	// Now is the virtual time.
	Now() time.Time
	// After runs fn after d of virtual time; what names the event.
	After(d time.Duration, what string, fn func())
	// Rand is the run's random source.
	Rand() *rand.Rand
	// Record adds a line to the trace (and its hash); Env stamps it.
	Record(line string)
	// Fail stops the run at a broken invariant.
	Fail(err error)
	// Send carries a message from one address to another: deliver runs at
	// the destination after the link's delay, or never if the link is
	// cut or the message lost (the sender's timeout notices, as over TCP).
	Send(from, to int32, what string, deliver func())
}

// ownEnv is Run's Env: an event queue, a network of seeded delays,
// losses, cut and slow links, and a trace whose hash identifies the run.
type ownEnv struct {
	rng    *rand.Rand
	now    time.Time
	queue  eventq.Queue[event]
	events int
	err    error
	net    network

	trace      hash.Hash64
	traceLines []string
	keepLines  int
}

func newOwnEnv(seed uint64, keepLines int) *ownEnv {
	e := &ownEnv{rng: rand.New(rand.NewPCG(seed, seed^0xda7a5eed)), now: start, trace: fnv.New64a(), keepLines: keepLines}
	e.net = network{env: e, cut: map[link]bool{}, slow: map[link]time.Duration{}, dropPerMille: 5}
	return e
}

func (e *ownEnv) Now() time.Time   { return e.now }
func (e *ownEnv) Rand() *rand.Rand { return e.rng }

func (e *ownEnv) After(d time.Duration, what string, fn func()) { e.at(e.now.Add(d), what, fn) }

// at schedules fn at t (never before now).
func (e *ownEnv) at(t time.Time, what string, fn func()) {
	if t.Before(e.now) {
		t = e.now
	}
	e.queue.Push(t, event{what: what, fn: fn})
}

func (e *ownEnv) Record(line string) {
	line = fmt.Sprintf("%9.3fs ", e.now.Sub(start).Seconds()) + line
	e.trace.Write([]byte(line))
	e.trace.Write([]byte{'\n'})
	e.traceLines = append(e.traceLines, line)
	if n := len(e.traceLines); n > 2*e.keepLines {
		e.traceLines = slices.Clone(e.traceLines[n-e.keepLines:])
	}
}

func (e *ownEnv) Fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *ownEnv) Send(from, to int32, what string, deliver func()) {
	e.net.send(from, to, what, deliver)
}

// runUntil runs events up to end, calling check after each.
func (e *ownEnv) runUntil(end time.Time, check func()) {
	for e.queue.Len() > 0 && e.err == nil {
		at, ev := e.queue.Pop()
		if at.After(end) {
			return
		}
		e.now = at
		e.events++
		// Every event counts in the trace hash, not only those traced.
		fmt.Fprintf(e.trace, "%d %s\n", e.now.Sub(start), ev.what)
		ev.fn()
		if e.err == nil {
			check()
		}
	}
}

func (e *ownEnv) traceTail() string {
	var out []byte
	for _, l := range e.traceLines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return string(out)
}

// event is what runs at a virtual time, named for the trace hash.
type event struct {
	what string
	fn   func()
}
