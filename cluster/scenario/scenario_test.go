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
