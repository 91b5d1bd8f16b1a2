// Package clock is a playground's cluster clock: the one time source every
// timer of the engine reads, which the user can pause, slow down and, while
// paused, advance by hand.
//
// Running normally the cluster clock is the wall clock, offset by however
// long it was paused and slowed before: Now is time.Now plus a constant, and
// a timer is a runtime timer plus a lock. Paused, cluster time stands still
// and no timer fires (the runtime timers are stopped, nothing polls);
// Advance moves it by hand, firing the timers that fall due, in deadline
// order. Slowed by N, cluster time passes at 1/N of wall speed and every
// timer waits N times longer on the wall.
//
// A nil *Clock is the wall clock itself, so parts built without one (tests,
// benchmarks) need no setup.
package clock

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// MaxSlow is the largest slow-motion factor SetSlow takes: a second of
// cluster time then lasts over a quarter of an hour on the wall.
const MaxSlow = 1000

// ErrRunning is Advance's error while the clock runs: time moves by hand
// only while it is paused.
var ErrRunning = errors.New("the cluster clock is running: pause it before advancing it")

// Clock is a cluster clock. Its methods are safe from any goroutine; a nil
// *Clock is the wall clock.
type Clock struct {
	st atomic.Pointer[state]

	// mu serialises the controls (Pause, Resume, SetSlow, Advance) and
	// guards hooks; it is taken before any shard's.
	mu     sync.Mutex
	hooks  map[*func()]struct{}
	shards [nShards]shard
	next   atomic.Uint32 // the shard of the next timer
}

// state is the clock's rate and position, replaced whole on each control
// so that Now reads it with one atomic load.
type state struct {
	paused bool
	slow   int64     // cluster time passes at 1/slow of wall speed
	wall   time.Time // the wall reading when this state began
	at     time.Time // the cluster time then
	offset time.Duration
	// resumed is closed when a pause ends; nil while running.
	resumed chan struct{}
	// pausedAt is the wall time the pause began.
	pausedAt time.Time
}

// now is cluster time under st.
func (st *state) now() time.Time {
	switch {
	case st.paused:
		return st.at
	case st.slow == 1:
		return time.Now().Add(st.offset)
	}
	return st.at.Add(time.Since(st.wall) / time.Duration(st.slow))
}

// wallWait is how long a cluster duration d lasts on the wall while
// running.
func (st *state) wallWait(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if st.slow > 1 && d < time.Duration(1<<62)/time.Duration(st.slow) {
		return d * time.Duration(st.slow)
	}
	if st.slow > 1 {
		return time.Duration(1<<62 - 1)
	}
	return d
}

// New returns a running cluster clock that reads as the wall clock.
func New() *Clock {
	c := &Clock{hooks: make(map[*func()]struct{})}
	now := time.Now()
	c.st.Store(&state{slow: 1, wall: now, at: now})
	for i := range c.shards {
		c.shards[i].c = c
	}
	return c
}

// Now returns the cluster time.
func (c *Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c.st.Load().now()
}

// Since is the cluster time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is the cluster time left until t.
func (c *Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Paused reports whether the clock is paused.
func (c *Clock) Paused() bool { return c != nil && c.st.Load().paused }

// Normal reports whether the clock runs at wall speed, neither paused
// nor slowed: one atomic load, for hot paths that do more while a
// learner watches time closely.
func (c *Clock) Normal() bool {
	if c == nil {
		return true
	}
	st := c.st.Load()
	return !st.paused && st.slow == 1
}

// closed is the channel Running returns while the clock runs.
var closed = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Running returns a channel that is closed while the clock runs: while
// it is paused, the channel closes when the pause ends.
func (c *Clock) Running() <-chan struct{} {
	if c == nil {
		return closed
	}
	if st := c.st.Load(); st.paused {
		return st.resumed
	}
	return closed
}

// State is what a clock says of itself.
type State struct {
	// Paused says the clock stands still, since the wall time Since.
	Paused bool
	Since  time.Time
	// Slow is the slow-motion factor: cluster time passes at 1/Slow of
	// wall speed; 1 is normal speed.
	Slow int
	// Now is the cluster time and Wall the wall time it was read at.
	Now, Wall time.Time
}

// Lag is how far cluster time is behind the wall: the time it spent
// paused and slowed, less what Advance moved it on.
func (s State) Lag() time.Duration { return s.Wall.Sub(s.Now) }

func (s State) String() string {
	switch {
	case s.Paused:
		return fmt.Sprintf("paused since %s", s.Since.Format("15:04:05.000"))
	case s.Slow > 1:
		return fmt.Sprintf("slow ×%d", s.Slow)
	}
	return "running"
}

// State reads the clock.
func (c *Clock) State() State {
	if c == nil {
		now := time.Now()
		return State{Slow: 1, Now: now, Wall: now}
	}
	st := c.st.Load()
	return State{Paused: st.paused, Since: st.pausedAt, Slow: int(st.slow), Now: st.now(), Wall: time.Now()}
}

// OnPause calls f each time the clock pauses, after it stopped, on the
// goroutine that paused it, until remove is called. f must not block nor
// call the clock's controls. Parts that publish their state lazily use it
// to publish what the pause froze.
func (c *Clock) OnPause(f func()) (remove func()) {
	if c == nil {
		return func() {}
	}
	key := &f
	c.mu.Lock()
	c.hooks[key] = struct{}{}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.hooks, key)
		c.mu.Unlock()
	}
}

