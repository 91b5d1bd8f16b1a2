package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Exit codes, the CLI's.
const (
	ExitOK     = 0
	ExitFailed = 1 // a wait or expect did not hold
	ExitError  = 2 // a command or the playground failed
)

// Runner runs scripts, each against a fresh playground or one that runs
// already (as Start decides).
type Runner struct {
	// Start starts a fresh playground for a script (its Up line, if any,
	// sets the shape), or checks a running one against the Up line. It
	// returns a one-line description of the playground and a function
	// that shuts it down (or, for a running one, leaves it be).
	Start func(ctx context.Context, s *Script) (desc string, stop func() error, err error)
	// Exec runs one step's words against the running playground, writing
	// what the command prints to out. An error with an ExitCode() int
	// method of ExitFailed is a failed wait or expect.
	Exec func(ctx context.Context, args []string, out io.Writer) error
	// Out receives the progress as text; nil discards it.
	Out io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Step makes the run wait for Enter before each line, after showing
	// the comment block above it (and, first, the file's header).
	Step bool
	// NoPause skips pause lines instead of waiting at them.
	NoPause bool
	// Explain shows the file's header and each line's comment block, as
	// Step does, without waiting for Enter.
	Explain bool
	// Enter waits until the user presses Enter. It must fail, not wait,
	// when nobody can press it (standard input ended). Step and pause
	// lines need it.
	Enter func(ctx context.Context) error
	// Prompt receives what the user reads before pressing Enter: the
	// comments of --step, the pause texts, the prompts. nil means Out.
	Prompt io.Writer
	// ReadLine reads one line the user typed, for ask lines. It must
	// fail, not wait, when standard input ended; the ask line then gives
	// the answer and goes on. nil: ask lines never wait.
	ReadLine func(ctx context.Context) (string, error)
	// Narrator, when set, is told what the run shows as values, for a
	// screen that draws them (see Narrator); nil tells nobody.
	Narrator Narrator
}

// PauseCommand is the scenario line that waits for Enter: pause [TEXT].
// The Runner runs it itself, since only it knows about --step and
// --no-pause; in a shell, kraftlab pause does the same.
const PauseCommand = "pause"

// Report is the result of a run, for humans and for --json.
type Report struct {
	OK       bool          `json:"ok"`
	ExitCode int           `json:"exitCode"`
	Files    []*FileReport `json:"files"`
}

// FileReport is the result of one scenario file.
type FileReport struct {
	File       string        `json:"file"`
	OK         bool          `json:"ok"`
	ExitCode   int           `json:"exitCode"`
	Playground string        `json:"playground,omitempty"`
	ElapsedMs  int64         `json:"elapsedMs"`
	Steps      []*StepReport `json:"steps"`
	// Failure is the step that stopped the file, or the playground's
	// failure to start (line 0 unless the up line is to blame).
	Failure *Failure `json:"failure,omitempty"`
}

