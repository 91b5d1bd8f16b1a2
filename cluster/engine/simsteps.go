package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// simStep is one step of a simulated run: an action, or a stretch of
// simulated time (advance > 0). Replaying a branch's steps on a world
// built from the same seed gives the same run.
type simStep struct {
	// action is the step as the history shows it; "" for a stretch of
	// time. replay is the scenario line that takes the step again.
	action, replay string
	// do applies the action.
	do func(*simWorld) error
	// advance is the stretch of time, which grows while time runs on
	// between two actions, and why (a format for it: wait COND: ran %v).
	advance time.Duration
	why     string
	// at is when the step began, since the run started.
	at time.Duration
	// baseline is the playground's baseline after the step.
	baseline *view.Baseline
}

func (st *simStep) text() string {
	if st.action != "" {
		return st.action
	}
	return fmt.Sprintf(st.why, st.advance)
}

// replayLine is the scenario line that takes the step again: a stretch
// of time, whatever ran it (a wait, a running clock), is as long again.
func (st *simStep) replayLine() string {
	if st.action != "" {
		return st.replay
	}
	return "clock advance " + st.advance.String()
}

func (st *simStep) run(w *simWorld) error {
	if st.action != "" {
		return st.do(w)
	}
	return w.runFor(st.advance)
}

// simBranch is one line of the run's history: its steps from the start,
// those it shares with its parent included.
type simBranch struct {
	id, parent, fork int
	steps            []*simStep
}

// history is the tree of branches.
type history struct {
	branches []*simBranch
	// cur is the branch the run is on.
	cur *simBranch
}

func newHistory() *history {
	b := &simBranch{id: 1}
	return &history{branches: []*simBranch{b}, cur: b}
}

// branch returns branch id, the current one for 0.
func (h *history) branch(id int) (*simBranch, error) {
	if id == 0 {
		return h.cur, nil
	}
	if id < 1 || id > len(h.branches) {
		return nil, fmt.Errorf("no branch %d: the run has branches 1 to %d (kraftlab history)", id, len(h.branches))
	}
	return h.branches[id-1], nil
}

// add appends a step taken at step applied of the current branch: at its
// tip it extends the branch, else it starts a new branch there.
func (h *history) add(st *simStep, applied int) {
	if applied < len(h.cur.steps) {
		b := &simBranch{id: len(h.branches) + 1, parent: h.cur.id, fork: applied, steps: slices.Clone(h.cur.steps[:applied])}
		h.branches = append(h.branches, b)
		h.cur = b
	}
	h.cur.steps = append(h.cur.steps, st)
}

// view is the history as the views show it.
func (h *history) view(seed uint64, applied int) *view.Sim {
	v := &view.Sim{Seed: seed, Branch: h.cur.id, Step: applied}
	for _, b := range h.branches {
		vb := view.SimBranch{ID: b.id, Parent: b.parent, Fork: b.fork, Steps: []view.SimStep{}}
		for _, st := range b.steps {
			vb.Steps = append(vb.Steps, view.SimStep{Action: st.text(), Replay: st.replayLine(), AtMs: st.at.Milliseconds()})
		}
		v.Branches = append(v.Branches, vb)
	}
	return v
}

// extend adds d to the stretch of time at the current branch's tip, if
// more is true and the tip is one, or else adds a stretch of d that
// begins at at, for why; it reports which.
func (h *history) extend(d, at time.Duration, applied int, why string, more bool) (merged bool) {
	n := len(h.cur.steps)
	if more && applied == n && n > 0 && h.cur.steps[n-1].action == "" {
		// A fresh step, not the old one grown: the old may be another
		// branch's too.
		last := h.cur.steps[n-1]
		h.cur.steps[n-1] = &simStep{advance: last.advance + d, at: last.at, why: last.why, baseline: last.baseline}
		return true
	}
	var baseline *view.Baseline
	if applied > 0 {
		baseline = h.cur.steps[applied-1].baseline
	}
	h.add(&simStep{advance: d, at: at, why: why, baseline: baseline}, applied)
	return false
}
