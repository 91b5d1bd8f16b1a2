package cluster

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The actions of a simulated playground (kraftlab up --sim), whose time
// passes only when told and whose run can be rewound.
const (
	// ActRun runs simulated time until the condition Until holds,
	// looking after every SimCheckInterval, for at most AdvanceMs: what
	// wait does under --sim.
	ActRun ActionKind = "run"
	// ActRewind replays the run from its seed up to step Step of branch
	// Branch (0: the current one).
	ActRewind ActionKind = "rewind"
	// ActHistory returns the current branch's event log (Result.Log).
	ActHistory ActionKind = "history"
)

// EventRewind: a simulated run was replayed from its seed to an earlier
// (or later) step of one of its branches.
const EventRewind EventKind = "rewind"

// EventSimStep is a simulated run's log line for one of its steps; the
// playground's stream has the action's own event instead.
const EventSimStep EventKind = "sim-step"

// SimCheckInterval is how much simulated time passes between two looks
// of a run at its condition: the run stops at most this late.
const SimCheckInterval = 10 * time.Millisecond

// MaxSimRun bounds how much simulated time one run or clock advance may
// take.
const MaxSimRun = time.Hour

// Simulator is an engine whose cluster runs under the seeded simulator.
// Every change it makes is a step of its history: an action, or a
// stretch of simulated time; the run is a function of its seed and its
// steps, so replaying them gives the same run.
type Simulator interface {
	// Now is the simulated time.
	Now() time.Time
	// Advance runs d of simulated time.
	Advance(d time.Duration) error
	// RunUntil runs simulated time until held reports true, asking it
	// after every SimCheckInterval, for at most limit; it returns how
	// much time it ran and whether held did. what names the condition
	// in the history. held runs without the engine's lock: it may read
	// View.
	RunUntil(what string, held func() bool, limit time.Duration) (ran time.Duration, ok bool, err error)
	// Pause and Resume stop and start simulated time passing at wall
	// speed (divided by SetSlow's factor) between the actions; they
	// report false if it already was so.
	Pause() bool
	Resume() bool
	SetSlow(n int) error
	// Rewind replays the run from its seed to step step of branch branch
	// (0: the current branch) and says what it did; baseline is the
	// playground's baseline as it stood after that step.
	Rewind(branch, step int) (msg string, baseline *view.Baseline, err error)
	// Position is where the run stands: its branch, the steps of it
	// applied, and the steps the branch has.
	Position() (branch, step, steps int)
	// NameStep names the scenario line that takes the step the last
	// action took again, with its node references resolved; "" keeps
	// the engine's own.
	NameStep(line string)
	// KeepBaseline notes the playground's baseline as it stands after the
	// latest step, for Rewind to give back.
	KeepBaseline(b *view.Baseline)
	// Log is the current branch's event log up to where the run stands:
	// each step as it was taken and what the engine reported in it.
	Log() []Event
}

// ErrNotSimulated: the action needs a simulated playground.
var ErrNotSimulated = errors.New("not a simulated playground")

func (p *Playground) simulator() (Simulator, error) {
	s, ok := p.engine.(Simulator)
	if !ok {
		return nil, Errorf(ErrNotSimulated, "this playground is not simulated: start one with kraftlab up --sim --seed N")
	}
	return s, nil
}

// doRun runs simulated time until a.Until holds or a.AdvanceMs passes.
func (p *Playground) doRun(a Action) (Result, error) {
	s, err := p.simulator()
	if err != nil {
		return Result{}, err
	}
	cond, err := condition.Parse(a.Until)
	if err != nil {
		return Result{}, Errorf(ErrBadAction, "run: %v", err)
	}
	limit := ms(a.AdvanceMs)
	if limit <= 0 || limit > MaxSimRun {
		return Result{}, Errorf(ErrBadAction, "run takes a limit between 1ms and %v, not %v", MaxSimRun, limit)
	}
	var saw string
	held := func() bool {
		v := p.View()
		ok, s, err := cond.Eval(&v)
		saw = s
		if err != nil {
			saw = err.Error()
		}
		return ok && err == nil
	}
	ran, ok, err := s.RunUntil(cond.String(), held, limit)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: saw, Held: ok, RanMs: ran.Milliseconds()}, nil
}

