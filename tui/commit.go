package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// commitModel is the picture of commit: every voter's log as a bar on one
// scale, as the leader knows it from their fetches, with the high
// watermark where the majority stands, so it shows which replica holds the
// high watermark back.
type commitModel struct{}

// commitBar is one voter on the picture.
type commitBar struct {
	id    int32
	label string // role, or state when not running
	role  bool   // label is a role
	pos   int64  // log end offset as the leader last saw it; -1 unknown
}

// view renders the picture in w cells and at most h lines.
func (commitModel) view(st *Styles, v *view.View, w, h int) block {
	var bars []commitBar
	var hwm, leaderLEO int64 = -1, -1
	var title string
	if l, ok := v.Leader(); ok {
		leaderLEO, hwm = l.LogEndOffset, v.HighWatermark
		for _, r := range v.CurrentVoters {
			bars = append(bars, voterBar(v, r.NodeID, r.LogEndOffset))
		}
		majority := len(v.CurrentVoters)/2 + 1
		if hwm >= 0 {
			title = fmt.Sprintf("Commit: HWM %d is where a majority (%d of %d) stands", hwm, majority, len(v.CurrentVoters))
		} else {
			title = fmt.Sprintf("Commit: leader %d has not committed in epoch %d yet", l.ID, l.Epoch)
		}
	} else {
		title = "Commit: no leader, nothing commits until an election ends"
		all, running := 0, 0
		for _, n := range v.Nodes {
			if n.Kind == view.KindController {
				bars = append(bars, voterBar(v, n.ID, n.LogEndOffset))
				all++
				if n.State == view.StateRunning {
					running++
				}
			}
		}
		if running < all/2+1 {
			title = fmt.Sprintf("Commit: no leader, and nothing commits: %d of %d voters running, no majority", running, all)
		}
	}
	out := block{section(st, title, w)}
	if len(bars) == 0 || h < 2 {
		return out
	}

	// holder is the voter whose position is the majority's edge: the
	// high watermark moves only when it (or one below it) fetches more.
	positions := make([]int64, len(bars))
	for i, b := range bars {
		positions[i] = b.pos
	}
	slices.Sort(positions)
	edge := positions[len(positions)-len(positions)/2-1]
	holder := int32(-1)
	if leaderLEO >= 0 && edge >= 0 && edge < leaderLEO {
		for _, b := range bars {
			if b.pos == edge {
				holder = b.id
				break
			}
		}
	}

	const labelW, tailW = 17, 24
	barW := w - labelW - tailW - 1
	if barW < 4 {
		barW = max(w-labelW-1, 1)
	}
	lo, hi := int64(-1), int64(-1)
	for _, p := range append(positions, hwm) {
		if p < 0 {
			continue
		}
		if lo < 0 || p < lo {
			lo = p
		}
		hi = max(hi, p)
	}
	// One cell per record while the spread is small, so a lag of one
	// record shows; proportional when it is larger.
	span := max(hi-lo, int64(barW))
	lo = hi - span
	x := func(p int64) int { return int((p - lo) * int64(barW) / span) }

	shown, hidden := bars, []int32(nil)
	if len(bars) > h-1 {
		// No room for every voter: a line names those left out, and the
		// one holding the HWM back stays in sight.
		n := max(h-2, 0)
		if i := slices.IndexFunc(bars, func(b commitBar) bool { return b.id == holder }); i >= n && n > 0 {
			bars = slices.Clone(bars)
			bars[n-1], bars[i] = bars[i], bars[n-1]
		}
		shown = bars[:n]
		for _, b := range bars[n:] {
			hidden = append(hidden, b.id)
		}
		slices.Sort(hidden)
	}
	marker := hwm >= 0 && h-1 > len(bars)
	for _, b := range shown {
		filled := 0
		if b.pos >= 0 {
			filled = x(b.pos)
		}
		mark := -1
		if hwm >= 0 {
			mark = x(hwm)
		}
		bar := drawBar(st, barW, filled, mark)
		style := st.State(view.State(b.label))
		if b.role {
			style = st.Role(view.Role(b.label))
		}
		label := fmt.Sprintf("%4d %s", b.id, style.Render(fit(b.label, 11)))
		note := ""
		switch {
		case b.pos < 0:
			note = "not heard from"
		case b.id == holder:
			note = st.Warn.Render("← holds the HWM")
		case leaderLEO >= 0 && b.pos >= leaderLEO:
			note = "caught up"
		case hwm >= 0 && b.pos < hwm:
			note = st.Dim.Render("behind the HWM")
		}
		line := fit(label, labelW) + bar + " " + fitLeft(offset(b.pos), 7) + " " + note
		out = append(out, clip(line, w))
	}
	if len(hidden) > 0 {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("   +%d more: voter %s (a taller window shows every voter)", len(hidden), ids(hidden)), w)))
	}
	if marker {
		pad := labelW + x(hwm)
		text := fmt.Sprintf("▲ HWM %d", hwm)
		if pad+cellWidth(text) > w {
			pad = max(w-cellWidth(text), 0)
		}
		line := strings.Repeat(" ", pad) + st.BarHWM.Render(text)
		if scale := fmt.Sprintf("   (scale %d..%d)", max(lo, 0), hi); pad+cellWidth(text)+len(scale) <= w {
			line += st.Dim.Render(scale)
		}
		out = append(out, line)
	}
	return out
}

// voterBar describes a voter at position pos.
func voterBar(v *view.View, id int32, pos int64) commitBar {
	b := commitBar{id: id, pos: pos, label: "-"}
	if n, ok := v.Node(id); ok {
		if n.Live() && n.Role != "" {
			b.label, b.role = string(n.Role), true
		} else {
			b.label = string(n.State)
		}
	}
	return b
}

// drawBar draws a bar of width+1 cells: filled cells, then empty ones up
// to width, with the high watermark marker at cell mark (none if mark is
// negative). Each run of cells is styled once: a bar is drawn ten times a
// second.
func drawBar(st *Styles, width, filled, mark int) string {
	var b strings.Builder
	run := func(from, to int) {
		if f := min(to, filled); f > from {
			b.WriteString(st.BarFilled.Render(strings.Repeat("█", f-from)))
			from = f
		}
		if e := min(to, width); e > from {
			b.WriteString(st.BarBehind.Render(strings.Repeat("░", e-from)))
			from = e
		}
		if to > from {
			b.WriteString(strings.Repeat(" ", to-from))
		}
	}
	if mark < 0 || mark > width {
		run(0, width+1)
		return b.String()
	}
	run(0, mark)
	b.WriteString(st.BarHWM.Render("│"))
	run(mark+1, width+1)
	return b.String()
}
