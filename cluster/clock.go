package cluster

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
)

// ActClock reads or sets the playground's cluster clock, the one time
// source of every timer of the engine; Action.Clock says what to do.
const ActClock ActionKind = "clock"

// EventClock: the cluster clock paused, resumed, changed speed or was
// advanced by hand.
const EventClock EventKind = "clock"

// ClockOp is what a clock action does.
type ClockOp string

// The clock actions.
const (
	// ClockShow only says how the clock stands.
	ClockShow ClockOp = ""
	// ClockPause stops cluster time: no timer fires, the links hold every
	// message between nodes, the nodes' handlers still answer.
	ClockPause ClockOp = "pause"
	// ClockResume starts cluster time again where it stood.
	ClockResume ClockOp = "resume"
	// ClockSlow makes cluster time pass at 1/Action.Slow of wall speed.
	ClockSlow ClockOp = "slow"
	// ClockAdvance moves a paused clock on by Action.AdvanceMs, firing the
	// timers that fall due.
	ClockAdvance ClockOp = "advance"
)

// ClockOps are the clock actions a line or command may name.
var ClockOps = []ClockOp{ClockPause, ClockResume, ClockSlow, ClockAdvance}

// ParseClockOp reads a clock action's name.
func ParseClockOp(s string) (ClockOp, error) {
	for _, op := range ClockOps {
		if string(op) == s {
			return op, nil
		}
	}
	return "", Errorf(ErrBadAction, "clock %s: want pause, resume, slow N or advance DURATION", s)
}

func (a Action) clockString() string {
	switch a.Clock {
	case ClockSlow:
		return fmt.Sprintf(" slow %d", a.Slow)
	case ClockAdvance:
		return " advance " + (time.Duration(a.AdvanceMs) * time.Millisecond).String()
	case ClockShow:
		return ""
	}
	return " " + string(a.Clock)
}

func (p *Playground) doClock(a Action) (Result, error) {
	c := p.engine.Clock()
	if c == nil {
		return Result{}, Errorf(ErrBadAction, "this engine has no cluster clock")
	}
	if !a.Node.IsZero() || !a.Peer.IsZero() || a.Topic != "" ||
		(a.Clock != ClockSlow && a.Slow != 0) || (a.Clock != ClockAdvance && a.AdvanceMs != 0) {
		return Result{}, Errorf(ErrBadAction, "clock takes pause, resume, slow N or advance DURATION only")
	}
	var did string
	switch a.Clock {
	case ClockShow:
		return Result{Message: describeClock(c.State())}, nil
	case ClockPause:
		if !c.Pause() {
			return Result{Message: "the cluster clock was paused already: " + describeClock(c.State())}, nil
		}
		did = "paused the cluster clock"
	case ClockResume:
		if !c.Resume() {
			return Result{Message: "the cluster clock was running already: " + describeClock(c.State())}, nil
		}
		did = "resumed the cluster clock"
	case ClockSlow:
		if err := c.SetSlow(a.Slow); err != nil {
			return Result{}, Errorf(ErrBadAction, "clock slow: %v", err)
		}
		did = fmt.Sprintf("set the cluster clock to slow motion ×%d", a.Slow)
		if a.Slow == 1 {
			did = "set the cluster clock to normal speed"
		}
	case ClockAdvance:
		d := time.Duration(a.AdvanceMs) * time.Millisecond
		if d <= 0 {
			return Result{}, Errorf(ErrBadAction, "clock advance takes a positive duration, not %v", d)
		}
		if err := c.Advance(d); err != nil {
			return Result{}, Errorf(ErrBadAction, "clock advance works only while the clock is paused (clock pause first)")
		}
		did = fmt.Sprintf("advanced the cluster clock by %v", d)
	default:
		return Result{}, Errorf(ErrBadAction, "unknown clock action %q", a.Clock)
	}
	msg := did + ": " + describeClock(c.State())
	p.publish(EventClock, 0, msg)
	return Result{Message: msg}, nil
}

// describeClock says how the clock stands, in one line.
func describeClock(s clock.State) string {
	at := fmt.Sprintf("cluster time %s", s.Now.Format("15:04:05.000"))
	if lag := s.Lag().Round(time.Millisecond); lag > 0 {
		at += fmt.Sprintf(", %v behind the wall", lag)
	} else if lag < 0 {
		at += fmt.Sprintf(", %v ahead of the wall", -lag)
	}
	switch {
	case s.Paused:
		return fmt.Sprintf("paused since %s (for %v), %s", s.Since.Format("15:04:05.000"), s.Wall.Sub(s.Since).Round(time.Millisecond), at)
	case s.Slow > 1:
		return fmt.Sprintf("slow ×%d (cluster time passes at 1/%d of wall speed), %s", s.Slow, s.Slow, at)
	}
	return "running, " + at
}
