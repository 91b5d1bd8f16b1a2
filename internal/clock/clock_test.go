package clock

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// within is a generous bound for what must happen "soon" on a loaded
// machine; quiet is how long a test watches for what must not happen.
const (
	within = 10 * time.Second
	quiet  = 100 * time.Millisecond
)

func fired(ch <-chan time.Time, d time.Duration) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	case <-time.After(d):
		return time.Time{}, false
	}
}

func TestNilIsTheWallClock(t *testing.T) {
	var c *Clock
	before := time.Now()
	if now := c.Now(); now.Before(before) || time.Since(now) > within {
		t.Fatalf("nil clock reads %v, wall %v", now, before)
	}
	if _, ok := fired(c.NewTimer(time.Millisecond).C, within); !ok {
		t.Fatal("nil clock's timer never fired")
	}
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	k := c.NewTicker(time.Millisecond)
	if _, ok := fired(k.C, within); !ok {
		t.Fatal("nil clock's ticker never ticked")
	}
	k.Stop()
	ctx, cancel := c.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("nil clock's context ended with %v", ctx.Err())
	}
	if c.Paused() || c.State().Slow != 1 {
		t.Fatalf("nil clock says %v", c.State())
	}
	select {
	case <-c.Running():
	default:
		t.Fatal("nil clock is not running")
	}
}

func TestRunningReadsTheWall(t *testing.T) {
	c := New()
	before := time.Now()
	now := c.Now()
	after := time.Now()
	if now.Before(before) || now.After(after) {
		t.Fatalf("fresh clock reads %v, outside [%v, %v]", now, before, after)
	}
	if v, ok := fired(c.NewTimer(time.Millisecond).C, within); !ok || v.Before(now.Add(time.Millisecond)) {
		t.Fatalf("timer fired %v at %v, armed at %v for 1ms", ok, v, now)
	}
}

func TestPauseFreezesTimeAndTimers(t *testing.T) {
	c := New()
	tm := c.NewTimer(20 * time.Millisecond)
	var calls atomic.Int32
	c.AfterFunc(20*time.Millisecond, func() { calls.Add(1) })
	if !c.Pause() || c.Pause() {
		t.Fatal("Pause reported wrongly whether the clock ran")
	}
	at := c.Now()
	if _, ok := fired(tm.C, quiet); ok {
		t.Fatal("timer fired while paused")
	}
	if calls.Load() != 0 {
		t.Fatal("AfterFunc ran while paused")
	}
	if !c.Now().Equal(at) {
		t.Fatalf("paused clock moved from %v to %v", at, c.Now())
	}
	st := c.State()
	if !st.Paused || st.Lag() < quiet || st.Since.IsZero() {
		t.Fatalf("paused clock says %+v (lag %v)", st, st.Lag())
	}
	select {
	case <-c.Running():
		t.Fatal("Running is closed while paused")
	default:
	}
	running := c.Running()
	if !c.Resume() || c.Resume() {
		t.Fatal("Resume reported wrongly whether the clock was paused")
	}
	<-running
	v, ok := fired(tm.C, within)
	if !ok || v.Before(at) {
		t.Fatalf("timer after resume: fired %v at %v", ok, v)
	}
	for calls.Load() == 0 {
		runtime.Gosched()
	}
	// Resumed, cluster time runs at wall speed behind the wall by the
	// pause.
	if lag := c.State().Lag(); lag < quiet {
		t.Fatalf("cluster time only %v behind the wall after a pause of %v", lag, quiet)
	}
}