// doRewind replays the run to a step.
func (p *Playground) doRewind(a Action) (Result, error) {
	s, err := p.simulator()
	if err != nil {
		return Result{}, err
	}
	if a.Step < 0 || a.Branch < 0 || (a.By != 0 && (a.Step != 0 || a.Branch != 0)) {
		return Result{}, Errorf(ErrBadAction, "rewind takes a step and a branch of 0 or more, or a number of steps to go by")
	}
	if a.By != 0 {
		_, step, steps := s.Position()
		a.Step = step + a.By
		switch {
		case a.Step < 0:
			return Result{}, Errorf(ErrNodeState, "the run stands at step %d: there are not %d steps before it", step, -a.By)
		case a.Step > steps:
			return Result{}, Errorf(ErrNodeState, "the run stands at step %d of %d: there are not %d steps after it", step, steps, a.By)
		}
	}
	msg, baseline, err := s.Rewind(a.Branch, a.Step)
	if err != nil {
		return Result{}, err
	}
	p.baseline.Store(baseline)
	p.publish(EventRewind, 0, msg)
	return Result{Message: msg}, nil
}

// doHistory returns the current branch's event log.
func (p *Playground) doHistory() (Result, error) {
	s, err := p.simulator()
	if err != nil {
		return Result{}, err
	}
	log := s.Log()
	return Result{Message: fmt.Sprintf("%d entries", len(log)), Log: log}, nil
}

// doSimClock is the clock action of a simulated playground: pause and
// resume stop and start time passing between actions, advance runs it.
func (p *Playground) doSimClock(s Simulator, a Action) (Result, error) {
	var did string
	switch a.Clock {
	case ClockShow:
		return Result{Message: "simulated time " + s.Now().Format("15:04:05.000")}, nil
	case ClockPause:
		if !s.Pause() {
			return Result{Message: "simulated time was paused already"}, nil
		}
		did = "paused simulated time"
	case ClockResume:
		if !s.Resume() {
			return Result{Message: "simulated time was running already"}, nil
		}
		did = "simulated time runs at wall speed"
	case ClockSlow:
		if err := s.SetSlow(a.Slow); err != nil {
			return Result{}, Errorf(ErrBadAction, "clock slow: %v", err)
		}
		did = fmt.Sprintf("simulated time runs at 1/%d of wall speed while it runs", a.Slow)
	case ClockAdvance:
		d := ms(a.AdvanceMs)
		if d <= 0 || d > MaxSimRun {
			return Result{}, Errorf(ErrBadAction, "clock advance takes a duration between 1ms and %v, not %v", MaxSimRun, d)
		}
		if err := s.Advance(d); err != nil {
			return Result{}, err
		}
		did = fmt.Sprintf("ran %v of simulated time", d)
	default:
		return Result{}, Errorf(ErrBadAction, "unknown clock action %q", a.Clock)
	}
	msg := did + ": simulated time " + s.Now().Format("15:04:05.000")
	p.publish(EventClock, 0, msg)
	return Result{Message: msg}, nil
}

// replayLine is the scenario line that takes a's step again in a replay
// of the run: a's own, its node references resolved to the IDs the
// action found (a replay may not have the same baseline for old-leader);
// "" where the engine's own line says it (a node action names its node).
func replayLine(a Action, res Result) string {
	switch a.Kind {
	case ActPartition, ActLink, ActHeal, ActIsolate:
		if len(res.Nodes) > 0 {
			a.Node = condition.NodeID(res.Nodes[0])
		}
		if len(res.Nodes) > 1 {
			a.Peer = condition.NodeID(res.Nodes[1])
		}
		return a.String()
	}
	return ""
}
