package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// sliderCells is the widest a simulated run's slider draws; a longer
// branch is drawn to scale.
const sliderCells = 16

// simSlider draws where a simulated run stands on its branch: the steps
// taken (━), the step it stands at (◆), the steps a rewind left after it
// (─), then the step, the branch and its parent.
func simSlider(s *view.Sim) string {
	var b view.SimBranch
	for _, br := range s.Branches {
		if br.ID == s.Branch {
			b = br
		}
	}
	n := len(b.Steps)
	cells := min(n, sliderCells)
	at := s.Step
	if n > sliderCells {
		at = s.Step * sliderCells / n
	}
	line := "├" + strings.Repeat("━", at) + "◆" + strings.Repeat("─", cells-at) + "┤"
	where := fmt.Sprintf(" step %d/%d, branch %d", s.Step, n, s.Branch)
	if b.Parent > 0 {
		where += fmt.Sprintf(" (left %d at %d)", b.Parent, b.Fork)
	}
	return line + where
}

// historyView renders a simulated run's branch in the held messages'
// place (a simulated network holds none): its steps with their simulated
// times, the one the run stands at marked, those a rewind left after it
// dim, as many as h lines hold around the mark.
func historyView(st *Styles, s *view.Sim, w, h int) block {
	var b view.SimBranch
	for _, br := range s.Branches {
		if br.ID == s.Branch {
			b = br
		}
	}
	title := fmt.Sprintf("History: seed %d, branch %d", s.Seed, b.ID)
	if b.Parent > 0 {
		title += fmt.Sprintf(", left branch %d at step %d", b.Parent, b.Fork)
	}
	out := block{section(st, title, w)}
	if h < 2 {
		return out
	}
	out = append(out, st.Dim.Render(clip(", rewinds a step · . steps forward (at the end: runs time) · :rewind N · :history", w)))
	rows := h - len(out)
	if rows <= 0 {
		return out
	}
	// Step 0 is the start; the rows show steps first..first+rows-1,
	// with the run's step in sight.
	first := max(0, min(s.Step-rows/2, len(b.Steps)+1-rows))
	for n := first; n < first+rows && n <= len(b.Steps); n++ {
		at, what := "0s", "the cluster started"
		if n > 0 {
			at, what = fmtSimMs(b.Steps[n-1].AtMs), b.Steps[n-1].Action
		}
		line := fmt.Sprintf("  %4d %9s  %s", n, at, what)
		switch {
		case n == s.Step:
			out = append(out, st.Value.Render(clip("▶"+line[1:], w)))
		case n > s.Step:
			out = append(out, st.Dim.Render(clip(line, w)))
		default:
			out = append(out, clip(line, w))
		}
	}
	return out
}

// fmtSimMs spells a simulated time since the run started.
func fmtSimMs(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}
