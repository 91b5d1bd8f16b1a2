package tui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// DefaultInterval is how often the screen pulls a snapshot: ten times a
// second, fast enough that a fetch every few hundred milliseconds shows
// as motion, slow enough to cost little.
const DefaultInterval = 100 * time.Millisecond

// pollTimeout bounds one pull. The engine's View never waits on a stuck
// node, but a control socket could.
const pollTimeout = 2 * time.Second

// maxPollEvents bounds the events one pull takes, so a burst cannot make
// one frame slow; the rest come with the next pull.
const maxPollEvents = 1000

// snapshotMsg is one pull: the view and the events after the last one the
// screen has. seq names the pull; only the answer to the latest pull is
// used and only it schedules the next, so there is never more than one
// chain of pulls however many messages arrive.
type snapshotMsg struct {
	seq     uint64
	started time.Time
	view    view.View
	events  []cluster.Event
	err     error
}

// poll returns the command that waits delay, then pulls a snapshot. It
// runs on its own goroutine, as every tea.Cmd does: the engine is only
// ever called, never calls the screen.
func poll(ctx context.Context, ctrl cluster.Operator, seq, after uint64, delay time.Duration) tea.Cmd {
	return func() tea.Msg {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return snapshotMsg{seq: seq, err: ctx.Err()}
			}
		}
		started := time.Now()
		ctx, cancel := context.WithTimeout(ctx, pollTimeout)
		defer cancel()
		v, err := ctrl.Status(ctx)
		if err != nil {
			return snapshotMsg{seq: seq, started: started, err: fmt.Errorf("status: %w", err)}
		}
		var evs []cluster.Event
		for ev, err := range ctrl.Events(ctx, after, false) {
			if err != nil {
				return snapshotMsg{seq: seq, started: started, view: v, err: fmt.Errorf("events: %w", err)}
			}
			evs = append(evs, ev)
			if len(evs) == maxPollEvents {
				break
			}
		}
		return snapshotMsg{seq: seq, started: started, view: v, events: evs}
	}
}

// nextDelay keeps pulls interval apart from start to start, whatever a
// pull cost, with a floor so a slow engine still leaves the screen time.
func nextDelay(interval time.Duration, started, now time.Time) time.Duration {
	const floor = 10 * time.Millisecond
	return max(interval-now.Sub(started), floor)
}
