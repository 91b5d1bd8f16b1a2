package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// lessonFile is a lesson as kraftlab ships them (cli/lessons): a header,
// explanations, and questions whose answers the next lines show.
const lessonFile = `# Pull replication: a follower's Fetch is its acknowledgement.
#
# What it teaches
#   In KRaft the leader does not push records. Each follower sends Fetch
#   requests from the offset its log ends at. That offset is also its
#   acknowledgement.

up --controllers 3 --brokers 3

# Three controllers elect a leader and the two followers catch up.
wait leader
wait caught-up

# Cut one follower off from everyone: no Fetch leaves it any more.
ask A follower is cut off. What happens to the high watermark? | It stops: every voter must acknowledge a record | It goes on: two of three voters are a majority | It goes back to what the cut-off follower holds => 2
isolate follower
wait hwm >= baseline+5
say "The HWM went on with two of three voters: a majority of Fetches commits"
status --replication
`

// lessonOutput is what each command of lessonFile prints, as kraftlab
// would.
var lessonOutput = map[string]string{
	"wait leader":            "ok: leader 1 in epoch 1 (after 1.2s)",
	"wait caught-up":         "ok: 3 running voters and 3 brokers at leader 1's log end 41 (after 310ms)",
	"isolate follower":       "isolated node 2 (Follower in epoch 1): every link to and from it is down",
	"wait hwm >= baseline+5": "ok: hwm 47 (want >= 46); leader 1 in epoch 1, hwm 47 (after 451ms)",
	"status --replication":   "NodeId  LogEndOffset  Lag\n1  47  0\n2  41  6\n3  47  0",
}

// lessonRun runs lessonFile as kraftlab lesson does on the screen: a
// stepping Runner on a goroutine, narrated to l and waiting on it. It
// returns the run's report when it ends.
func lessonRun(t *testing.T, l *Lesson) <-chan *scenario.Report {
	t.Helper()
	s, err := scenario.Parse("lesson.txt", strings.NewReader(lessonFile))
	if err != nil {
		t.Fatal(err)
	}
	r := &scenario.Runner{
		Start: func(context.Context, *scenario.Script) (string, func() error, error) {
			return "test", func() error { return nil }, nil
		},
		Exec: func(_ context.Context, args []string, out io.Writer) error {
			line := strings.Join(args, " ")
			if args[0] == "say" {
				line = "» " + strings.Join(args[1:], " ")
			} else {
				line = lessonOutput[line]
			}
			_, err := fmt.Fprintln(out, line)
			return err
		},
		Step: true, Narrator: l, Enter: l.Enter, ReadLine: l.ReadLine,
		Out: io.Discard, Prompt: io.Discard,
	}
	done := make(chan *scenario.Report, 1)
	go func() {
		rep := r.Run(context.Background(), []*scenario.Script{s})
		if rep.OK {
			l.Finish(true, "every line ran")
		} else {
			l.Finish(false, rep.Files[0].Failure.Message)
		}
		done <- rep
	}()
	return done
}

// lessonScreen is a screen of size w×h with a lesson, on a steady
// playground's recording.
func lessonScreen(t *testing.T, w, h int) (*Model, *Lesson) {
	t.Helper()
	l := NewLesson("Pull replication: a follower's Fetch is its acknowledgement.", 6)
	t.Cleanup(l.Close)
	r := loadRecording(t, "steady")
	m := New(context.Background(), nil, Options{Started: r.Started, Lesson: l})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, f := range r.Frames {
		m.pollSeq++
		m.Update(snapshotMsg{seq: m.pollSeq, view: f.View, events: f.Events})
	}
	m.quorum.selected = r.Select
	return m, l
}

// untilLesson hands the run's messages to the screen, as the program
// would, until the panel is in phase want.
func untilLesson(t *testing.T, m *Model, l *Lesson, want lessonPhase) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for m.lesson.phase != want {
		got := make(chan tea.Msg, 1)
		go func() { got <- l.listen()() }()
		select {
		case msg := <-got:
			if msg == nil {
				t.Fatalf("the lesson feed closed before phase %d", want)
			}
			m.Update(msg)
		case <-deadline:
			t.Fatalf("the panel never reached phase %d; it is at %d:\n%s", want, m.lesson.phase, m.View())
		}
	}
}

