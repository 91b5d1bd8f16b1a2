package tui

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// ErrScreenClosed says that the live screen a lesson ran on has ended, so
// nobody can press a key on it any more.
var ErrScreenClosed = errors.New("the live screen is closed")

// Lesson connects a lesson (a scenario run, on a goroutine of its own) to
// the screen's lesson panel. The run tells it what to show, as a
// scenario.Narrator, and waits on it for the learner's keys through
// Enter and ReadLine, the Runner's hooks of the same names; the screen
// reads what to show from it and answers the waits. Each call of the run
// blocks until the screen has taken it, so the panel never lags behind
// the run; once the screen has ended (Close), every call returns at once
// and every wait fails with ErrScreenClosed.
type Lesson struct {
	title string
	steps int
	// feed carries the panel's messages, run → screen.
	feed chan lessonMsg
	// reply carries a key, screen → run: 0 for Enter, or a choice.
	reply  chan int
	closed chan struct{}
	once   sync.Once

	mu sync.Mutex
	// held and judged count the verdicts, for Score.
	held, judged int
}

// NewLesson returns the link for a lesson titled title, of steps lines
// (the scenario's steps, its up line left out), for Options.Lesson.
func NewLesson(title string, steps int) *Lesson {
	return &Lesson{
		title: title, steps: steps,
		feed:   make(chan lessonMsg),
		reply:  make(chan int, 1),
		closed: make(chan struct{}),
	}
}

// Close says that the screen has ended: the run's calls no longer wait
// for it. Run calls it when the screen ends; calling it again is a no-op.
func (l *Lesson) Close() { l.once.Do(func() { close(l.closed) }) }

// show hands msg to the screen, or drops it once the screen is closed.
func (l *Lesson) show(msg lessonMsg) {
	select {
	case l.feed <- msg:
	case <-l.closed:
	}
}

// listen is the screen's wait for the run's next message; nil once the
// screen is closed.
func (l *Lesson) listen() tea.Cmd {
	return func() tea.Msg {
		select {
		case msg := <-l.feed:
			return msg
		case <-l.closed:
			return nil
		}
	}
}

// answer hands the learner's key to the waiting run. The panel answers
// only while the run waits, and the run takes one key a wait, so the
// buffer of one never holds a second.
func (l *Lesson) answer(n int) {
	select {
	case l.reply <- n:
	default:
	}
}

// await tells the screen what the run waits for, then waits for the key.
func (l *Lesson) await(ctx context.Context, want lessonMsg) (int, error) {
	select {
	case <-l.reply: // a key nobody waited for: never take it as this wait's
	default:
	}
	select {
	case l.feed <- want:
	case <-l.closed:
		return 0, ErrScreenClosed
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case n := <-l.reply:
		return n, nil
	case <-l.closed:
		return 0, ErrScreenClosed
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Enter waits until the learner presses Enter on the screen (the Runner's
// Enter hook).
func (l *Lesson) Enter(ctx context.Context) error {
	_, err := l.await(ctx, lessonWantMsg{phase: lessonWaitEnter})
	return err
}

// ReadLine waits until the learner presses a choice's number on the
// screen and returns it as the line typed (the Runner's ReadLine hook,
// for an ask line the screen has been shown by Asked).
func (l *Lesson) ReadLine(ctx context.Context) (string, error) {
	n, err := l.await(ctx, lessonWantMsg{phase: lessonWaitChoice})
	if err != nil {
		return "", err
	}
	return strconv.Itoa(n), nil
}

// Finish shows how the lesson ended: passed, or the failure summary. The
// screen then stays open until the learner quits it.
func (l *Lesson) Finish(passed bool, summary string) {
	l.show(lessonEndMsg{passed: passed, summary: summary})
}

// Header shows the file's header comment (scenario.Narrator).
func (l *Lesson) Header(_ string, lines []string) {
	l.show(lessonHeaderMsg{lines: append([]string(nil), lines...)})
}

// Next shows the line about to run and its comment block
// (scenario.Narrator). An ask line's text holds its answer: it is never
// shown.
func (l *Lesson) Next(st scenario.Step) {
	msg := lessonNextMsg{line: st.Line, ask: st.Args[0] == scenario.AskCommand, comment: append([]string(nil), st.Comment...)}
	if !msg.ask {
		msg.text = st.Text
	}
	l.show(msg)
}

// Asked shows a question and its choices (scenario.Narrator).
func (l *Lesson) Asked(st scenario.Step, a *scenario.Ask) {
	l.show(lessonAskMsg{line: st.Line, question: a.Question, choices: append([]string(nil), a.Choices...)})
}

// Ran shows a line's result (scenario.Narrator).
func (l *Lesson) Ran(st scenario.Step, sr *scenario.StepReport) {
	msg := lessonRanMsg{line: st.Line, kind: lineOther, ok: sr.OK, output: sr.Output, err: sr.Error}
	switch st.Args[0] {
	case scenario.AskCommand:
		msg.kind = lineAsk
	case "say":
		msg.kind = lineSay
		msg.text = st.Text
	default:
		msg.text = st.Text
	}
	l.show(msg)
}

// Score is how many of the predictions judged so far held, and how many
// were judged (a question nobody answered counts as judged, not held).
func (l *Lesson) Score() (held, judged int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held, l.judged
}

// Judged shows whether the prediction held (scenario.Narrator).
func (l *Lesson) Judged(v scenario.Verdict) {
	l.mu.Lock()
	l.judged++
	if v.Held() {
		l.held++
	}
	l.mu.Unlock()
	msg := lessonVerdictMsg{got: v.Got, answer: v.Ask.Answer, right: v.Ask.Right(), evidence: append([]int(nil), v.Evidence...)}
	if v.Got > 0 && v.Got <= len(v.Ask.Choices) {
		msg.said = strings.TrimSpace(v.Ask.Choices[v.Got-1])
	}
	l.show(msg)
}
