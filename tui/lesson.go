package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster"
)

// The lesson panel: a band at the bottom of the screen that walks a
// lesson (a scenario run by kraftlab lesson) beside the live panels. It
// shows the explanation above the line about to run, asks the learner to
// predict (a choice's number answers), says whether the prediction held
// and which lines' results show it, and what keys go on. It is fed by
// the Lesson the run talks to; it only draws and answers keys.

// lessonPhase is what the lesson does now, and so what its keys do.
type lessonPhase int

const (
	// lessonStarting: nothing shown yet.
	lessonStarting lessonPhase = iota
	// lessonRunning: a line runs; no key is waited for.
	lessonRunning
	// lessonWaitEnter: Enter runs the next line.
	lessonWaitEnter
	// lessonWaitChoice: a choice's number answers the question.
	lessonWaitChoice
	// lessonOver: the lesson ended; the screen stays until quit.
	lessonOver
)

// lineKind is what kind of scenario line a result is of.
type lineKind int

const (
	lineOther lineKind = iota
	lineAsk            // its output is the prediction, its text the answer
	lineSay            // its output is the lesson's words
)

// lessonMsg is a message of the lesson run to its panel.
type lessonMsg interface{ apply(*lessonModel) }

type (
	lessonHeaderMsg struct{ lines []string }
	lessonNextMsg   struct {
		line    int
		text    string // "" for an ask line
		ask     bool
		comment []string
	}
	lessonAskMsg struct {
		line     int
		question string
		choices  []string
	}
	lessonWantMsg struct{ phase lessonPhase }
	lessonRanMsg  struct {
		line        int
		kind        lineKind
		text        string
		ok          bool
		output, err string
	}
	lessonVerdictMsg struct {
		got, answer int
		right, said string
		evidence    []int
	}
	lessonEndMsg struct {
		passed  bool
		summary string
	}
)

// lessonResult is a line's result, kept to point at it as evidence.
type lessonResult struct {
	line     int
	text     string
	ok       bool
	firstOut string
	outLines int
	err      string
}

// lessonQuestion is the question of the current section.
type lessonQuestion struct {
	text    string
	choices []string
	// got is the learner's choice, from 1; 0 before the answer.
	got int
}

// maxLessonResults bounds the results kept for the evidence of one
// question; a question's evidence is a line or two.
const maxLessonResults = 64

// lessonModel is the lesson panel's state.
type lessonModel struct {
	title string
	steps int
	// step counts the lines announced so far.
	step  int
	phase lessonPhase
	// header is the file's header, shown above the first explanation.
	header []string
	// explain is the comment block of the current section.
	explain []string
	// scroll is how many explanation lines are scrolled off the top.
	scroll int
	// next is the line about to run or running; nextAsk says it is a
	// question.
	next    int
	nextCmd string
	nextAsk bool
	ask     *lessonQuestion
	verdict *lessonVerdictMsg
	// said is the lesson's words since the verdict (its say lines).
	said []string
	// last is the latest line that ran and is neither a say nor an ask.
	last    *lessonResult
	results []lessonResult
	// end is how the lesson ended, once over.
	end *lessonEndMsg
}

func newLessonModel(l *Lesson) lessonModel {
	return lessonModel{title: l.title, steps: l.steps}
}

// The header's first line is the lesson's title, which the panel's title
// shows already.
func (msg lessonHeaderMsg) apply(m *lessonModel) {
	lines := msg.lines
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == m.title {
		lines = lines[1:]
		for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
			lines = lines[1:]
		}
	}
	m.header = lines
}

// A new comment block starts a new section: its question, verdict and
// words replace the last section's.
func (msg lessonNextMsg) apply(m *lessonModel) {
	m.step++
	m.next, m.nextCmd, m.nextAsk = msg.line, msg.text, msg.ask
	m.phase = lessonRunning
	if len(msg.comment) > 0 {
		m.explain = msg.comment
		if m.step == 1 && len(m.header) > 0 {
			m.explain = append(append(append([]string{}, m.header...), ""), msg.comment...)
		}
		m.scroll = 0
		m.ask, m.verdict, m.said, m.last = nil, nil, nil, nil
	} else if m.step == 1 {
		m.explain = m.header
	}
}