// Pause stops cluster time: no timer fires until Resume (or Advance). It
// reports whether the clock was running.
func (c *Clock) Pause() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Load()
	if st.paused {
		return false
	}
	now := time.Now()
	c.st.Store(&state{paused: true, slow: st.slow, wall: now, at: st.now(), resumed: make(chan struct{}), pausedAt: now})
	// A timer armed before the store is stopped here; one armed after
	// it sees the pause and arms no runtime timer.
	c.eachArmed(func(t *Timer) { t.stopRuntime() })
	for f := range c.hooks {
		(*f)()
	}
	return true
}

// Resume starts cluster time again from where it stood. It reports
// whether the clock was paused.
func (c *Clock) Resume() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Load()
	if !st.paused {
		return false
	}
	c.restart(st.at, st.slow)
	close(st.resumed)
	return true
}

// SetSlow sets the slow-motion factor n: cluster time passes at 1/n of
// wall speed (1 is normal speed), from now on, paused or not.
func (c *Clock) SetSlow(n int) error {
	if n < 1 || n > MaxSlow {
		return fmt.Errorf("slow-motion factor %d: want 1 to %d", n, MaxSlow)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Load()
	if st.paused {
		next := *st
		next.slow = int64(n)
		c.st.Store(&next)
		return nil
	}
	c.restart(st.now(), int64(n))
	return nil
}

// restart makes the clock run from cluster time at at rate 1/slow and
// rearms every armed timer for it. c.mu is held.
func (c *Clock) restart(at time.Time, slow int64) {
	wall := time.Now()
	st := &state{slow: slow, wall: wall, at: at, offset: at.Sub(wall)}
	c.st.Store(st)
	c.eachArmed(func(t *Timer) {
		// st.now rather than at: the walk takes time.
		t.armRuntime(st.wallWait(t.when.Sub(st.now())))
	})
}

// Advance moves a paused clock on by d, firing the timers that fall due
// on the way in deadline order, each at its own deadline: the clock reads
// a timer's deadline when it fires. Timers armed meanwhile (a loop that
// woke arms its next) fire too if they fall due before the end. A ticker
// ticks at most once per Advance, as a receiver too slow for its ticks
// gets one. Functions of AfterFunc run on goroutines of their own, as
// time.AfterFunc's do.
func (c *Clock) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("advance the cluster clock by %v: negative", d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Load()
	if !st.paused {
		return ErrRunning
	}
	end := st.at.Add(d)
	for {
		t, when := c.earliest(end)
		if t == nil {
			break
		}
		st := c.st.Load()
		if when.After(st.at) {
			c.moveTo(st, when)
		} else {
			when = st.at
		}
		t.expire(when, end)
	}
	c.moveTo(c.st.Load(), end)
	return nil
}

// moveTo sets a paused clock's time to at. c.mu is held.
func (c *Clock) moveTo(st *state, at time.Time) {
	next := *st
	next.at = at
	c.st.Store(&next)
}

// earliest returns the armed timer due first and its deadline, if due by
// end.
func (c *Clock) earliest(end time.Time) (first *Timer, when time.Time) {
	c.eachArmed(func(t *Timer) {
		if !t.when.After(end) && (first == nil || t.when.Before(when)) {
			first, when = t, t.when
		}
	})
	return first, when
}

// eachArmed calls f for every armed timer, under its shard's lock.
func (c *Clock) eachArmed(f func(*Timer)) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for _, t := range sh.armed {
			f(t)
		}
		sh.mu.Unlock()
	}
}

// nShards spreads the timers' bookkeeping over locks, so the goroutines of
// a busy cluster arming timers seldom wait on each other.
const nShards = 16

// shard holds the armed timers of its share.
type shard struct {
	c     *Clock
	mu    sync.Mutex
	armed []*Timer
	_     [24]byte // keep shards on their own cache lines
}

func (sh *shard) add(t *Timer) {
	t.idx = len(sh.armed)
	sh.armed = append(sh.armed, t)
}

func (sh *shard) remove(t *Timer) {
	last := len(sh.armed) - 1
	if t.idx != last {
		sh.armed[t.idx] = sh.armed[last]
		sh.armed[t.idx].idx = t.idx
	}
	sh.armed[last] = nil
	sh.armed = sh.armed[:last]
	t.idx = -1
}

func (c *Clock) shard() *shard {
	return &c.shards[c.next.Add(1)%nShards]
}