// The panel walks a lesson: Enter runs each line, a number answers the
// question, and the verdict says whether the prediction held, pointing at
// the lines that show it; the keys do nothing while nothing waits for
// them.
func TestLessonPanelWalksALesson(t *testing.T) {
	for _, c := range []struct {
		choice string
		want   string
	}{
		{"2", "✔ your prediction held: 2) It goes on: two of three voters are a majority"},
		{"1", "✘ it did not: you said 1) It stops: every voter must acknowledge a record; what happened is 2) It goes on"},
	} {
		m, l := lessonScreen(t, 160, 48)
		done := lessonRun(t, l)

		untilLesson(t, m, l, lessonWaitEnter)
		screen := m.View()
		for _, want := range []string{"Lesson · step 1 of 6 · Pull replication", "What it teaches", "Three controllers elect a leader", "enter runs line 11: wait leader"} {
			if !strings.Contains(screen, want) {
				t.Fatalf("before the first line: no %q in\n%s", want, screen)
			}
		}
		press(t, m, "3") // no question yet: ignored
		if m.lesson.phase != lessonWaitEnter || !strings.Contains(m.View(), "no question waits for an answer now") {
			t.Fatalf("a number before the question did not say so:\n%s", m.View())
		}
		press(t, m, "enter")
		untilLesson(t, m, l, lessonWaitEnter)
		if !strings.Contains(m.View(), "ran line 11, wait leader: ok: leader 1 in epoch 1") {
			t.Fatalf("no result of line 11:\n%s", m.View())
		}
		press(t, m, "enter")
		untilLesson(t, m, l, lessonWaitChoice)
		screen = m.View()
		for _, want := range []string{"? A follower is cut off. What happens to the high watermark?", "1) It stops", "3) It goes back", "1-3 your prediction"} {
			if !strings.Contains(screen, want) {
				t.Fatalf("the question: no %q in\n%s", want, screen)
			}
		}
		if strings.Contains(screen, "=> 2") {
			t.Fatalf("the answer shows with the question:\n%s", screen)
		}
		press(t, m, "enter") // Enter does not answer
		if m.lesson.phase != lessonWaitChoice || !strings.Contains(m.View(), "first predict: press a number from 1 to 3") {
			t.Fatalf("enter at the question did not ask for a number:\n%s", m.View())
		}
		press(t, m, "7")
		if m.lesson.phase != lessonWaitChoice || !strings.Contains(m.View(), "7 is not a choice") {
			t.Fatalf("7 was taken as a choice of three:\n%s", m.View())
		}
		press(t, m, c.choice)
		for range 3 { // isolate, wait, say
			untilLesson(t, m, l, lessonWaitEnter)
			press(t, m, "enter")
		}
		untilLesson(t, m, l, lessonWaitEnter) // before status
		screen = strings.Join(strings.Fields(m.View()), " ")
		for _, want := range []string{c.want, "see line 16, isolate follower: isolated node 2", "see line 17, wait hwm >= baseline+5: ok: hwm 47",
			"on screen: the header's HWM and the Commit panel", "» The HWM went on with two of three voters"} {
			if !strings.Contains(screen, want) {
				t.Fatalf("choice %s: no %q in\n%s", c.choice, want, m.View())
			}
		}
		press(t, m, "enter")
		untilLesson(t, m, l, lessonOver)
		if rep := <-done; !rep.OK {
			t.Fatalf("the run failed: %+v", rep.Files[0].Failure)
		}
		if !strings.Contains(m.View(), "the lesson is over: every line ran") {
			t.Fatalf("no end:\n%s", m.View())
		}
		if held, judged := l.Score(); judged != 1 || held != map[string]int{"2": 1, "1": 0}[c.choice] {
			t.Errorf("choice %s: score %d of %d", c.choice, held, judged)
		}
	}
}

