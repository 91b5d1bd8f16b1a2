package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/scenario"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// lessonRecording is a shipped lesson's run on the real engine, as the
// screen was told it: cli's TestRecordLessons writes testdata/lessons
// (KRAFTLAB_TUI_RECORD=1 go test -run TestRecordLessons ./cli).
type lessonRecording struct {
	Source  string       `json:"source"`
	File    string       `json:"file"`
	Title   string       `json:"title"`
	Steps   int          `json:"steps"`
	Started time.Time    `json:"started"`
	Items   []lessonItem `json:"items"`
}

type lessonItem struct {
	Kind    string               `json:"kind"`
	Header  []string             `json:"header,omitempty"`
	Step    *scenario.Step       `json:"step,omitempty"`
	Ask     *scenario.Ask        `json:"ask,omitempty"`
	Report  *scenario.StepReport `json:"report,omitempty"`
	Verdict *scenario.Verdict    `json:"verdict,omitempty"`
	View    *view.View           `json:"view,omitempty"`
	Events  []cluster.Event      `json:"events,omitempty"`
}

// tell hands what the run tells l to the screen, as the program would.
func tell(m *Model, l *Lesson, say func()) {
	got := make(chan tea.Msg, 1)
	go func() { got <- l.listen()() }()
	say()
	m.Update(<-got)
}

// TestLessonSteps replays each shipped lesson's recorded run through the
// screen at 80x24 and, at every wait for a key (each step), compares the
// screen with testdata/TestLessonSteps/LESSON/NN-lineL.golden (go test
// ./tui -run TestLessonSteps -update rewrites them). At each step the
// place the lesson points at shows whole, and from the first line that
// printed on, the output pane shows the latest line's output.
func TestLessonSteps(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "lessons", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no lesson recordings (%v): KRAFTLAB_TUI_RECORD=1 go test -run TestRecordLessons ./cli", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var rec lessonRecording
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// The recording must be of the lesson as shipped.
		shipped, err := os.ReadFile(filepath.Join("..", "cli", "lessons", rec.File))
		if err != nil {
			t.Fatal(err)
		}
		s, err := scenario.Parse(rec.File, strings.NewReader(string(shipped)))
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		started := map[int]bool{} // background lines: a second "ran" is their end
		for _, it := range rec.Items {
			if it.Kind == "ran" && it.Step.Background && started[it.Step.Line] {
				continue
			}
			if it.Kind == "ran" {
				started[it.Step.Line] = true
				if ran >= len(s.Steps) || s.Steps[ran].Text != it.Step.Text || s.Steps[ran].Line != it.Step.Line {
					t.Fatalf("%s is not of cli/lessons/%s as it is now (line %d, %q): record it again with KRAFTLAB_TUI_RECORD=1 go test -run TestRecordLessons ./cli", file, rec.File, it.Step.Line, it.Step.Text)
				}
				ran++
			}
		}
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) { replayLesson(t, rec) })
	}
}

// replayLesson feeds rec to a screen of 80x24 and checks it at each step.
func replayLesson(t *testing.T, rec lessonRecording) {
	const w, h = 80, 24
	l := NewLesson(rec.Title, rec.Steps)
	t.Cleanup(l.Close)
	m := New(context.Background(), nil, Options{Started: rec.Started, Lesson: l})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	n, printed := 0, ""
	for _, it := range rec.Items {
		switch it.Kind {
		case "header":
			tell(m, l, func() { l.Header(rec.File, it.Header) })
		case "next":
			tell(m, l, func() { l.Next(*it.Step) })
		case "asked":
			tell(m, l, func() { l.Asked(*it.Step, it.Ask) })
		case "judged":
			tell(m, l, func() { l.Judged(*it.Verdict) })
		case "ran":
			tell(m, l, func() { l.Ran(*it.Step, it.Report) })
			if k := it.Step.Args[0]; k != "say" && k != scenario.AskCommand {
				printed = fmt.Sprintf("Output · line %d, ", it.Step.Line)
			}
		case "enter", "choice":
			m.pollSeq++
			m.Update(snapshotMsg{seq: m.pollSeq, view: *it.View, events: it.Events})
			phase := lessonWaitEnter
			if it.Kind == "choice" {
				phase = lessonWaitChoice
			}
			m.Update(lessonWantMsg{phase: phase})
			n++
			step := fmt.Sprintf("%02d-line%d", n, m.lesson.next)
			t.Run(step, func(t *testing.T) {
				screen := m.View()
				lines := strings.Split(screen, "\n")
				if len(lines) != h {
					t.Errorf("%d lines, want %d", len(lines), h)
				}
				for i, line := range lines {
					if lw := lipgloss.Width(line); lw > w {
						t.Errorf("line %d is %d wide: %q", i, lw, line)
					}
				}
				checkPointedAtWhole(t, m, lines)
				if printed != "" && !strings.Contains(screen, printed) {
					t.Errorf("the output pane does not show %q:\n%s", printed, screen)
				}
				golden.RequireEqual(t, []byte(screen+"\n"))
			})
		}
	}
	if n < 10 {
		t.Errorf("only %d steps replayed", n)
	}
}

// checkPointedAtWhole checks that the place the lesson points at is on
// screen with every row: the panel drawn alone, as tall as it needs,
// shows the same lines, one after the other, on the screen.
func checkPointedAtWhole(t *testing.T, m *Model, screen []string) {
	t.Helper()
	v, st, w := &m.view, m.st, m.width
	var want block
	switch p := m.pointedAt(); p {
	case focusNone:
		return
	case focusCommit:
		want = m.commit.view(st, v, w, 1+voters(v))
		if v.ZooKeeper != nil {
			want = zooKeeperView(st, v, w, 200)
		}
	case focusQuorum:
		want = m.quorum.view(st, v, w, 1+len(v.Nodes), -1).lines
	case focusQueue:
		want = m.queueView(st, v, w, 200)
		for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
			want = want[:len(want)-1]
		}
	case focusBrokers, focusPartitions, focusFetchers, focusMessages:
		pane, _ := p.pane()
		if m.pane != pane {
			t.Fatalf("the lesson points at the %s pane, the screen shows %s", pane, m.pane)
		}
		want = m.dataView(st, v, w, 200)
		if p == focusPartitions {
			want = want[:len(want)-len(partitionsLegendLines(v, w))] // the legend goes where room is short
		}
	case focusEvents:
		if !slices.ContainsFunc(screen, func(s string) bool { return strings.HasPrefix(s, "Events") }) {
			t.Errorf("the lesson points at the Events, which are not on screen:\n%s", strings.Join(screen, "\n"))
		}
		return
	case focusOutput:
		want = m.output.view(st, w, m.output.height(w))
	}
	if len(want) == 0 {
		t.Fatalf("no lines for %s", m.pointedAt())
	}
	// The selection marker and styles aside, each row as drawn alone.
	norm := func(s string) string { return strings.TrimRight(strings.TrimPrefix(s, "▶"), " ") }
	for i := range screen {
		if norm(screen[i]) != norm(want[0]) {
			continue
		}
		j := 0
		for j < len(want) && i+j < len(screen) && norm(screen[i+j]) == norm(want[j]) {
			j++
		}
		if j == len(want) {
			return
		}
	}
	t.Errorf("the lesson points at %s, which is not on screen whole; want these lines:\n%s\nthe screen:\n%s",
		m.pointedAt(), strings.Join(want, "\n"), strings.Join(screen, "\n"))
}
