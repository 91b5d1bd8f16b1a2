package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster"
)

// How the lesson panel draws: a band of a fixed height (lessonHeight),
// its title on top and what the keys do now at its foot; between them a
// window on the section's text — the explanation, then the question, the
// verdict with its evidence, the lesson's words and the latest result —
// that { and } scroll. The band never changes height from step to step,
// so the panels above it stay put while the learner reads.

// lessonHeight is the band's height on a screen h lines high: three
// tenths of it, at least 7 (a question's three choices with its
// explanation, the title and the prompt) and at most 12, which a section
// of the shipped lessons fills; at 80x24, 7 lines, which leave the quorum
// table, the panel a step points at and the output pane their room.
func lessonHeight(h int) int { return min(max(h*3/10, 7), 12) }

// wrapHanging wraps text to w cells after prefix, the lines after the
// first indented to line up under the text.
func wrapHanging(prefix, text string, w int) []string {
	pw := lipgloss.Width(prefix)
	lines := wrapWords(text, max(w-pw, 1))
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", pw) + lines[i]
		}
	}
	if len(lines) == 0 {
		lines = []string{prefix}
	}
	return lines
}

// view renders the panel in exactly h lines of at most w cells: the
// title, the window on the section's text, and last what the keys do
// now, with how much of the text is out of the window.
func (m lessonModel) view(st *Styles, w, h int) block {
	title := "Lesson"
	if m.step > 0 && m.steps > 0 {
		title = fmt.Sprintf("Lesson · step %d of %d", min(m.step, m.steps), m.steps)
	}
	if m.title != "" {
		title += " · " + m.title
	}
	out := block{section(st, title, w)}
	room := h - 2
	if room <= 0 {
		return append(out, m.prompt(st, w, hidden{}))[:max(h, 0)]
	}
	lines, anchor := m.content(st, w)
	window, cut := m.window(lines, anchor, room)
	out = append(out, window...)
	for len(out) < h-1 {
		out = append(out, "")
	}
	out = append(out, m.prompt(st, w, cut))
	for i, l := range out {
		out[i] = clip(l, w)
	}
	return out
}

// content is the section's whole text at width w: the explanation, the
// question, the verdict with its evidence, the lesson's words, and the
// latest result; anchor is the line a pinned window starts at, the
// verdict's or else the question's first.
func (m lessonModel) content(st *Styles, w int) (lines block, anchor int) {
	fixed, ran := m.parts(st, w)
	lines = block(m.explanation(w))
	anchor = len(lines)
	if m.verdict != nil && m.ask != nil {
		anchor += len(wrapHanging("? ", m.ask.text, w))
	}
	lines = append(lines, fixed...)
	return append(lines, ran...), anchor
}

// top is the window's first line over n lines of text in room lines.
func (m lessonModel) top(n, anchor, room int) int {
	switch {
	case n <= room:
		return 0
	case m.pinned:
		// From the anchor, unless that leaves the window part empty:
		// then the end fills it.
		return max(min(anchor, n-room), 0)
	}
	return min(m.scroll, n-room)
}

// window shows room lines of lines from the scroll position (the anchor
// when pinned); it says how many lines are hidden above and below, which
// the prompt line tells, so that no line of the band goes to a marker.
func (m lessonModel) window(lines block, anchor, room int) (block, hidden) {
	n := len(lines)
	if n <= room {
		return lines, hidden{}
	}
	top := m.top(n, anchor, room)
	return lines[top : top+room], hidden{above: top, below: n - top - room}
}

// hidden counts the lines of the section's text out of the window.
type hidden struct{ above, below int }