func (msg lessonAskMsg) apply(m *lessonModel) {
	m.ask = &lessonQuestion{text: msg.question, choices: msg.choices}
	m.verdict, m.said, m.results = nil, nil, nil
}

func (msg lessonWantMsg) apply(m *lessonModel) {
	if msg.phase == lessonWaitChoice && m.ask == nil {
		return // no question shown: nothing to choose from
	}
	m.phase = msg.phase
}

func (msg lessonRanMsg) apply(m *lessonModel) {
	m.phase = lessonRunning
	switch msg.kind {
	case lineAsk:
		return
	case lineSay:
		if msg.ok {
			m.said = append(m.said, strings.TrimSpace(msg.output))
			if len(m.said) > 3 {
				m.said = m.said[1:]
			}
			return
		}
	}
	r := lessonResult{line: msg.line, text: msg.text, ok: msg.ok, err: firstLine(msg.err)}
	if out := strings.TrimSpace(msg.output); out != "" {
		r.firstOut = firstLine(out)
		r.outLines = strings.Count(out, "\n") + 1
	}
	m.last = &r
	m.results = append(m.results, r)
	if len(m.results) > maxLessonResults {
		m.results = m.results[1:]
	}
}

func (msg lessonVerdictMsg) apply(m *lessonModel) {
	v := msg
	m.verdict = &v
	m.said = nil
}

func (msg lessonEndMsg) apply(m *lessonModel) {
	e := msg
	m.end, m.phase = &e, lessonOver
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// result is the kept result of line, if any.
func (m *lessonModel) result(line int) (lessonResult, bool) {
	for i := len(m.results) - 1; i >= 0; i-- {
		if m.results[i].line == line {
			return m.results[i], true
		}
	}
	return lessonResult{}, false
}

// choose takes a choice's number while the question waits for it.
func (m *lessonModel) choose(n int) bool {
	if m.phase != lessonWaitChoice || m.ask == nil || n < 1 || n > len(m.ask.choices) {
		return false
	}
	m.ask.got = n
	m.phase = lessonRunning
	return true
}

// goOn takes Enter while the next line waits for it.
func (m *lessonModel) goOn() bool {
	if m.phase != lessonWaitEnter {
		return false
	}
	m.phase = lessonRunning
	return true
}

// scrollBy moves the explanation n lines down (negative: up), within its
// lines at width w.
func (m *lessonModel) scrollBy(n, w int) {
	m.scroll = min(max(m.scroll+n, 0), max(len(m.explanation(w))-1, 0))
}

// lessonHeight is the most the panel takes on a screen h lines high: two
// fifths of it, so that at 80x24 a question's verdict, its evidence and
// the lesson's words fit with the quorum table and a panel still on
// screen; at most 12 lines, which a section of the shipped lessons fills.
func lessonHeight(h int) int { return min(max(h*2/5, 7), 12) }

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

// view renders the panel in exactly h lines of w cells: the title, the
// explanation (scrolled, with markers where it is cut), the question, the
// verdict with its evidence, the latest result, and last what the keys
// do now.
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
		return append(out, m.prompt(st, w, false))[:max(h, 0)]
	}

	fixed, ran := m.parts(st, w)
	explain := m.explanation(w)
	eRoom := room - len(fixed) - len(ran)
	if eRoom < len(explain) && len(ran) > 0 {
		eRoom += len(ran) // the explanation before the latest result
		ran = nil
	}
	if len(explain) > 0 {
		eRoom = max(eRoom, 1)
	} else {
		eRoom = 0
	}
	window, cut := m.explainWindow(st, explain, eRoom, w)
	body := append(window, fixed...)
	body = append(body, ran...)
	if over := len(body) - room; over > 0 {
		// Too much for the band: the newest lines stay, a marker says
		// that some are cut.
		body = append(block{st.Dim.Render(clip(fmt.Sprintf("↑ %d lines above (a taller window shows them)", over+1), w))}, body[over+1:]...)
	}
	out = append(out, body...)
	for len(out) < h-1 {
		out = append(out, "")
	}
	out = append(out, m.prompt(st, w, cut))
	for i, l := range out {
		out[i] = clip(l, w)
	}
	return out
}

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
			see := fmt.Sprintf("  see line %d, %s", r.line, r.text)
			if r.firstOut != "" && r.outLines == 1 {
				see += ": " + r.firstOut
			}
			fixed = append(fixed, st.Dim.Render(clip(see, w)))
			if where := onScreen(r.text, r.firstOut); where != "" && !slices.Contains(look, where) {
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

// height is the band the panel needs at width w, at most most lines and
// at least 4: it shrinks to what it shows, so that on a small screen the
// panels above keep the room it does not need.
func (m lessonModel) height(st *Styles, w, most int) int {
	fixed, ran := m.parts(st, w)
	return min(max(2+len(m.explanation(w))+len(fixed)+len(ran), 4), most)
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

// explainWindow shows room lines of the explanation from the scroll
// position, with a marker line at a cut end saying how much is hidden and
// which key shows it; it reports whether the text is cut.
func (m lessonModel) explainWindow(st *Styles, lines []string, room, w int) (block, bool) {
	n := len(lines)
	switch {
	case room <= 0:
		return nil, n > 0
	case n <= room:
		return block(lines), false
	case room <= 2:
		// No room for marker lines: the last line shown ends with one.
		top := min(m.scroll, n-room)
		out := append(block{}, lines[top:top+room]...)
		out[room-1] = clip(out[room-1], max(w-2, 1)) + st.Dim.Render(" …")
		return out, true
	}
	// With the marker above, the last page shows room-1 lines.
	top := min(m.scroll, n-room+1)
	var out block
	if top > 0 {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("↑ %d lines above ({ shows them)", top), w)))
	}
	rows := room - len(out)
	if top+rows < n {
		rows-- // room for the marker below
	}
	out = append(out, lines[top:top+rows]...)
	if below := n - top - rows; below > 0 {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("↓ %d more lines (} shows them)", below), w)))
	}
	return out, true
}

