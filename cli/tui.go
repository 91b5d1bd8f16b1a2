package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/scenario"
	"github.com/kraftlab/kraftlab/tui"
)

// showScreen runs the live screen (package tui) for the playground up
// started, when up's standard input and output are a terminal, until the
// user quits or ctx ends (kraftlab down, Ctrl-C as a signal). It reports
// false when there is no terminal or the screen failed, saying why, so
// that up runs headless instead.
func showScreen(ctx context.Context, e *env, p *playground, started time.Time) bool {
	out, ok := e.stdout.(*os.File)
	if !ok || !tui.IsTerminal(out) || !tui.IsTerminal(os.Stdin) {
		fmt.Fprintln(e.stdout, "(standard input or output is not a terminal: running headless)")
		return false
	}
	if _, err := tui.Run(ctx, p.pg, tui.Options{Started: started, OwnsCluster: true, Command: screenCommand(e, p.session)}); err != nil {
		fmt.Fprintf(e.stderr, "kraftlab: %v; running headless\n", err)
		return false
	}
	return true
}

// screenCommand runs a command typed after : on the live screen of the
// playground of session s, as a scenario line runs against its own
// playground: through the same command tree, checked as a scenario line
// is, what it prints written to out. The screen's output pane shows
// exactly what the command prints in a shell.
func screenCommand(e *env, s control.Session) func(context.Context, string, io.Writer) error {
	return func(ctx context.Context, line string, out io.Writer) error {
		args, err := scenario.Split(line)
		if err != nil {
			return usagef("%v", err)
		}
		if len(args) > 0 && args[0] == "kraftlab" {
			args = args[1:]
		}
		if len(args) == 0 {
			return usagef("type a command as after kraftlab in a shell, e.g.: status --replication")
		}
		if args[0] == "up" {
			return usagef("the playground runs already: up has no place on its screen")
		}
		if err := e.checkLine(args); err != nil {
			return err
		}
		return execute(ctx, args, &env{stdout: out, stderr: out, getenv: e.getenv, open: e.open, session: &s, scenario: true})
	}
}

// onTerminal reports whether the env's standard input and output are both
// a terminal, which the live screen needs.
func onTerminal(e *env) bool {
	out, ok := e.stdout.(*os.File)
	in, inOK := e.stdin.(*os.File)
	return ok && inOK && tui.IsTerminal(out) && tui.IsTerminal(in)
}

// runLessonScreen runs a lesson on the live screen with its lesson panel:
// it starts the lesson's playground, steps the scenario on a goroutine of
// its own, narrated to the panel and waiting on its keys, and shows the
// screen until the learner quits it. Quitting mid-lesson stops the run,
// then the playground. What the run printed is written out afterwards,
// since the screen owns the terminal while it runs.
func runLessonScreen(e *env, cmd *cobra.Command, l lesson, s *scenario.Script, profile string) error {
	ctx := cmd.Context()
	session, err := scenarioSession(e)
	if err != nil {
		return err
	}
	cfg, err := scenarioConfig(e, s, profile, nil)
	if err != nil {
		return usagef("lesson %s: %v", l.name, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "lesson %s: starting its playground (%s, session %s)…\n", l.name, shape(cfg), session.Name)
	started := time.Now()
	p, err := startPlayground(ctx, e, session, cfg)
	if err != nil {
		return err
	}
	link := tui.NewLesson(l.title, len(s.Steps))
	// transcript is written by the run's goroutine only, and read once
	// it has ended.
	var transcript bytes.Buffer
	r := &scenario.Runner{
		Start: func(context.Context, *scenario.Script) (string, func() error, error) {
			return shape(cfg) + ", session " + session.Name, func() error { return nil }, nil
		},
		Exec: func(ctx context.Context, args []string, out io.Writer) error {
			line := &env{stdout: out, stderr: out, getenv: e.getenv, open: e.open, session: &session, scenario: true}
			return execute(ctx, args, line)
		},
		Out:      &transcript,
		Prompt:   io.Discard, // the panel shows it
		Step:     true,
		Enter:    link.Enter,
		ReadLine: link.ReadLine,
		Narrator: link,
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// kraftlab down from another shell ends the screen, as it ends up's.
		select {
		case <-p.down:
			cancel()
		case <-runCtx.Done():
		}
	}()
	done := make(chan *scenario.Report, 1)
	go func() {
		rep := r.Run(runCtx, []*scenario.Script{s})
		if f := rep.Files[0]; f.OK {
			link.Finish(true, fmt.Sprintf("all %s ran; %s", plural(int64(len(f.Steps)), "line"), score(link)))
		} else {
			link.Finish(false, fmt.Sprintf("%s: %s", f.Failure.Pos, firstLineOf(f.Failure.Message)))
		}
		done <- rep
	}()
	_, screenErr := tui.Run(runCtx, p.pg, tui.Options{Started: started, OwnsCluster: true, Lesson: link, Command: screenCommand(e, session)})
	var rep *scenario.Report
	select {
	case rep = <-done: // the run ended before the screen did
	default:
		cancel() // the run's waits and lines end with the screen
		rep = <-done
	}
	stopErr := p.stop()

	w := cmd.OutOrStdout()
	w.Write(transcript.Bytes())
	f := rep.Files[0]
	switch {
	case screenErr != nil:
		return usagef("%v; to run the lesson in the shell instead: kraftlab lesson %s | cat", screenErr, l.name)
	case stopErr != nil:
		return usagef("shut the lesson's playground down: %v", stopErr)
	case f.OK:
		fmt.Fprintf(w, "lesson %s done (%s); its playground is down\n", l.name, score(link))
		return nil
	case runCtx.Err() != nil || strings.Contains(f.Failure.Message, tui.ErrScreenClosed.Error()):
		// Quit mid-lesson, or kraftlab down, or a signal; the run may have
		// ended first, its wait for Enter told that the screen closed.
		fmt.Fprintf(w, "left lesson %s at %s, before its end; its playground is down\n", l.name, f.Failure.Pos)
		return nil
	}
	return &exitError{code: f.ExitCode, err: fmt.Errorf("lesson %s stopped at %s: %s", l.name, f.Failure.Pos, f.Failure.Message)}
}

// score says how many of a lesson's predictions held.
func score(l *tui.Lesson) string {
	held, judged := l.Score()
	return fmt.Sprintf("%d of %d predictions held", held, judged)
}

// firstLineOf is s up to its first newline.
func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
