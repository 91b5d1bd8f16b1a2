package scenario

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseBackgroundLines(t *testing.T) {
	s, err := Parse("b.txt", strings.NewReader("topics create held &\nstep --all\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := s.Steps[0]
	if !st.Background || strings.Join(st.Args, " ") != "topics create held" || st.Text != "topics create held &" {
		t.Errorf("background line %+v", st)
	}
	if s.Steps[1].Background {
		t.Errorf("a line without & runs in the foreground: %+v", s.Steps[1])
	}
	for in, want := range map[string]string{
		"&":                     "a lone & runs nothing",
		"pause look &":          "pause cannot run in the background",
		"ask Q? | a | b => 1 &": "ask cannot run in the background",
	} {
		if _, err := Parse("b.txt", strings.NewReader(in+"\n")); err == nil || !strings.Contains(err.Error(), "b.txt:1: "+want) {
			t.Errorf("Parse(%q) = %v; want %q", in, err, want)
		}
	}
}

// backgroundRunner's "create" waits until a "step" lets it go, as a
// paused cluster's topic creation waits for its messages; "create bad"
// fails when let go, and "create forever" ends only when cancelled.
func backgroundRunner(out *bytes.Buffer) *Runner {
	release := make(chan struct{})
	return &Runner{
		Start: func(context.Context, *Script) (string, func() error, error) {
			return "x", func() error { return nil }, nil
		},
		Exec: func(ctx context.Context, args []string, w io.Writer) error {
			switch strings.Join(args, " ") {
			case "step":
				close(release)
				fmt.Fprintln(w, "delivered #1")
			case "create", "create bad":
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
				if args[len(args)-1] == "bad" {
					return codeErr{2, "create: refused"}
				}
				fmt.Fprintln(w, "topic created")
			case "create forever":
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
		Out: out,
		Now: fakeClock(),
	}
}

func TestRunnerBackgroundLineEndsWhileOthersRun(t *testing.T) {
	s, _ := Parse("b.txt", strings.NewReader("create &\nstep\nstatus\n"))
	var out bytes.Buffer
	rep := backgroundRunner(&out).Run(context.Background(), []*Script{s})
	if !rep.OK {
		t.Fatalf("report %+v %+v\n%s", rep, rep.Files[0].Failure, out.String())
	}
	if got := rep.Files[0].Steps[0]; !got.OK || got.Output != "topic created" {
		t.Errorf("the background line's report holds its end: %+v", got)
	}
	text := out.String()
	started := strings.Index(text, "create &")
	ended := strings.Index(text, "b.txt:1 ended")
	if started < 0 || ended < started || !strings.Contains(text[ended:], "topic created") {
		t.Errorf("output does not show the line start and then end:\n%s", text)
	}
}

func TestRunnerBackgroundFailureStopsTheFile(t *testing.T) {
	s, _ := Parse("b.txt", strings.NewReader("create bad &\nstep\nstatus\n"))
	var out bytes.Buffer
	rep := backgroundRunner(&out).Run(context.Background(), []*Script{s})
	f := rep.Files[0]
	if rep.OK || rep.ExitCode != 2 || f.Failure == nil || f.Failure.Pos != "b.txt:1" || !strings.Contains(f.Failure.Message, "refused") {
		t.Fatalf("report %+v %+v\n%s", rep, f.Failure, out.String())
	}
}

func TestRunnerBackgroundLineStillRunningAtTheEnd(t *testing.T) {
	defer func(d time.Duration) { backgroundGrace = d }(backgroundGrace)
	backgroundGrace = 20 * time.Millisecond
	s, _ := Parse("b.txt", strings.NewReader("create forever &\nstatus\n"))
	var out bytes.Buffer
	rep := backgroundRunner(&out).Run(context.Background(), []*Script{s})
	f := rep.Files[0]
	if rep.OK || f.Failure == nil || f.Failure.Pos != "b.txt:1" || !strings.Contains(f.Failure.Message, "still running") {
		t.Fatalf("report %+v %+v\n%s", rep, f.Failure, out.String())
	}
}
