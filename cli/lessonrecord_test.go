package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/scenario"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// TestRecordLessons runs every shipped lesson on the real engine (profile
// fast), each line through the command tree as kraftlab lesson runs it,
// and records what the live screen is told: the lesson's narration, the
// waits for a key, and after each line the playground's view and its new
// events. tui's TestLessonSteps replays these recordings through the
// screen at 80x24, a golden for each step. It runs only when asked to,
// since it rewrites tui/testdata/lessons:
// KRAFTLAB_TUI_RECORD=1 go test -run TestRecordLessons ./cli
func TestRecordLessons(t *testing.T) {
	if os.Getenv("KRAFTLAB_TUI_RECORD") == "" {
		t.Skip("set KRAFTLAB_TUI_RECORD=1 to record tui/testdata/lessons/*.json from a real cluster")
	}
	ls, err := shippedLessons()
	if err != nil {
		t.Fatal(err)
	}
	home := shortHome(t)
	e := &env{stdout: io.Discard, stderr: io.Discard, open: engine.Open, getenv: func(k string) string {
		if k == control.EnvHome {
			return home
		}
		return ""
	}}
	for _, l := range ls {
		t.Run(l.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			s, err := loadLesson(e, l)
			if err != nil {
				t.Fatal(err)
			}
			session, err := control.NewSession(control.Home(e.getenv), "record-"+l.name)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := scenarioConfig(e, s, string(cluster.ProfileFast), nil)
			if err != nil {
				t.Fatal(err)
			}
			started := time.Now()
			p, err := startPlayground(ctx, e, session, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.stop()
			rec := &lessonRecorder{pg: p.pg, rec: lessonRecording{
				Source:  "the real engine, " + shape(cfg) + ", kraftlab lesson " + l.name + " --profile fast",
				File:    l.file,
				Title:   l.title,
				Steps:   len(s.Steps),
				Started: started,
			}}
			r := &scenario.Runner{
				Start: func(context.Context, *scenario.Script) (string, func() error, error) {
					return shape(cfg), func() error { return nil }, nil
				},
				Exec: func(ctx context.Context, args []string, out io.Writer) error {
					return execute(ctx, args, &env{stdout: out, stderr: out, getenv: e.getenv, open: e.open, session: &session, scenario: true})
				},
				Out: io.Discard, Prompt: io.Discard, Step: true,
				Enter:    rec.enter,
				ReadLine: rec.readLine,
				Narrator: rec,
			}
			rep := r.Run(ctx, []*scenario.Script{s})
			if !rep.OK {
				t.Fatalf("lesson %s failed: %+v", l.name, rep.Files[0].Failure)
			}
			b, err := json.Marshal(rec.rec)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join("..", "tui", "testdata", "lessons", strings.TrimSuffix(l.file, ".txt")+".json")
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("recorded %s: %d items, %d bytes", out, len(rec.rec.Items), len(b))
		})
	}
}

// lessonRecording is what tui's TestLessonSteps replays.
type lessonRecording struct {
	Source  string       `json:"source"`
	File    string       `json:"file"`
	Title   string       `json:"title"`
	Steps   int          `json:"steps"`
	Started time.Time    `json:"started"`
	Items   []lessonItem `json:"items"`
}

// lessonItem is one thing the screen was told, in order.
type lessonItem struct {
	// Kind is header, next, asked, ran, judged, or enter and choice for
	// the run's waits for a key.
	Kind    string               `json:"kind"`
	Header  []string             `json:"header,omitempty"`
	Step    *scenario.Step       `json:"step,omitempty"`
	Ask     *scenario.Ask        `json:"ask,omitempty"`
	Report  *scenario.StepReport `json:"report,omitempty"`
	Verdict *scenario.Verdict    `json:"verdict,omitempty"`
	// View and Events are the playground at a wait for a key.
	View   *view.View      `json:"view,omitempty"`
	Events []cluster.Event `json:"events,omitempty"`
}

// lessonRecorder is the run's Narrator and key hooks; it answers every
// question rightly.
type lessonRecorder struct {
	pg     *cluster.Playground
	mu     sync.Mutex
	rec    lessonRecording
	answer int
	after  uint64
}

func (r *lessonRecorder) add(it lessonItem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Items = append(r.rec.Items, it)
}

func (r *lessonRecorder) enter(context.Context) error {
	r.add(r.wait("enter"))
	return nil
}

func (r *lessonRecorder) readLine(context.Context) (string, error) {
	r.add(r.wait("choice"))
	return strconv.Itoa(r.answer), nil
}

// wait is a wait for a key, with the playground as the learner sees it
// then.
func (r *lessonRecorder) wait(kind string) lessonItem {
	v := r.pg.View()
	evs := r.pg.EventStream().Since(r.after)
	if n := len(evs); n > 0 {
		r.after = evs[n-1].Seq
	}
	return lessonItem{Kind: kind, View: &v, Events: evs}
}

func (r *lessonRecorder) Header(_ string, lines []string) {
	r.add(lessonItem{Kind: "header", Header: lines})
}

func (r *lessonRecorder) Next(st scenario.Step) {
	r.add(lessonItem{Kind: "next", Step: &st})
}

func (r *lessonRecorder) Asked(st scenario.Step, a *scenario.Ask) {
	r.answer = a.Answer
	r.add(lessonItem{Kind: "asked", Step: &st, Ask: a})
}

func (r *lessonRecorder) Ran(st scenario.Step, sr *scenario.StepReport) {
	rep := *sr
	r.add(lessonItem{Kind: "ran", Step: &st, Report: &rep})
}

func (r *lessonRecorder) Judged(v scenario.Verdict) {
	r.add(lessonItem{Kind: "judged", Verdict: &v})
}
