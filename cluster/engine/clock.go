package engine

import (
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/clock"
)

// Clock implements cluster.Engine: the playground's cluster clock.
func (e *engine) Clock() *clock.Clock { return e.clock }

// clockView is the clock's state as a view shows it.
func clockView(s clock.State) view.Clock {
	v := view.Clock{Paused: s.Paused, Slow: s.Slow, LagMs: s.Lag().Milliseconds()}
	if s.Paused {
		v.PausedSinceMs = s.Since.UnixMilli()
	}
	return v
}
