package tui

import (
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// linksModel is the link table: which directed links are down, delayed or
// lossy, and how many messages their faults dropped.
type linksModel struct{}

// linkRow is one faulty link, or both directions of a pair when they
// have the same fault.
type linkRow struct {
	from, to int32
	both     bool
	// isolated stands for every link to and from from.
	isolated bool
	fault    view.LinkFault
	dropped  int64
}

// linkRows lists the faulty links, and what healthy links have lost:
// while they were faulty, or to drop (the queue's D), which loses a held
// message as a lossy link does.
func linkRows(v *view.View) (rows []linkRow, healedDropped int64) {
	isolated := map[int32]*linkRow{}
	for _, n := range v.Nodes {
		if n.State == view.StateIsolated {
			rows = append(rows, linkRow{from: n.ID, isolated: true, fault: view.LinkFault{Down: true}})
		}
	}
	for i := range rows {
		isolated[rows[i].from] = &rows[i]
	}
	seen := map[[2]int32]bool{}
	for _, l := range v.Links {
		if l.Fault() == (view.LinkFault{}) {
			healedDropped += l.Dropped
			continue
		}
		if r := isolated[l.From]; r != nil && l.Down {
			r.dropped += l.Dropped
			continue
		}
		if r := isolated[l.To]; r != nil && l.Down {
			r.dropped += l.Dropped
			continue
		}
		if seen[[2]int32{l.From, l.To}] {
			continue
		}
		r := linkRow{from: l.From, to: l.To, fault: l.Fault(), dropped: l.Dropped}
		if back := v.Link(l.To, l.From); back.Fault() == r.fault {
			r.both = true
			r.dropped += back.Dropped
			seen[[2]int32{l.To, l.From}] = true
		}
		rows = append(rows, r)
	}
	return rows, healedDropped
}

// describeFault spells a fault out.
func describeFault(f view.LinkFault) string {
	if f.Down {
		return "DOWN"
	}
	var parts []string
	if f.Delay > 0 || f.Jitter > 0 {
		d := "delay " + f.Delay.String()
		if f.Jitter > 0 {
			d += " +0.." + f.Jitter.String()
		}
		parts = append(parts, d)
	}
	if f.Loss > 0 {
		parts = append(parts, fmt.Sprintf("loss %g%%", f.Loss*100))
	}
	if len(parts) == 0 {
		return "healthy"
	}
	return strings.Join(parts, ", ")
}

// view renders the table in w cells and at most h lines.
func (linksModel) view(st *Styles, v *view.View, w, h int) block {
	out := block{section(st, "Links: faults, sender → receiver", w)}
	if h < 2 {
		return out
	}
	if v.Attached != nil {
		return append(out, st.Dim.Render(clip(notOnTheWire("the links' faults"), w)))
	}
	rows, healed := linkRows(v)
	if len(rows) == 0 {
		out = append(out, st.OK.Render(clip("every link is healthy", w)))
	}
	room := h - 1
	if healed > 0 {
		room--
	}
	if len(rows) > room {
		room = max(room-1, 0)
	}
	for _, r := range rows[:min(room, len(rows))] {
		arrow := "→"
		if r.both {
			arrow = "↔"
		}
		fault := st.Warn.Render(describeFault(r.fault))
		if r.fault.Down {
			fault = st.Err.Render(describeFault(r.fault))
		}
		line := fmt.Sprintf("%4d %s %-4d %s", r.from, arrow, r.to, fault)
		if r.isolated {
			line = fmt.Sprintf("%4d ↔ all  %s", r.from, st.Err.Render("DOWN (isolated)"))
		}
		if r.dropped > 0 {
			line += st.Dim.Render(fmt.Sprintf("  dropped %d", r.dropped))
		}
		out = append(out, clip(line, w))
	}
	if hidden := len(rows) - room; hidden > 0 {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more faulty %s", hidden, plural(int64(hidden), "link", "links")), w)))
	}
	if healed > 0 && h > len(out) {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("healthy links lost %d %s (to a fault since healed, or to drop)", healed, plural(healed, "message", "messages")), w)))
	}
	return out
}

// plural picks the word for a count.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
