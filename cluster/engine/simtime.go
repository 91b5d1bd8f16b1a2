package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Advance implements cluster.Simulator.
func (e *simEngine) Advance(d time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.advance(d, "clock advance %v", false)
}

// advance runs d of simulated time as a step, for why, or with more as
// more of the stretch of time the branch ends with. It runs on the lock.
func (e *simEngine) advance(d time.Duration, why string, more bool) error {
	if err := e.usable(); err != nil {
		return err
	}
	w := e.w
	if e.hist.extend(d, w.elapsed(), w.steps, why, more) {
		// The log's line for the step says its whole stretch, as a
		// replay, which runs it at once, writes it.
		w.log[w.stepEntry].Message = stepLine(w.steps, e.hist.cur.steps[w.steps-1])
		if err := w.runFor(d); err != nil {
			w.fail(err)
			return w.failed
		}
		return nil
	}
	return w.apply(e.hist.cur.steps[w.steps])
}

// RunUntil implements cluster.Simulator.
func (e *simEngine) RunUntil(what string, held func() bool, limit time.Duration) (time.Duration, bool, error) {
	var ran time.Duration
	why := "wait " + strings.ReplaceAll(what, "%", "%%") + ": ran %v"
	for {
		if held() {
			return ran, true, nil
		}
		if ran >= limit {
			return ran, false, nil
		}
		d := min(cluster.SimCheckInterval, limit-ran)
		e.mu.Lock()
		err := e.advance(d, why, ran > 0)
		e.mu.Unlock()
		if err != nil {
			return ran, false, err
		}
		ran += d
	}
}

// paceTick is how often time runs on while resumed.
const paceTick = 50 * time.Millisecond

// Resume implements cluster.Simulator: simulated time runs at wall speed
// (over the slow factor), in stretches of paceTick, each a step.
func (e *simEngine) Resume() bool {
	e.paceMu.Lock()
	defer e.paceMu.Unlock()
	if e.paceStop != nil {
		return false
	}
	stop, done := make(chan struct{}), make(chan struct{})
	e.paceStop, e.paceDone = stop, done
	e.pacing.Store(true)
	go func() {
		defer close(done)
		t := time.NewTicker(paceTick)
		defer t.Stop()
		for more := false; ; more = true {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			e.mu.Lock()
			// Whole milliseconds, as clock advance takes them: the step's
			// scenario line runs it again exactly.
			d := max((paceTick / time.Duration(e.slow.Load())).Truncate(time.Millisecond), time.Millisecond)
			err := e.advance(d, "clock resume: ran %v until paused", more)
			e.mu.Unlock()
			if err != nil {
				return // the run broke, or closed: it says so on the next action
			}
		}
	}()
	return true
}

// Pause implements cluster.Simulator.
func (e *simEngine) Pause() bool {
	e.paceMu.Lock()
	defer e.paceMu.Unlock()
	if e.paceStop == nil {
		return false
	}
	close(e.paceStop)
	<-e.paceDone
	e.paceStop, e.paceDone = nil, nil
	e.pacing.Store(false)
	return true
}

// maxSlow bounds the slow factor, as the cluster clock's.
const maxSlow = 1000

// SetSlow implements cluster.Simulator.
func (e *simEngine) SetSlow(n int) error {
	if n < 1 || n > maxSlow {
		return fmt.Errorf("the slow-motion factor must be between 1 and %d, got %d", maxSlow, n)
	}
	e.slow.Store(int64(n))
	return nil
}

// Rewind implements cluster.Simulator: it builds the run again from its
// seed and replays the branch's first steps; going forward along the
// current branch replays only the steps in between.
func (e *simEngine) Rewind(branch, step int) (string, *view.Baseline, error) {
	e.Pause()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return "", nil, cluster.ErrClosed
	}
	b, err := e.hist.branch(branch)
	if err != nil {
		return "", nil, cluster.Errorf(cluster.ErrBadAction, "rewind: %v", err)
	}
	if step > len(b.steps) {
		return "", nil, cluster.Errorf(cluster.ErrBadAction, "rewind: branch %d has %d steps, not %d (kraftlab history)", b.id, len(b.steps), step)
	}
	w := e.w
	if b != e.hist.cur || step < w.steps || w.failed != nil {
		if w, err = e.newWorld(nil); err != nil {
			return "", nil, err
		}
	}
	for w.steps < step {
		if err := w.apply(b.steps[w.steps]); err != nil && w.failed != nil {
			break
		}
	}
	if w != e.w {
		e.w.close()
		e.w = w
	}
	e.hist.cur = b
	w.publish = e.publish
	msg := fmt.Sprintf("replayed seed %d to step %d of branch %d (of %d), simulated time %s", e.cfg.Seed, w.steps, b.id, len(b.steps), w.elapsed())
	if step < len(b.steps) {
		msg += "; an action now starts a new branch here"
	}
	var baseline *view.Baseline
	if w.steps > 0 {
		baseline = b.steps[w.steps-1].baseline
	}
	if w.failed != nil {
		return msg, baseline, w.failed
	}
	return msg, baseline, nil
}

// Position implements cluster.Simulator.
func (e *simEngine) Position() (branch, step, steps int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hist.cur.id, e.w.steps, len(e.hist.cur.steps)
}

// KeepBaseline implements cluster.Simulator.
func (e *simEngine) KeepBaseline(b *view.Baseline) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := e.w.steps; n > 0 && n == len(e.hist.cur.steps) {
		e.hist.cur.steps[n-1].baseline = b
	}
}

// publish hands an event of the current world to the stream.
func (e *simEngine) publish(ev cluster.Event) { e.events.Publish(ev) }

// Log implements cluster.Simulator.
func (e *simEngine) Log() []cluster.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.w.log)
}