func TestAdvanceFiresDueTimersInOrder(t *testing.T) {
	c := New()
	c.Pause()
	start := c.Now()
	var timers []*Timer
	for _, d := range []time.Duration{30, 10, 20, 50} {
		timers = append(timers, c.NewTimer(d*time.Millisecond))
	}
	if err := c.Advance(35 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := c.Since(start); got != 35*time.Millisecond {
		t.Fatalf("advanced by %v, want 35ms", got)
	}
	for i, d := range []time.Duration{30, 10, 20} {
		select {
		case v := <-timers[i].C:
			// Each fired at its own deadline: the clock stepped.
			if got := v.Sub(start); got != d*time.Millisecond {
				t.Errorf("timer of %v fired at %v", d*time.Millisecond, got)
			}
		default:
			t.Errorf("timer of %v did not fire", d*time.Millisecond)
		}
	}
	select {
	case v := <-timers[3].C:
		t.Fatalf("timer of 50ms fired at %v", v.Sub(start))
	default:
	}
	if err := c.Advance(15 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if v := <-timers[3].C; v.Sub(start) != 50*time.Millisecond {
		t.Fatalf("timer of 50ms fired at %v", v.Sub(start))
	}
	c.Resume()
	if err := c.Advance(time.Millisecond); !errors.Is(err, ErrRunning) {
		t.Fatalf("Advance of a running clock: %v", err)
	}
	if err := New().Advance(-time.Second); err == nil {
		t.Fatal("negative Advance accepted")
	}
}

func TestAdvanceOrderOfFunctions(t *testing.T) {
	// Functions run on their own goroutines, but each reads its own
	// deadline: the clock stands there until the next one is due.
	c := New()
	c.Pause()
	start := c.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	seen := map[time.Duration]time.Duration{}
	for _, d := range []time.Duration{3, 1, 2} {
		d := d * time.Millisecond
		wg.Add(1)
		c.AfterFunc(d, func() {
			defer wg.Done()
			mu.Lock()
			seen[d] = 0
			mu.Unlock()
		})
	}
	if err := c.Advance(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(seen) != 3 || c.Since(start) != 10*time.Millisecond {
		t.Fatalf("ran %v, clock at %v", seen, c.Since(start))
	}
}

func TestTickerTicksOncePerAdvance(t *testing.T) {
	c := New()
	c.Pause()
	start := c.Now()
	k := c.NewTicker(time.Millisecond)
	defer k.Stop()
	if err := c.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	v := <-k.C
	if v.Sub(start) != time.Millisecond {
		t.Fatalf("tick at %v", v.Sub(start))
	}
	select {
	case v := <-k.C:
		t.Fatalf("second tick at %v in one advance", v.Sub(start))
	default:
	}
	// The ticker keeps its phase: the next tick is the first after the
	// advance.
	if err := c.Advance(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if v := <-k.C; v.Sub(start) != time.Hour+time.Millisecond {
		t.Fatalf("tick at %v", v.Sub(start))
	}
	k.Reset(time.Minute)
	if err := c.Advance(59 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-k.C:
		t.Fatalf("reset ticker ticked at %v", v.Sub(start))
	default:
	}
	if err := c.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	<-k.C
	c.Resume()
	k.Reset(time.Millisecond)
	if _, ok := fired(k.C, within); !ok {
		t.Fatal("ticker stopped after resume")
	}
}

func TestStopAndResetSemantics(t *testing.T) {
	c := New()
	c.Pause()
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of an armed timer reported false")
	}
	if tm.Stop() {
		t.Fatal("Stop of a stopped timer reported true")
	}
	c.Advance(2 * time.Second)
	select {
	case <-tm.C:
		t.Fatal("stopped timer fired")
	default:
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer reported true")
	}
	c.Advance(time.Second)
	// Fired, unread: a Reset takes the stale value away.
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a fired timer reported true")
	}
	select {
	case <-tm.C:
		t.Fatal("stale value after Reset")
	default:
	}
	if !tm.Reset(2 * time.Second) {
		t.Fatal("Reset of an armed timer reported false")
	}
	c.Advance(time.Second)
	select {
	case <-tm.C:
		t.Fatal("timer fired at its old deadline after Reset")
	default:
	}
	c.Advance(time.Second)
	<-tm.C
	// A due timer fires even while paused.
	tm.Reset(0)
	select {
	case <-tm.C:
	default:
		t.Fatal("Reset(0) while paused did not fire")
	}
	ran := make(chan struct{})
	c.AfterFunc(-time.Second, func() { close(ran) })
	<-ran
	c.Resume()
	// Running, a stopped runtime timer stays silent too.
	tm.Reset(time.Millisecond)
	tm.Stop()
	if _, ok := fired(tm.C, quiet); ok {
		t.Fatal("stopped timer fired while running")
	}
}

func TestSlowMotion(t *testing.T) {
	c := New()
	if err := c.SetSlow(0); err == nil {
		t.Fatal("slow 0 accepted")
	}
	if err := c.SetSlow(MaxSlow + 1); err == nil {
		t.Fatal("slow above the maximum accepted")
	}
	if err := c.SetSlow(10); err != nil {
		t.Fatal(err)
	}
	wall, start := time.Now(), c.Now()
	tm := c.NewTimer(20 * time.Millisecond)
	if _, ok := fired(tm.C, quiet); ok && time.Since(wall) < 200*time.Millisecond {
		t.Fatal("timer of 20ms fired before 200ms of wall at slow 10")
	}
	if el, w := c.Since(start), time.Since(wall); el > w/10+time.Microsecond {
		t.Fatalf("%v of cluster time in %v of wall at slow 10", el, w)
	}
	if st := c.State(); st.Slow != 10 || st.String() != "slow ×10" {
		t.Fatalf("clock says %v", st)
	}
	if c.Normal() {
		t.Fatal("a clock slowed by 10 says it runs at normal speed")
	}
	// Back to speed, a timer armed for minutes of wall fires at once.
	if err := c.SetSlow(MaxSlow); err != nil {
		t.Fatal(err)
	}
	long := c.NewTimer(50 * time.Millisecond)
	if err := c.SetSlow(1); err != nil {
		t.Fatal(err)
	}
	if _, ok := fired(long.C, within); !ok {
		t.Fatal("timer not rearmed when the clock sped up")
	}
	if !c.Normal() || !(*Clock)(nil).Normal() {
		t.Fatal("a clock back at speed, or the wall clock, says it is not normal")
	}
	// Slowing while paused takes effect at resume.
	c.Pause()
	if c.Normal() {
		t.Fatal("a paused clock says it runs at normal speed")
	}
	if err := c.SetSlow(MaxSlow); err != nil {
		t.Fatal(err)
	}
	tm.Reset(time.Millisecond)
	c.Resume()
	if _, ok := fired(tm.C, quiet); ok {
		t.Fatal("1ms timer fired within 100ms of wall at slow 1000")
	}
	tm.Stop()
}

func TestContexts(t *testing.T) {
	c := New()
	c.Pause()
	ctx, cancel := c.WithTimeout(context.Background(), time.Second)
	defer cancel()
	child, cancelChild := c.WithTimeout(ctx, time.Hour)
	defer cancelChild()
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("a cluster-clock deadline shows as a wall deadline")
	}
	select {
	case <-ctx.Done():
		t.Fatal("context ended while paused")
	case <-time.After(quiet):
	}
	c.Advance(time.Second)
	<-ctx.Done()
	<-child.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("contexts ended with %v and %v", ctx.Err(), child.Err())
	}
	at, cancelAt := c.WithDeadline(context.Background(), c.Now().Add(time.Second))
	cancelAt()
	if !errors.Is(at.Err(), context.Canceled) {
		t.Fatalf("cancelled context says %v", at.Err())
	}
	c.Advance(time.Second)
	if !errors.Is(at.Err(), context.Canceled) {
		t.Fatalf("cancelled context says %v after its deadline", at.Err())
	}
}

