package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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
	// scroll is how many lines of the section's text are scrolled off
	// the top; pinned keeps the window on its end instead, where a
	// question and a verdict show.
	scroll int
	pinned bool
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
	// focus is the panel the latest line or verdict points at.
	focus focus
	// out is the latest line's whole output, for the output pane; outSeq
	// counts the lines that ran, so the screen knows a new one came.
	out    lineOutput
	outSeq int
}

// lineOutput is what a line printed.
type lineOutput struct {
	line        int
	text        string
	ok          bool
	output, err string
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
		m.scroll, m.pinned = 0, false
		m.ask, m.verdict, m.said, m.last = nil, nil, nil, nil
	} else if m.step == 1 {
		m.explain = m.header
	}
}

func (msg lessonAskMsg) apply(m *lessonModel) {
	m.ask = &lessonQuestion{text: msg.question, choices: msg.choices}
	m.verdict, m.said, m.results = nil, nil, nil
	m.pinned = true
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
	m.out, m.outSeq = lineOutput{line: msg.line, text: msg.text, ok: msg.ok, output: msg.output, err: msg.err}, m.outSeq+1
	if f := lineFocus(msg.text, r.firstOut); f != focusNone {
		m.focus = f
	}
	m.results = append(m.results, r)
	if len(m.results) > maxLessonResults {
		m.results = m.results[1:]
	}
}

func (msg lessonVerdictMsg) apply(m *lessonModel) {
	v := msg
	m.verdict = &v
	m.said = nil
	m.pinned = true
	for _, line := range v.evidence {
		if r, ok := m.result(line); ok {
			if f := lineFocus(r.text, r.firstOut); f != focusNone {
				m.focus = f
				break
			}
		}
	}
}

// lineFocus is the panel a line that ran points at: the place a wait or
// expect checked, or the live twin of what a command printed.
func lineFocus(cmd, firstOut string) focus {
	if _, f := onScreen(cmd, firstOut); f != focusNone {
		return f
	}
	return commandFocus(cmd)
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

// scrollBy moves the window on the section's text n lines down
// (negative: up), within its lines at width w shown in room lines;
// reaching the end pins the window there again.
func (m *lessonModel) scrollBy(st *Styles, n, w, room int) {
	lines, anchor := m.content(st, w)
	last := max(len(lines)-(room-1), 0)
	m.scroll = min(max(m.top(len(lines), anchor, room)+n, 0), last)
	m.pinned = false
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
		room := m.lessonBand() - 2
		l.scrollBy(m.st, -max(room-1, 1), m.lessonWidth(), room)
		return true
	case key.Matches(msg, k.LessonDown):
		room := m.lessonBand() - 2
		l.scrollBy(m.st, max(room-1, 1), m.lessonWidth(), room)
		return true
	}
	return false
}

// lessonBand is the lesson band's height on the screen now.
func (m *Model) lessonBand() int { return m.compose().band }

// lessonWidth is the lesson band's width.
func (m *Model) lessonWidth() int { return m.width }
