package tui

import (
	"fmt"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/kraftlab/kraftlab/cluster"
)

// eventUI marks an entry the screen wrote itself, for an action that never
// reached the playground (so its event stream does not have it).
const eventUI cluster.EventKind = "ui"

// maxLogEntries bounds the event log the screen keeps.
const maxLogEntries = 2000

// eventsModel is the scrollable event log.
type eventsModel struct {
	entries []cluster.Event
	// scroll is how many of the newest entries are below the panel; 0
	// follows the newest.
	scroll int
}

// add appends entries, keeping a scrolled-back panel where it was.
func (e *eventsModel) add(evs ...cluster.Event) {
	e.entries = append(e.entries, evs...)
	if e.scroll > 0 {
		e.scroll += len(evs)
	}
	if over := len(e.entries) - maxLogEntries; over > 0 {
		e.entries = append(e.entries[:0:0], e.entries[over:]...)
	}
	e.scroll = min(e.scroll, max(len(e.entries)-1, 0))
}

// scrollBy moves the panel n entries back in time (negative: forward).
func (e *eventsModel) scrollBy(n int) {
	e.scroll = min(max(e.scroll+n, 0), max(len(e.entries)-1, 0))
}

// view renders the log in w cells and at most h lines, the newest last.
func (e eventsModel) view(st *Styles, w, h int) block {
	title := "Events"
	if e.scroll > 0 {
		title = fmt.Sprintf("Events: %d newer below (end follows)", e.scroll)
	}
	out := block{section(st, title, w)}
	room := h - 1
	if room <= 0 {
		return out
	}
	if len(e.entries) == 0 {
		return append(out, st.Dim.Render(clip("no events yet", w)))
	}
	// The newest entry shown is the selected one ([ and ] move it): it
	// shows whole, wrapped under its message, where the others are cut.
	end := len(e.entries) - e.scroll
	sel := eventLine(st, e.entries[end-1], w >= 100)
	whole := block{sel}
	if room >= 3 && lipgloss.Width(sel) > w {
		msgAt := lipgloss.Width(sel) - lipgloss.Width(e.entries[end-1].Message)
		if e.entries[end-1].Kind == cluster.EventSay {
			msgAt -= 2 // "» "
		}
		whole = block(wrapHanging(ansi.Truncate(sel, msgAt, ""), ansi.Strip(sel)[len(ansi.Strip(ansi.Truncate(sel, msgAt, ""))):], w))
		if len(whole) > room-1 {
			whole = append(whole[:room-2], clip(whole[room-2], w))
		}
	}
	start := max(end-1-(room-len(whole)), 0)
	for _, ev := range e.entries[start : end-1] {
		out = append(out, clip(eventLine(st, ev, w >= 100), w))
	}
	return append(out, whole...)
}

// eventLine formats one entry; wide lines add milliseconds, the sequence
// number and the epoch.
func eventLine(st *Styles, ev cluster.Event, wide bool) string {
	who := "-"
	if ev.Node != 0 {
		who = fmt.Sprintf("node %d", ev.Node)
	}
	kind := st.Event(ev.Kind).Render(fmt.Sprintf("%-18s", ev.Kind))
	msg := ev.Message
	if ev.Kind == cluster.EventSay {
		msg = st.Event(ev.Kind).Render("» " + msg)
	}
	if ev.Inferred {
		// Seen between two polls of a real cluster, not reported.
		msg = st.Dim.Render("≈ ") + msg
	}
	if !wide {
		return fmt.Sprintf("%s %s %-8s %s", ev.Time.Format("15:04:05"), kind, who, msg)
	}
	seq, epoch := "", ""
	if ev.Seq > 0 {
		seq = fmt.Sprintf("#%d", ev.Seq)
	}
	if ev.Epoch > 0 {
		epoch = fmt.Sprintf("e%d", ev.Epoch)
	}
	return fmt.Sprintf("%s %6s %s %-8s %-4s %s", ev.Time.Format("15:04:05.000"), seq, kind, who, epoch, msg)
}