func TestOnPause(t *testing.T) {
	c := New()
	var n atomic.Int32
	remove := c.OnPause(func() { n.Add(1) })
	c.Pause()
	c.Pause()
	c.Resume()
	remove()
	c.Pause()
	if n.Load() != 1 {
		t.Fatalf("hook ran %d times", n.Load())
	}
}

// TestPausedIsIdle arms many fast timers and tickers and pauses: none of
// their functions runs and no goroutine is left waiting on them.
func TestPausedIsIdle(t *testing.T) {
	c := New()
	var ran atomic.Int64
	var timers []*Timer
	var tickers []*Ticker
	for range 500 {
		timers = append(timers, c.AfterFunc(time.Millisecond, func() { ran.Add(1) }))
		tickers = append(tickers, c.NewTicker(time.Millisecond))
	}
	c.Pause()
	at := c.Now()
	due := int64(0)
	for _, tm := range timers {
		tm.sh.mu.Lock()
		// Fired already (disarmed), or due by the pause: those run.
		if tm.idx < 0 || !tm.when.After(at) {
			due++
		}
		tm.sh.mu.Unlock()
	}
	g := runtime.NumGoroutine()
	time.Sleep(quiet)
	if n := ran.Load(); n > due {
		t.Fatalf("%d functions ran, %d were due by the pause", n, due)
	}
	if n := runtime.NumGoroutine(); n > g+5 {
		t.Fatalf("%d goroutines while paused, %d at the pause", n, g)
	}
	for _, k := range tickers {
		select {
		case <-k.C:
		default:
		}
	}
	time.Sleep(quiet)
	for i, k := range tickers {
		select {
		case <-k.C:
			t.Fatalf("ticker %d ticked while paused", i)
		default:
		}
	}
	c.Resume()
	for _, tm := range timers {
		tm.Stop()
	}
	for _, k := range tickers {
		k.Stop()
	}
}