// StepReport is the result of one line.
type StepReport struct {
	Line    int    `json:"line"`
	Command string `json:"command"`
	// StartMs is when the step started, from the file's start.
	StartMs   int64  `json:"startMs"`
	ElapsedMs int64  `json:"elapsedMs"`
	OK        bool   `json:"ok"`
	Output    string `json:"output,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Failure says where and why a file stopped.
type Failure struct {
	// Pos is FILE:LINE.
	Pos     string `json:"pos"`
	Line    int    `json:"line"`
	Command string `json:"command"`
	Message string `json:"message"`
}

type exitCoder interface{ ExitCode() int }

// ExitCodeOf returns the exit code an Exec error stands for.
func ExitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return ExitError
}

// Run runs every script in order, each in a fresh playground, stopping a
// script at its first failing line. The report's exit code is the worst
// of the files'.
func (r *Runner) Run(ctx context.Context, scripts []*Script) *Report {
	rep := &Report{OK: true, Files: []*FileReport{}}
	for _, s := range scripts {
		fr := r.runFile(ctx, s)
		rep.Files = append(rep.Files, fr)
		if !fr.OK {
			rep.OK = false
			rep.ExitCode = max(rep.ExitCode, fr.ExitCode)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return rep
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// promptf writes to Prompt, or Out.
func (r *Runner) promptf(format string, args ...any) {
	w := r.Prompt
	if w == nil {
		w = r.Out
	}
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// enter waits for Enter, for what (e.g. "before x.txt:3").
func (r *Runner) enter(ctx context.Context, what string) error {
	if r.Enter == nil {
		return fmt.Errorf("cannot wait for Enter %s: nothing to read it from", what)
	}
	if err := r.Enter(ctx); err != nil {
		return fmt.Errorf("waiting for Enter %s: %w", what, err)
	}
	return nil
}

// stepPrompt shows what comes next and waits for Enter.
func (r *Runner) stepPrompt(ctx context.Context, st Step) error {
	r.promptf("\n")
	for _, c := range st.Comment {
		r.promptf("%s\n", strings.TrimRight("# "+c, " "))
	}
	note := ""
	if st.Note != "" {
		note = "   # " + st.Note
	}
	r.promptf("next %s: %s%s\n[Enter runs it, Ctrl-C stops] ", st.Pos(), st.Text, note)
	return r.enter(ctx, "before "+st.Pos())
}

// pause runs a pause line: it shows its text and waits for Enter, unless
// NoPause skips it or Step has just waited.
func (r *Runner) pause(ctx context.Context, st Step, out io.Writer) error {
	text := strings.Join(st.Args[1:], " ")
	if text != "" {
		fmt.Fprintln(out, text)
	}
	switch {
	case r.NoPause:
		fmt.Fprintln(out, "(not waiting: --no-pause)")
		return nil
	case r.Step:
		return nil // the step's own prompt has waited
	}
	if text != "" {
		r.promptf("%9s  %s\n", "", text)
	}
	r.promptf("%9s  [paused at %s: Enter goes on] ", "", st.Pos())
	if err := r.enter(ctx, "at the pause of "+st.Pos()); err != nil {
		return &stepError{code: ExitError, err: fmt.Errorf("%w (without anyone at a terminal, run with --no-pause)", err)}
	}
	return nil
}

// stepError is a step's failure with its exit code.
type stepError struct {
	code int
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }
func (e *stepError) ExitCode() int { return e.code }

func (r *Runner) runFile(ctx context.Context, s *Script) *FileReport {
	start := r.now()
	fr := &FileReport{File: s.File, OK: true, Steps: []*StepReport{}}
	defer func() { fr.ElapsedMs = r.now().Sub(start).Milliseconds() }()

	desc, stop, err := r.Start(ctx, s)
	if err != nil {
		line, cmd := 0, ""
		if s.Up != nil {
			line, cmd = s.Up.Line, s.Up.Text
		}
		fr.OK, fr.ExitCode = false, ExitError
		fr.Failure = &Failure{Pos: fmt.Sprintf("%s:%d", s.File, line), Line: line, Command: cmd, Message: err.Error()}
		r.printf("=== %s\n--- FAIL %s: %v\n", s.File, fr.Failure.Pos, err)
		return fr
	}
	fr.Playground = desc
	r.printf("=== %s (%s)\n", s.File, desc)
	if (r.Step || r.Explain) && len(s.Header) > 0 {
		for _, c := range s.Header {
			r.promptf("%s\n", strings.TrimRight("# "+c, " "))
		}
		if r.Narrator != nil {
			r.Narrator.Header(s.File, s.Header)
		}
	}
	defer func() {
		if err := stop(); err != nil && fr.OK {
			fr.OK, fr.ExitCode = false, ExitError
			fr.Failure = &Failure{Pos: s.File + ":0", Message: fmt.Sprintf("shutting the playground down: %v", err)}
			r.printf("--- FAIL %s: shutting the playground down: %v\n", s.File, err)
		}
	}()

	js := r.newJobs(ctx)
	defer js.stop()
	// failed stops the file at st's line.
	failed := func(st Step, err error) *FileReport {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", ctx.Err())
		}
		fr.OK, fr.ExitCode = false, ExitCodeOf(err)
		if ctx.Err() != nil {
			fr.ExitCode = ExitError
		}
		fr.Failure = &Failure{Pos: st.Pos(), Line: st.Line, Command: st.Text, Message: err.Error()}
		r.printf("--- FAIL %s: %s\n%s\n", st.Pos(), st.Text, indent(err.Error()))
		return fr
	}

	var pending *pendingAsk
	for i, st := range s.Steps {
		if j, err := js.reap(); err != nil {
			return failed(j.st, err)
		}
		if r.Narrator != nil {
			r.Narrator.Next(st)
		}
		if r.Step && st.Args[0] == AskCommand || r.Explain && !r.Step {
			// The answer is the ask line's Enter; Explain never waits.
			if len(st.Comment) > 0 {
				r.promptf("\n")
				for _, c := range st.Comment {
					r.promptf("%s\n", strings.TrimRight("# "+c, " "))
				}
			}
		} else if r.Step {
			if err := r.stepPrompt(ctx, st); err != nil {
				if ctx.Err() != nil {
					err = fmt.Errorf("interrupted: %w", ctx.Err())
				}
				fr.OK, fr.ExitCode = false, ExitError
				fr.Failure = &Failure{Pos: st.Pos(), Line: st.Line, Command: st.Text, Message: err.Error()}
				r.printf("\n--- FAIL %s: %s\n%s\n", st.Pos(), st.Text, indent(err.Error()))
				return fr
			}
		}
		sr := &StepReport{Line: st.Line, Command: st.Text, StartMs: r.now().Sub(start).Milliseconds()}
		shown := st.Text
		if st.Args[0] == AskCommand {
			shown = "ask" // its text holds the answer
		}
		r.printf("%9s  %s", fmtElapsed(time.Duration(sr.StartMs)*time.Millisecond), shown)
		var out bytes.Buffer
		t0 := r.now()
		var err error
		// A pause that waits shows its text in its prompt, before the wait.
		waits := st.Args[0] == PauseCommand && !r.NoPause && !r.Step || st.Args[0] == AskCommand
		switch {
		case waits && st.Args[0] != AskCommand:
			r.printf("\n")
			err = r.pause(ctx, st, &out)
		case st.Args[0] == PauseCommand:
			err = r.pause(ctx, st, &out)
		case st.Args[0] == AskCommand:
			if pending != nil && pending.waits > 0 {
				r.verdict(pending) // the next ask came first
			}
			r.printf("\n")
			pending, err = r.askLine(ctx, st, s.Steps, i, &out)
		case st.Background:
			js.start(st, sr)
			out.WriteString("started in the background: the run goes on, and shows its result when it ends")
		default:
			err = r.Exec(ctx, st.Args, &out)
		}
		sr.ElapsedMs = r.now().Sub(t0).Milliseconds()
		sr.Output = strings.TrimRight(out.String(), "\n")
		sr.OK = err == nil
		if !waits {
			r.printf("  (%s)\n", fmtElapsed(time.Duration(sr.ElapsedMs)*time.Millisecond))
			r.printOutput(sr.Output)
		}
		fr.Steps = append(fr.Steps, sr)
		if r.Narrator != nil {
			r.Narrator.Ran(st, sr)
		}
		if pending != nil && st.Args[0] != AskCommand && err == nil {
			if st.Args[0] != "say" && st.Args[0] != "sleep" && st.Args[0] != PauseCommand {
				pending.evidence = append(pending.evidence, st.Line)
			}
			if pending.waits--; pending.waits <= 0 {
				r.verdict(pending)
				pending = nil
			}
		}
		if err != nil {
			sr.Error = err.Error()
			return failed(st, err)
		}
	}
	if pending != nil {
		r.verdict(pending)
	}
	if j, err := js.finish(); err != nil {
		return failed(j.st, err)
	}
	r.printf("--- PASS %s (%s)\n", s.File, fmtElapsed(r.now().Sub(start)))
	return fr
}

// printOutput shows a line's output, indented under it.
func (r *Runner) printOutput(output string) {
	for line := range strings.Lines(output) {
		r.printf("%9s  %s", "", line)
		if !strings.HasSuffix(line, "\n") {
			r.printf("\n")
		}
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// fmtElapsed prints a duration with millisecond precision in seconds.
func fmtElapsed(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}