// parts are the panel's lines under the explanation at width w: the
// question, the verdict with its evidence and the lesson's words (fixed),
// and the latest result (ran), which gives way to the explanation.
func (m lessonModel) parts(st *Styles, w int) (fixed, ran block) {
	if q := m.ask; q != nil {
		for _, l := range wrapHanging("? ", q.text, w) {
			fixed = append(fixed, st.Question.Render(l))
		}
		if m.verdict == nil {
			for i, c := range q.choices {
				mark := "  "
				if q.got == i+1 {
					mark = "▶ "
				}
				for _, l := range wrapHanging(fmt.Sprintf("%s%d) ", mark, i+1), c, w) {
					if q.got == i+1 {
						l = st.Value.Render(l)
					}
					fixed = append(fixed, l)
				}
			}
		}
	}
	if v := m.verdict; v != nil {
		var text string
		style := st.OK
		switch {
		case v.got == 0:
			text, style = "= the answer was "+v.right, st.Value
		case v.got == v.answer:
			text = "✔ your prediction held: " + v.right
		default:
			text, style = fmt.Sprintf("✘ it did not: you said %d) %s; what happened is %s", v.got, v.said, v.right), st.Warn
		}
		for _, l := range wrapHanging("", text, w) {
			fixed = append(fixed, style.Render(l))
		}
		var look []string
		for _, line := range v.evidence {
			r, ok := m.result(line)
			if !ok {
				continue
			}
			see := fmt.Sprintf("line %d, %s", r.line, r.text)
			if r.firstOut != "" && r.outLines == 1 {
				see += ": " + r.firstOut
			}
			for _, l := range wrapHanging("  see ", see, w) {
				fixed = append(fixed, st.Dim.Render(l))
			}
			if where, _ := onScreen(r.text, r.firstOut); where != "" && !slices.Contains(look, where) {
				look = append(look, where)
			}
		}
		if len(look) > 0 {
			for _, l := range wrapHanging("  on screen: ", strings.Join(look, "; "), w) {
				fixed = append(fixed, st.Value.Render(l))
			}
		}
	}
	for _, s := range m.said {
		for _, l := range wrapHanging("", s, w) {
			fixed = append(fixed, st.Event(cluster.EventSay).Render(l))
		}
	}
	if r := m.last; r != nil && m.verdict == nil {
		ran = block{m.resultLine(st, *r, w)}
	}
	return fixed, ran
}

// explanation is the current explanation, wrapped to w cells.
func (m lessonModel) explanation(w int) []string {
	var lines []string
	for _, c := range m.explain {
		if strings.TrimSpace(c) == "" {
			lines = append(lines, "")
			continue
		}
		// Keep the comment's own indentation: lessons indent their lists.
		ind := len(c) - len(strings.TrimLeft(c, " "))
		lines = append(lines, wrapHanging(strings.Repeat(" ", ind), strings.TrimSpace(c), w)...)
	}
	return lines
}

// resultLine is a line's result in one line.
func (m lessonModel) resultLine(st *Styles, r lessonResult, w int) string {
	switch {
	case !r.ok:
		return st.Err.Render(clip(fmt.Sprintf("✘ line %d, %s, failed: %s", r.line, r.text, r.err), w))
	case r.outLines == 1:
		return st.Dim.Render(clip(fmt.Sprintf("ran line %d, %s: %s", r.line, r.text, r.firstOut), w))
	case r.outLines > 1:
		return st.Dim.Render(clip(fmt.Sprintf("ran line %d, %s: %d lines, in the Output pane", r.line, r.text, r.outLines), w))
	}
	return st.Dim.Render(clip(fmt.Sprintf("ran line %d, %s", r.line, r.text), w))
}

// prompt is the panel's last line: what the lesson does now, and the key
// that goes on.
func (m lessonModel) prompt(st *Styles, w int, cut hidden) string {
	k := st.Help.ShortKey.Render
	var line string
	switch m.phase {
	case lessonStarting:
		line = st.Dim.Render("the lesson is starting…")
	case lessonRunning:
		if m.nextAsk {
			line = st.Dim.Render("the question…")
		} else {
			line = st.Warn.Render(fmt.Sprintf("running line %d: %s…", m.next, m.nextCmd))
		}
	case lessonWaitEnter:
		line = k("enter") + " runs line " + fmt.Sprint(m.next) + ": " + st.Value.Render(m.nextCmd)
	case lessonWaitChoice:
		n := 0
		if m.ask != nil {
			n = len(m.ask.choices)
		}
		line = k(fmt.Sprintf("1-%d", n)) + " your prediction (a number)"
	case lessonOver:
		if m.end.passed {
			line = st.OK.Render("the lesson is over: "+m.end.summary) + "  " + k("q") + " quits"
		} else {
			line = st.Err.Render("the lesson stopped: "+m.end.summary) + "  " + k("q") + " quits"
		}
	}
	// How much of the text is out of the window, and the key that shows
	// it: after the line where it fits, else first, so that a long line
	// to run never pushes it off.
	var more []string
	if cut.above > 0 {
		more = append(more, fmt.Sprintf("{ %d more above", cut.above))
	}
	if cut.below > 0 {
		more = append(more, fmt.Sprintf("} %d more below", cut.below))
	}
	if len(more) > 0 {
		hint := st.Dim.Render(strings.Join(more, ", "))
		switch {
		case lipgloss.Width(line)+3+lipgloss.Width(hint) <= w || m.phase == lessonOver:
			line += "   " + hint // how the lesson ended comes first
		default:
			line = hint + st.Dim.Render(" · ") + line
		}
	}
	return clip(line, w)
}