// resultLine is a line's result in one line.
func (m lessonModel) resultLine(st *Styles, r lessonResult, w int) string {
	switch {
	case !r.ok:
		return st.Err.Render(clip(fmt.Sprintf("✘ line %d, %s, failed: %s", r.line, r.text, r.err), w))
	case r.outLines == 1:
		return st.Dim.Render(clip(fmt.Sprintf("ran line %d, %s: %s", r.line, r.text, r.firstOut), w))
	case r.outLines > 1:
		return st.Dim.Render(clip(fmt.Sprintf("ran line %d, %s (%d lines printed; the panels above show the same)", r.line, r.text, r.outLines), w))
	}
	return st.Dim.Render(clip(fmt.Sprintf("ran line %d, %s", r.line, r.text), w))
}

// prompt is the panel's last line: what the lesson does now, and the key
// that goes on.
func (m lessonModel) prompt(st *Styles, w int, cut bool) string {
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
	if cut {
		line += st.Dim.Render("   { } scroll the text")
	}
	return clip(line, w)
}

// onLessonKey answers the lesson panel's keys; it reports false for a key
// that is not one of them.
func (m *Model) onLessonKey(msg tea.KeyMsg) bool {
	k, l := m.keys, &m.lesson
	switch {
	case key.Matches(msg, k.Next):
		if l.goOn() {
			m.opts.Lesson.answer(0)
			return true
		}
		switch {
		case l.phase == lessonWaitChoice && l.ask != nil:
			m.status.set(levelWarn, fmt.Sprintf("first predict: press a number from 1 to %d", len(l.ask.choices)))
		case l.phase == lessonOver:
			m.status.set(levelInfo, "the lesson is over; q quits")
		default:
			m.status.set(levelInfo, "a line is running; enter runs the next one once it is done")
		}
		return true
	case key.Matches(msg, k.Choose):
		n := int(msg.Runes[0] - '0')
		if l.choose(n) {
			m.opts.Lesson.answer(n)
			return true
		}
		if l.phase == lessonWaitChoice && l.ask != nil {
			m.status.set(levelWarn, fmt.Sprintf("%d is not a choice: press a number from 1 to %d", n, len(l.ask.choices)))
		} else {
			m.status.set(levelInfo, "no question waits for an answer now")
		}
		return true
	case key.Matches(msg, k.LessonUp):
		l.scrollBy(-max(lessonHeight(m.height)-3, 1), m.width)
		return true
	case key.Matches(msg, k.LessonDown):
		l.scrollBy(max(lessonHeight(m.height)-3, 1), m.width)
		return true
	}
	return false
}
