package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplit(t *testing.T) {
	cases := map[string][]string{
		"":                                 nil,
		"   # only a comment":              nil,
		"kill leader":                      {"kill", "leader"},
		"  wait   leader != 2  ":           {"wait", "leader", "!=", "2"},
		"wait 'leader != 2' --timeout 5s":  {"wait", "leader != 2", "--timeout", "5s"},
		`wait "node 1 role Leader"`:        {"wait", "node 1 role Leader"},
		`say "a \"quoted\" word"`:          {"say", `a "quoted" word`},
		`say 'it'\''s'`:                    {"say", "it's"},
		"kill 3 # the follower":            {"kill", "3"},
		"kill a#b":                         {"kill", "a#b"},
		`link 1 2 --loss 10\%`:             {"link", "1", "2", "--loss", "10%"},
		"wait ''":                          {"wait", ""},
		"\tstatus\t--json\r":               {"status", "--json"},
		"isr orders-0 size >= 2 #trailing": {"isr", "orders-0", "size", ">=", "2"},
	}
	for in, want := range cases {
		got, err := Split(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err == nil && len(got) > 0 {
			again, _ := Split(strings.Join(quoteAll(got), " "))
			if !reflect.DeepEqual(again, got) {
				t.Errorf("quoteAll(%q) does not split back: %q", got, again)
			}
		}
	}
	for in, want := range map[string]string{
		"wait 'leader":  "unterminated ' quote",
		`wait "leader`:  `unterminated " quote`,
		`wait "a\"`:     `unterminated " quote`,
		`kill leader \`: "a backslash ends the line",
	} {
		if _, err := Split(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Split(%q) = %v; want %q", in, err, want)
		}
	}
}

const failover = `# Leader failover
#
# What it teaches ...

up --controllers 3 --brokers 0   # the shape

wait leader
kill leader
wait new-leader --timeout 10s
`

func TestParse(t *testing.T) {
	s, err := Parse("failover.txt", strings.NewReader(failover))
	if err != nil {
		t.Fatal(err)
	}
	if s.Up == nil || s.Up.Line != 5 || s.Up.Text != "up --controllers 3 --brokers 0" {
		t.Errorf("up %+v", s.Up)
	}
	if len(s.Steps) != 3 || s.Steps[2].Line != 9 || s.Steps[2].Pos() != "failover.txt:9" ||
		!reflect.DeepEqual(s.Steps[2].Args, []string{"wait", "new-leader", "--timeout", "10s"}) {
		t.Errorf("steps %+v", s.Steps)
	}
	s, err = Parse("bare.txt", strings.NewReader("status\n"))
	if err != nil || s.Up != nil || len(s.Steps) != 1 {
		t.Errorf("file without up: %+v, %v", s, err)
	}
}

func TestParseErrorsHaveFileAndLine(t *testing.T) {
	src := "wait leader\nup --controllers 5\nwait 'oops\n\nkill \"x\n"
	_, err := Parse("bad.txt", strings.NewReader(src))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("errors %v", err)
	}
	want := "bad.txt:2: up may only be the first command: it sets the playground's shape before anything runs\n" +
		"bad.txt:3: unterminated ' quote\n" +
		`bad.txt:5: unterminated " quote`
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if _, err := Parse("long.txt", strings.NewReader(strings.Repeat("x", maxLine+1))); err == nil || !strings.Contains(err.Error(), "long.txt:1: read:") {
		t.Errorf("over-long line = %v", err)
	}
}

func TestLoadMergesSyntaxAndCommandErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.txt")
	os.WriteFile(path, []byte("kil 3\nwait 'x\nstatus\nbogus\n"), 0o644)
	_, err := Load(path, func(args []string) error {
		if args[0] != "status" {
			return fmt.Errorf("unknown command %q", args[0])
		}
		return nil
	})
	want := path + ":1: unknown command \"kil\"\n" + path + ":2: unterminated ' quote\n" + path + ":4: unknown command \"bogus\""
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.txt"), nil); err == nil || !strings.Contains(err.Error(), "read scenario") {
		t.Errorf("missing file = %v", err)
	}
}