// Closing the screen mid-lesson ends the run's wait at once.
func TestClosedScreenEndsTheLesson(t *testing.T) {
	m, l := lessonScreen(t, 80, 24)
	done := lessonRun(t, l)
	untilLesson(t, m, l, lessonWaitEnter)
	l.Close()
	select {
	case rep := <-done:
		if rep.OK || !strings.Contains(rep.Files[0].Failure.Message, ErrScreenClosed.Error()) {
			t.Fatalf("report: %+v", rep.Files[0].Failure)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run still waits after the screen closed")
	}
}

// A key pressed while nothing waited is never taken for the next wait.
func TestStaleKeyIsNotTaken(t *testing.T) {
	l := NewLesson("t", 1)
	defer l.Close()
	l.answer(2) // as if pressed before the wait
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { _, err := l.ReadLine(ctx); got <- err }()
	if msg := l.listen()(); msg != (lessonWantMsg{phase: lessonWaitChoice}) {
		t.Fatalf("the wait told the screen %#v", msg)
	}
	select {
	case err := <-got:
		t.Fatalf("the wait ended on a stale key: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-got; err != context.Canceled {
		t.Fatalf("the cancelled wait: %v", err)
	}
}

// goldenLesson drives the panel to a moment of the lesson: the keys
// pressed, in order, each after the run waits for one.
type goldenLesson struct {
	name string
	keys []string
	// until is the phase to show the screen at.
	until lessonPhase
}

var goldenLessons = []goldenLesson{
	{"lesson-explain", nil, lessonWaitEnter},
	{"lesson-question", []string{"enter", "enter"}, lessonWaitChoice},
	{"lesson-held", []string{"enter", "enter", "2", "enter", "enter", "enter"}, lessonWaitEnter},
	{"lesson-missed", []string{"enter", "enter", "3", "enter", "enter", "enter"}, lessonWaitEnter},
}

// TestLessonGolden draws the lesson panel over a steady playground at
// 80x24 and 160x48: an explanation, a question with its choices, and a
// verdict each way (go test ./tui -run TestLessonGolden -update rewrites
// testdata/TestLessonGolden).
func TestLessonGolden(t *testing.T) {
	for _, g := range goldenLessons {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			t.Run(fmt.Sprintf("%s/%dx%d", g.name, size[0], size[1]), func(t *testing.T) {
				m, l := lessonScreen(t, size[0], size[1])
				done := lessonRun(t, l)
				for _, k := range g.keys {
					untilLesson(t, m, l, map[bool]lessonPhase{true: lessonWaitChoice, false: lessonWaitEnter}[k != "enter"])
					press(t, m, k)
				}
				untilLesson(t, m, l, g.until)
				screen := m.View()
				for i, line := range strings.Split(screen, "\n") {
					if w := len([]rune(line)); w > size[0] {
						t.Errorf("line %d is %d wide: %q", i, w, line)
					}
				}
				if n := strings.Count(screen, "\n") + 1; n != size[1] {
					t.Errorf("%d lines, want %d", n, size[1])
				}
				golden.RequireEqual(t, []byte(screen+"\n"))
				l.Close()
				<-done
			})
		}
	}
}

// An explanation longer than the band is cut with a marker that says how
// much is hidden and which key shows it; { and } scroll it.
func TestLongExplanationScrolls(t *testing.T) {
	m, _ := lessonScreen(t, 80, 24)
	var long []string
	for i := range 20 {
		long = append(long, fmt.Sprintf("explanation line %d", i+1))
	}
	m.Update(lessonNextMsg{line: 3, text: "wait leader", comment: long})
	m.Update(lessonWantMsg{phase: lessonWaitEnter})
	screen := m.View()
	if !strings.Contains(screen, "explanation line 1\n") || !strings.Contains(screen, "} 15 more below") || strings.Contains(screen, "more above") {
		t.Fatalf("no cut marker:\n%s", screen)
	}
	press(t, m, "}")
	screen = m.View()
	if strings.Contains(screen, "explanation line 1\n") || !strings.Contains(screen, "{ 4 more above, } 11 more below") {
		t.Fatalf("} did not scroll:\n%s", screen)
	}
	press(t, m, "}", "}", "}", "}", "}")
	if screen = m.View(); !strings.Contains(screen, "explanation line 20") || strings.Contains(screen, "more below") {
		t.Fatalf("the end of the text does not show:\n%s", screen)
	}
	press(t, m, "{", "{", "{", "{", "{", "{")
	if screen = m.View(); !strings.Contains(screen, "explanation line 1\n") {
		t.Fatalf("{ did not scroll back:\n%s", screen)
	}
	if m.lesson.phase != lessonWaitEnter {
		t.Fatal("scrolling went on with the lesson")
	}
}

// The screen with a lesson panel fits every size, in every phase: exactly
// h lines, none wider than w.
func TestLessonFitsEverySize(t *testing.T) {
	for _, g := range goldenLessons {
		m, l := lessonScreen(t, 80, 24)
		done := lessonRun(t, l)
		for _, k := range g.keys {
			untilLesson(t, m, l, map[bool]lessonPhase{true: lessonWaitChoice, false: lessonWaitEnter}[k != "enter"])
			press(t, m, k)
		}
		untilLesson(t, m, l, g.until)
		for _, size := range [][2]int{{20, 6}, {30, 8}, {40, 12}, {80, 24}, {100, 30}, {120, 30}, {160, 48}, {250, 80}, {80, 60}} {
			for _, help := range []bool{false, true} {
				m.showAll = help
				m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				lines := screenLines(m)
				if len(lines) != size[1] {
					t.Errorf("%s at %dx%d (full help %v): %d lines", g.name, size[0], size[1], help, len(lines))
				}
				for i, line := range lines {
					if w := lipgloss.Width(line); w > size[0] {
						t.Errorf("%s at %dx%d: line %d is %d wide: %q", g.name, size[0], size[1], i, w, line)
					}
				}
			}
		}
		l.Close()
		<-done
	}
}

// The lesson's keys show in the full help only on a lesson's screen.
func TestLessonKeysInHelp(t *testing.T) {
	m, _ := lessonScreen(t, 160, 48)
	press(t, m, "?")
	if v := m.View(); !strings.Contains(v, "lesson: next line") || !strings.Contains(v, "1-9") || !strings.Contains(v, "lesson: predict") {
		t.Errorf("the full help lacks the lesson's keys:\n%s", v)
	}
	plain := replay(loadRecording(t, "steady"), 160, 48)
	press(t, plain, "?")
	if strings.Contains(plain.View(), "lesson") {
		t.Errorf("a screen without a lesson lists its keys:\n%s", plain.View())
	}
	press(t, plain, "?", "enter", "2")
	if plain.lesson.phase != lessonStarting || strings.Contains(plain.View(), "question") {
		t.Errorf("a screen without a lesson took lesson keys:\n%s", plain.View())
	}
}

// The lesson panel in a real program (teatest), on the in-test engine:
// the feed reaches the screen from Init on, the screen's own keys still
// act between lines (a kill), Enter and a number drive the run, and
// quitting mid-lesson ends the run's wait once the screen is closed (as
// Run closes it).
func TestFlowLesson(t *testing.T) {
	pg, _ := openPlayground(t, 3, 1, clustertest.Options{})
	l := NewLesson("Pull replication: a follower's Fetch is its acknowledgement.", 6)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(ctx, pg, Options{Interval: 20 * time.Millisecond, OwnsCluster: true, Lesson: l})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	done := lessonRun(t, l)
	enter := tea.KeyMsg{Type: tea.KeyEnter}

	waitFor(t, tm, "enter runs line 11", "leader 1")
	// Between lines the screen's own keys work: kill the leader.
	tm.Type("l")
	tm.Type("x")
	waitFor(t, tm, "killed node 1")
	tm.Send(enter)
	waitFor(t, tm, "enter runs line 12")
	tm.Send(enter)
	waitFor(t, tm, "1-3 your prediction")
	tm.Type("2")
	waitFor(t, tm, "enter runs line 16")
	tm.Send(enter)
	waitFor(t, tm, "enter runs line 17")
	tm.Send(enter)
	waitFor(t, tm, "your prediction held", "see line 16")

	final := quit(t, tm)
	l.Close()
	if final.lesson.phase != lessonWaitEnter || final.lesson.next != 18 {
		t.Errorf("the screen ended at phase %d before line %d, want the wait before line 18", final.lesson.phase, final.lesson.next)
	}
	select {
	case rep := <-done:
		if f := rep.Files[0]; f.OK || f.Failure.Line != 18 || !strings.Contains(f.Failure.Message, ErrScreenClosed.Error()) {
			t.Errorf("the run after quitting: %+v", f.Failure)
		}
	case <-time.After(flowWait):
		t.Fatal("the run still waits after the screen quit")
	}
}
