package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The Messages pane draws the last messages between nodes as a
// space-time diagram. It is a data pane, in the brokers' place, so that
// it sits beside the message flow, or, while the clock is paused, beside
// the queue of held messages: a learner steps a message in the queue and
// sees its arrow complete in the diagram. b reaches it in the cycle of
// data panes; m shows it at once, and again goes back to the pane it
// took the place of.

// toggleDiagram answers the diagram key: it shows the Messages pane, or
// the pane it took the place of when it shows already. On a small screen
// that shows another panel, it first brings the pane to the front.
func (m *Model) toggleDiagram() {
	if m.togglePane(paneMessages) {
		m.status.set(levelInfo, fmt.Sprintf("showing %s; m shows the messages", lowerFirst(m.pane.String())))
		return
	}
	m.status.set(levelInfo, "showing the last messages between nodes, oldest first; m goes back to "+lowerFirst(m.paneBefore.String()))
}

// Geometry of the diagram: a node's column is at least diagramMinCol
// cells wide and at most diagramMaxCol; the labels keep diagramMinLabel.
const (
	diagramMinCol   = 4
	diagramMaxCol   = 8
	diagramMinLabel = 34
)

// diagramNodes are the diagram's columns: the view's nodes, then any
// other a message names.
func diagramNodes(v *view.View) []int32 {
	var ids []int32
	known := map[int32]bool{}
	add := func(id int32) {
		if !known[id] {
			known[id] = true
			ids = append(ids, id)
		}
	}
	for _, n := range v.Nodes {
		add(n.ID)
	}
	for _, t := range v.Trace {
		add(t.From)
		add(t.To)
	}
	return ids
}

// diagramView renders the view's last messages as a space-time (Lamport)
// diagram in w cells and at most h lines: a column per node, a row per
// message in the order they were sent, the oldest at the top, each an
// arrow from its sender's column to its receiver's and a short label. A
// message its link holds is dotted and stops half way (▷), one dropped
// or lost ends in ✕.
func diagramView(st *Styles, v *view.View, w, h int) block {
	out := block{paneSection(st, "Messages, oldest first: ─▶ delivered, ┄▷ held at its link", paneMessages, w)}
	if h < 2 {
		return out
	}
	if len(v.Trace) == 0 {
		return append(out, st.Dim.Render(clip("no message has crossed the links yet", w)))
	}
	ids := diagramNodes(v)
	col := min(max((w-diagramMinLabel)/len(ids), diagramMinCol), diagramMaxCol)
	pos := map[int32]int{}
	for i, id := range ids {
		pos[id] = i*col + col/2
	}
	width := pos[ids[len(ids)-1]] + 1

	head := []rune(strings.Repeat(" ", width+diagramMaxCol))
	for _, id := range ids {
		s := strconv.Itoa(int(id))
		at := max(pos[id]-(len(s)-1)/2, 0)
		copy(head[at:], []rune(s))
	}
	out = append(out, clip(st.Label.Render(strings.TrimRight(string(head), " ")), w))

	rows := v.Trace
	if room := h - len(out); len(rows) > room {
		rows = rows[len(rows)-room:]
	}
	for _, t := range rows {
		out = append(out, clip(diagramRow(st, t, pos, width), w))
	}
	return out
}

// diagramRow is one message's row: every lifeline, the message's arrow
// over them, and its label.
func diagramRow(st *Styles, t view.TraceMessage, pos map[int32]int, width int) string {
	cells := []rune(strings.Repeat(" ", width))
	for _, p := range pos {
		cells[p] = '│'
	}
	a, b := pos[t.From], pos[t.To]
	dir := 1
	if b < a {
		dir = -1
	}
	line, head, end := '─', '▶', b-dir
	if dir < 0 {
		head = '◀'
	}
	label := t.Title()
	switch t.State {
	case view.TraceInFlight:
		line, head, end = '┄', '▷', a+(b-a)/2
		if dir < 0 {
			head = '◁'
		}
		label += " held"
		if t.HeldID != 0 {
			label += fmt.Sprintf(" #%d", t.HeldID)
		}
	case view.TraceDropped, view.TraceCut:
		head, end = '✕', a+(b-a)/2
		if t.State == view.TraceCut {
			line = '┄'
		}
		label += " " + string(t.State)
	case view.TraceLost:
		head, end = '✕', a+(b-a)/4
		label += " lost"
	}
	if t.State != view.TraceDelivered {
		// Short of the receiver, and not on a lifeline it never reached.
		for cells[end] == '│' && end != a+dir {
			end -= dir
		}
	}
	if (end-a)*dir < 1 {
		end = a + dir // a message between neighbours still leaves its sender
	}
	cells[a] = '├'
	if dir < 0 {
		cells[a] = '┤'
	}
	for x := a + dir; x != end; x += dir {
		cells[x] = line
	}
	cells[end] = head
	lo, hi := min(a, end), max(a, end)
	style := diagramStyle(st, t)
	return st.Dim.Render(string(cells[:lo])) + style.Render(string(cells[lo:hi+1])) +
		st.Dim.Render(string(cells[hi+1:])) + " " + style.Render(label)
}

// diagramStyle is the colour of a message: a request's, a response's, or
// its fate's.
func diagramStyle(st *Styles, t view.TraceMessage) lipgloss.Style {
	switch t.State {
	case view.TraceInFlight:
		return st.Warn
	case view.TraceDropped, view.TraceLost:
		return st.Err
	case view.TraceCut:
		return st.Dim
	}
	if t.Direction == view.MessageResponse {
		return st.Response
	}
	return st.Request
}
