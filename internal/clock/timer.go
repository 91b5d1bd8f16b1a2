package clock

import "time"

// Timer is time.Timer on a cluster clock, with its semantics (those of Go
// 1.23 on): Reset and Stop report whether the timer was armed, and after
// either returns no value armed before it is received.
//
// On a clock a timer keeps its deadline in cluster time and waits on a
// runtime timer for the matching wall time; the clock stops and rearms
// that runtime timer when it pauses, resumes or changes speed.
type Timer struct {
	// C delivers the cluster time the timer fired at (not for AfterFunc's
	// timers).
	C <-chan time.Time

	wall *time.Timer // on the wall clock, the timer itself

	sh     *shard
	ch     chan time.Time
	f      func()
	period time.Duration // a Ticker's

	// Guarded by sh.mu.
	rt   *time.Timer // calls fire; nil until first armed while running
	when time.Time   // the deadline, in cluster time
	idx  int         // in sh.armed; -1 while not armed
}

// NewTimer returns a timer that sends the cluster time on its channel
// after d of cluster time.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	if c == nil {
		t := time.NewTimer(d)
		return &Timer{C: t.C, wall: t}
	}
	ch := make(chan time.Time, 1)
	t := &Timer{C: ch, ch: ch, sh: c.shard(), idx: -1}
	t.Reset(d)
	return t
}

// AfterFunc calls f on its own goroutine after d of cluster time; Stop
// cancels it.
func (c *Clock) AfterFunc(d time.Duration, f func()) *Timer {
	if c == nil {
		return &Timer{wall: time.AfterFunc(d, f)}
	}
	t := &Timer{f: f, sh: c.shard(), idx: -1}
	t.Reset(d)
	return t
}

// After is NewTimer(d).C.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	return c.NewTimer(d).C
}

// Sleep waits for d of cluster time.
func (c *Clock) Sleep(d time.Duration) {
	if c == nil {
		time.Sleep(d)
		return
	}
	<-c.NewTimer(d).C
}

// Stop disarms the timer; it reports whether the timer was armed.
func (t *Timer) Stop() bool {
	if t.wall != nil {
		return t.wall.Stop()
	}
	t.sh.mu.Lock()
	defer t.sh.mu.Unlock()
	armed := t.idx >= 0
	if armed {
		t.sh.remove(t)
		t.stopRuntime()
	}
	t.drain()
	return armed
}

// Reset arms the timer to fire after d of cluster time; it reports
// whether the timer was armed.
func (t *Timer) Reset(d time.Duration) bool {
	if t.wall != nil {
		return t.wall.Reset(d)
	}
	t.sh.mu.Lock()
	defer t.sh.mu.Unlock()
	armed := t.idx >= 0
	t.drain()
	st := t.sh.c.st.Load()
	now := st.now()
	t.when = now.Add(max(d, 0))
	if !armed {
		t.sh.add(t)
	}
	if st.paused {
		// Cluster time stands still: only a timer already due fires.
		t.stopRuntime()
		if d <= 0 {
			f := t.expireLocked(now, now)
			if f != nil {
				go f()
			}
		}
		return armed
	}
	t.armRuntime(st.wallWait(d))
	return armed
}

// drain empties the channel of a value the timer sent before a Stop or
// Reset. sh.mu is held.
func (t *Timer) drain() {
	if t.ch == nil {
		return
	}
	select {
	case <-t.ch:
	default:
	}
}

// stopRuntime stops the runtime timer, if any. sh.mu is held.
func (t *Timer) stopRuntime() {
	if t.rt != nil {
		t.rt.Stop()
	}
}

// armRuntime sets the runtime timer to call fire after w. sh.mu is held.
func (t *Timer) armRuntime(w time.Duration) {
	if t.rt == nil {
		t.rt = time.AfterFunc(w, t.fire)
		return
	}
	t.rt.Reset(w)
}

// fire is the runtime timer's call: the timer expires if its deadline has
// come in cluster time, and otherwise waits again for the rest (a clock
// that slowed down or paused since it was armed).
func (t *Timer) fire() {
	t.sh.mu.Lock()
	if t.idx < 0 {
		t.sh.mu.Unlock()
		return
	}
	st := t.sh.c.st.Load()
	now := st.now()
	if now.Before(t.when) {
		if !st.paused {
			t.rt.Reset(st.wallWait(t.when.Sub(now)))
		}
		t.sh.mu.Unlock()
		return
	}
	f := t.expireLocked(now, now)
	t.sh.mu.Unlock()
	if f != nil {
		f()
	}
}

// expire fires t for Advance if it is still armed and due at cluster
// time at; a ticker's next tick comes after end.
func (t *Timer) expire(at, end time.Time) {
	t.sh.mu.Lock()
	if t.idx < 0 || t.when.After(at) {
		t.sh.mu.Unlock()
		return
	}
	f := t.expireLocked(t.when, end)
	t.sh.mu.Unlock()
	if f != nil {
		go f()
	}
}

// expireLocked fires the armed timer t at cluster time now: it sends now
// (dropped if the last value is still unread, as a ticker drops ticks) or
// returns the function to call. A ticker rearms for its first tick after
// skip; anything else disarms. sh.mu is held.
func (t *Timer) expireLocked(now, skip time.Time) func() {
	if t.period > 0 {
		for !t.when.After(skip) {
			t.when = t.when.Add(t.period)
		}
		if st := t.sh.c.st.Load(); !st.paused {
			t.armRuntime(st.wallWait(t.when.Sub(st.now())))
		}
	} else {
		t.sh.remove(t)
	}
	if t.ch != nil {
		select {
		case t.ch <- now:
		default:
		}
		return nil
	}
	return t.f
}

// Ticker is time.Ticker on a cluster clock.
type Ticker struct {
	// C delivers the cluster time of each tick.
	C <-chan time.Time
	t *Timer
	w *time.Ticker
}

// NewTicker returns a ticker that ticks every d of cluster time; d must be
// positive.
func (c *Clock) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	if c == nil {
		w := time.NewTicker(d)
		return &Ticker{C: w.C, w: w}
	}
	ch := make(chan time.Time, 1)
	t := &Timer{C: ch, ch: ch, sh: c.shard(), idx: -1, period: d}
	t.Reset(d)
	return &Ticker{C: ch, t: t}
}

// Stop turns the ticker off.
func (k *Ticker) Stop() {
	if k.w != nil {
		k.w.Stop()
		return
	}
	k.t.Stop()
}

// Reset stops the ticker and sets it to tick every d from now.
func (k *Ticker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	if k.w != nil {
		k.w.Reset(d)
		return
	}
	k.t.sh.mu.Lock()
	k.t.period = d
	k.t.sh.mu.Unlock()
	k.t.Reset(d)
}