// TestConcurrentUse hammers timers while the clock pauses, resumes,
// changes speed and advances; every timer armed last must fire once.
func TestConcurrentUse(t *testing.T) {
	c := New()
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch i % 4 {
			case 0:
				c.Pause()
			case 1:
				c.Advance(time.Millisecond)
				c.Resume()
			case 2:
				c.SetSlow(1 + i%3)
			case 3:
				c.SetSlow(1)
			}
			runtime.Gosched()
		}
	})
	var fires atomic.Int64
	final := make([]*Timer, workers)
	var users sync.WaitGroup
	for w := range workers {
		users.Go(func() {
			tm := c.NewTimer(time.Hour)
			f := c.AfterFunc(time.Hour, func() { fires.Add(1) })
			for i := range rounds {
				d := time.Duration(i%5) * 100 * time.Microsecond
				tm.Reset(d)
				f.Reset(d)
				if i%3 == 0 {
					tm.Stop()
					f.Stop()
				}
				select {
				case <-tm.C:
				default:
				}
				_ = c.Now()
			}
			tm.Stop()
			f.Stop()
			final[w] = tm
		})
	}
	users.Wait()
	close(stop)
	wg.Wait()
	c.Resume()
	c.SetSlow(1)
	for _, tm := range final {
		tm.Reset(time.Millisecond)
	}
	for i, tm := range final {
		if _, ok := fired(tm.C, within); !ok {
			t.Fatalf("timer %d never fired after the storm", i)
		}
		select {
		case <-tm.C:
			t.Fatalf("timer %d fired twice", i)
		default:
		}
	}
	for i := range c.shards {
		if n := len(c.shards[i].armed); n != 0 {
			t.Fatalf("shard %d still holds %d armed timers", i, n)
		}
	}
	_ = fires.Load()
}

func BenchmarkNow(b *testing.B) {
	b.Run("wall", func(b *testing.B) {
		for b.Loop() {
			_ = time.Now()
		}
	})
	c := New()
	b.Run("clock", func(b *testing.B) {
		for b.Loop() {
			_ = c.Now()
		}
	})
}

func BenchmarkTimerReset(b *testing.B) {
	b.Run("wall", func(b *testing.B) {
		tm := time.NewTimer(time.Hour)
		defer tm.Stop()
		for b.Loop() {
			tm.Reset(time.Hour)
		}
	})
	c := New()
	b.Run("clock", func(b *testing.B) {
		tm := c.NewTimer(time.Hour)
		defer tm.Stop()
		for b.Loop() {
			tm.Reset(time.Hour)
		}
	})
	b.Run("clock-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			tm := c.NewTimer(time.Hour)
			defer tm.Stop()
			for pb.Next() {
				tm.Reset(time.Hour)
			}
		})
	})
}