func TestValidateReportsEveryBadLine(t *testing.T) {
	s, err := Parse("v.txt", strings.NewReader("up --brokers x\nwait leader\nkil 3\nwait leder\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(func(args []string) error {
		switch args[0] {
		case "up":
			return errors.New(`invalid argument "x" for "--brokers"`)
		case "kil":
			return errors.New(`unknown command "kil"`)
		case "wait":
			if args[1] == "leder" {
				return errors.New(`bad condition "leder"`)
			}
		}
		return nil
	})
	want := "v.txt:1: invalid argument \"x\" for \"--brokers\"\nv.txt:3: unknown command \"kil\"\nv.txt:4: bad condition \"leder\""
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant\n%s", err, want)
	}
	if err := s.Validate(func([]string) error { return nil }); err != nil {
		t.Errorf("all good = %v", err)
	}
}

type codeErr struct {
	code int
	msg  string
}

func (e codeErr) Error() string { return e.msg }
func (e codeErr) ExitCode() int { return e.code }

// fakeClock advances 10ms each time it is read.
func fakeClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time {
		t = t.Add(10 * time.Millisecond)
		return t
	}
}

func TestRunnerPassFailAndError(t *testing.T) {
	pass, _ := Parse("pass.txt", strings.NewReader("up --controllers 3\nwait leader\nkill leader\n"))
	fail, _ := Parse("fail.txt", strings.NewReader("wait leader\nexpect leader != 1\nkill 2\n"))
	broken, _ := Parse("broken.txt", strings.NewReader("kill 9\n"))

	var started, stopped []string
	var ran [][]string
	var out bytes.Buffer
	r := &Runner{
		Start: func(_ context.Context, s *Script) (string, func() error, error) {
			started = append(started, s.File)
			return "3 controllers, profile fast", func() error { stopped = append(stopped, s.File); return nil }, nil
		},
		Exec: func(_ context.Context, args []string, w io.Writer) error {
			ran = append(ran, args)
			switch strings.Join(args, " ") {
			case "wait leader":
				fmt.Fprintln(w, "ok: leader 1 in epoch 1")
			case "expect leader != 1":
				return codeErr{1, "expect leader != 1: false; saw leader 1 in epoch 1"}
			case "kill 9":
				return codeErr{2, "unknown node 9 (nodes: 1, 2, 3)"}
			}
			return nil
		},
		Out: &out,
		Now: fakeClock(),
	}
	rep := r.Run(context.Background(), []*Script{pass, fail, broken})
	if rep.OK || rep.ExitCode != 2 || len(rep.Files) != 3 {
		t.Fatalf("report ok=%t exit=%d files=%d", rep.OK, rep.ExitCode, len(rep.Files))
	}
	if !reflect.DeepEqual(started, []string{"pass.txt", "fail.txt", "broken.txt"}) || !reflect.DeepEqual(started, stopped) {
		t.Errorf("started %v, stopped %v: each file gets its own playground, always shut down", started, stopped)
	}
	if len(ran) != 5 {
		t.Errorf("ran %v; the failing file must stop at its first failure", ran)
	}
	p, f, b := rep.Files[0], rep.Files[1], rep.Files[2]
	if !p.OK || p.ExitCode != 0 || len(p.Steps) != 2 || p.Steps[0].Output != "ok: leader 1 in epoch 1" || p.Playground == "" {
		t.Errorf("pass report %+v", p)
	}
	if f.OK || f.ExitCode != 1 || f.Failure.Pos != "fail.txt:2" || f.Failure.Command != "expect leader != 1" || !strings.Contains(f.Failure.Message, "saw leader 1") {
		t.Errorf("fail report %+v %+v", f, f.Failure)
	}
	if b.ExitCode != 2 || b.Failure.Pos != "broken.txt:1" {
		t.Errorf("broken report %+v", b.Failure)
	}
	text := out.String()
	for _, want := range []string{
		"=== pass.txt (3 controllers, profile fast)",
		"wait leader  (0.010s)",
		"ok: leader 1 in epoch 1",
		"--- PASS pass.txt",
		"--- FAIL fail.txt:2: expect leader != 1\n    expect leader != 1: false; saw leader 1 in epoch 1",
		"--- FAIL broken.txt:1: kill 9",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestRunnerStartAndStopFailures(t *testing.T) {
	withUp, _ := Parse("up.txt", strings.NewReader("up --controllers 3\nwait leader\n"))
	noUp, _ := Parse("noup.txt", strings.NewReader("wait leader\n"))
	r := &Runner{
		Start: func(_ context.Context, s *Script) (string, func() error, error) {
			if s.Up != nil {
				return "", nil, errors.New("data folder: permission denied")
			}
			return "x", func() error { return errors.New("engine stuck") }, nil
		},
		Exec: func(context.Context, []string, io.Writer) error { return nil },
	}
	rep := r.Run(context.Background(), []*Script{withUp, noUp})
	if rep.ExitCode != 2 {
		t.Errorf("exit %d", rep.ExitCode)
	}
	if f := rep.Files[0].Failure; f == nil || f.Pos != "up.txt:1" || f.Message != "data folder: permission denied" {
		t.Errorf("start failure %+v", f)
	}
	if f := rep.Files[1].Failure; f == nil || !strings.Contains(f.Message, "engine stuck") || rep.Files[1].OK {
		t.Errorf("stop failure %+v", f)
	}
}

func TestRunnerInterrupted(t *testing.T) {
	s, _ := Parse("i.txt", strings.NewReader("wait leader\nkill 1\n"))
	s2, _ := Parse("j.txt", strings.NewReader("wait leader\n"))
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{
		Start: func(context.Context, *Script) (string, func() error, error) {
			return "x", func() error { return nil }, nil
		},
		Exec: func(ctx context.Context, args []string, w io.Writer) error {
			cancel()
			return codeErr{1, "wait leader: " + ctx.Err().Error()}
		},
	}
	rep := r.Run(ctx, []*Script{s, s2})
	if len(rep.Files) != 1 || rep.ExitCode != 2 || !strings.Contains(rep.Files[0].Failure.Message, "interrupted") {
		t.Errorf("interrupted run %+v %+v", rep, rep.Files[0].Failure)
	}
}

const teaching = `# Header line one
#
# Header line two

up --controllers 3 --brokers 0

# A block above
#   indented
wait leader   # the note
say Now the leader dies
pause Look at the screen
# not attached

kill leader
`

func TestParseCommentsForStep(t *testing.T) {
	s, err := Parse("t.txt", strings.NewReader(teaching))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Header line one", "", "Header line two"}; !reflect.DeepEqual(s.Header, want) {
		t.Errorf("header %q, want %q", s.Header, want)
	}
	w := s.Steps[0]
	if want := []string{"A block above", "  indented"}; !reflect.DeepEqual(w.Comment, want) || w.Note != "the note" {
		t.Errorf("wait leader: comment %q note %q", w.Comment, w.Note)
	}
	if s.Steps[1].Comment != nil || s.Steps[3].Comment != nil {
		t.Errorf("a blank line detaches a comment: %q %q", s.Steps[1].Comment, s.Steps[3].Comment)
	}
	bare, _ := Parse("b.txt", strings.NewReader("# directly above\nstatus\n"))
	if bare.Header != nil || !reflect.DeepEqual(bare.Steps[0].Comment, []string{"directly above"}) {
		t.Errorf("a comment right above the first line is its own: header %q comment %q", bare.Header, bare.Steps[0].Comment)
	}
}

// enterFrom returns an Enter that reads one line of in per call.
func enterFrom(in string, calls *int) func(context.Context) error {
	lines := strings.SplitAfter(in, "\n")
	return func(context.Context) error {
		*calls++
		if len(lines) == 0 || !strings.HasSuffix(lines[0], "\n") {
			return errors.New("standard input ended")
		}
		lines = lines[1:]
		return nil
	}
}

func teachingRunner(out *bytes.Buffer, ran *[]string) *Runner {
	return &Runner{
		Start: func(context.Context, *Script) (string, func() error, error) {
			return "x", func() error { return nil }, nil
		},
		Exec: func(_ context.Context, args []string, w io.Writer) error {
			*ran = append(*ran, strings.Join(args, " "))
			if args[0] == "say" {
				fmt.Fprintln(w, "» "+strings.Join(args[1:], " "))
			}
			return nil
		},
		Out: out,
		Now: fakeClock(),
	}
}

func TestRunnerStepAndPause(t *testing.T) {
	s, _ := Parse("t.txt", strings.NewReader(teaching))

	// --step: one Enter per line, the comments shown first; the pause does
	// not wait a second time.
	var out bytes.Buffer
	var ran []string
	calls := 0
	r := teachingRunner(&out, &ran)
	r.Step, r.Enter = true, enterFrom("\n\n\n\n", &calls)
	rep := r.Run(context.Background(), []*Script{s})
	if !rep.OK || calls != 4 || !reflect.DeepEqual(ran, []string{"wait leader", "say Now the leader dies", "kill leader"}) {
		t.Fatalf("step run ok=%t calls=%d ran=%q\n%s", rep.OK, calls, ran, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"# Header line one\n#\n# Header line two\n",
		"# A block above\n#   indented\nnext t.txt:9: wait leader   # the note\n[Enter runs it, Ctrl-C stops] ",
		"next t.txt:11: pause Look at the screen\n",
		"pause Look at the screen  (",
		"» Now the leader dies",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("step output lacks %q:\n%s", want, text)
		}
	}
	if got := rep.Files[0].Steps[2].Output; got != "Look at the screen" {
		t.Errorf("pause output %q", got)
	}

	// Without --step only the pause waits.
	out.Reset()
	ran, calls = nil, 0
	r = teachingRunner(&out, &ran)
	r.Enter = enterFrom("\n", &calls)
	if rep := r.Run(context.Background(), []*Script{s}); !rep.OK || calls != 1 || len(ran) != 3 {
		t.Fatalf("pause run ok=%t calls=%d ran=%q\n%s", rep.OK, calls, ran, out.String())
	}
	if !strings.Contains(out.String(), "           Look at the screen\n           [paused at t.txt:11: Enter goes on] ") {
		t.Errorf("pause prompt:\n%s", out.String())
	}

	// Nobody to press Enter: the pause fails (exit 2) at its line, never hangs.
	out.Reset()
	ran, calls = nil, 0
	r = teachingRunner(&out, &ran)
	r.Enter = enterFrom("", &calls)
	rep = r.Run(context.Background(), []*Script{s})
	if f := rep.Files[0].Failure; rep.OK || rep.ExitCode != ExitError || f == nil || f.Pos != "t.txt:11" ||
		!strings.Contains(f.Message, "waiting for Enter at the pause of t.txt:11: standard input ended (without anyone at a terminal, run with --no-pause)") {
		t.Errorf("pause without input: %+v %+v", rep, rep.Files[0].Failure)
	}
	if len(ran) != 2 {
		t.Errorf("ran past the failed pause: %q", ran)
	}

	// --no-pause: no Enter at all.
	out.Reset()
	ran, calls = nil, 0
	r = teachingRunner(&out, &ran)
	r.NoPause = true
	if rep := r.Run(context.Background(), []*Script{s}); !rep.OK || len(ran) != 3 || !strings.Contains(out.String(), "(not waiting: --no-pause)") {
		t.Errorf("--no-pause: %+v\n%s", rep, out.String())
	}

	// --step with input that ends: the run stops at that line, exit 2.
	out.Reset()
	ran, calls = nil, 0
	r = teachingRunner(&out, &ran)
	r.Step, r.Enter = true, enterFrom("\n", &calls)
	rep = r.Run(context.Background(), []*Script{s})
	if f := rep.Files[0].Failure; rep.OK || rep.ExitCode != ExitError || f.Pos != "t.txt:10" || !strings.Contains(f.Message, "waiting for Enter before t.txt:10") || len(ran) != 1 {
		t.Errorf("step without input: %+v ran %q", f, ran)
	}
}
