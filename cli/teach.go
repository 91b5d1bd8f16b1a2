package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/attach"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/tui"
)

// The commands an instructor uses to show a playground to a room: a live
// screen on a running playground, and the lines that pace a scenario.

// maxSleep bounds sleep: a scenario that waits longer is a mistake.
const maxSleep = 10 * time.Minute

func newTeachCommands(e *env) []*cobra.Command {
	return []*cobra.Command{newTUICommand(e), newSayCommand(e), newSleepCommand(), newPauseCommand(e)}
}

func newTUICommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Open the live screen on a running playground (quitting leaves it running), or read-only on a real Kafka cluster",
		Long: `Tui opens the live screen of "kraftlab up" on a playground that already runs:
one started with "kraftlab up --headless", another "kraftlab up" screen, or
the playground of "kraftlab scenario run --session NAME". Several screens may
watch one playground at once (a projector and the instructor's laptop); each
shows the same views and events, and any of them may break and mend it.

Quitting a tui screen (q, then y) leaves the playground running: only up's
own screen owns the playground and stops it when it quits. Stop it with
"kraftlab down". The screen needs a terminal.`,
		Example:     indentExample("kraftlab tui\nkraftlab tui --session demo\nkraftlab tui --bootstrap-server localhost:9092"),
		Args:        nodeArgs(0, 0, "no arguments", "kraftlab tui --session demo"),
		Annotations: map[string]string{annotNoScenario: "it needs a terminal and a person to quit it"},
	}
	addAttachFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cfg, ok, err := attachConfig(cmd); err != nil || ok {
			if err != nil {
				return err
			}
			return e.attachedScreen(cmd, cfg)
		}
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := status(cmd.Context(), c); err != nil {
			return err
		}
		out, ok := e.stdout.(*os.File)
		in, inOK := e.stdin.(*os.File)
		if !ok || !inOK || !tui.IsTerminal(out) || !tui.IsTerminal(in) {
			return usagef("kraftlab tui needs a terminal on standard input and output; from a script, use: kraftlab status%s or kraftlab events --follow%s", sessionFlag(c.Session().Name), sessionFlag(c.Session().Name))
		}
		quit, err := tui.Run(cmd.Context(), watched{c}, tui.Options{Command: screenCommand(e, c.Session())})
		if err != nil {
			return usagef("%v", err)
		}
		if !quit {
			fmt.Fprintf(e.stdout, "playground %q shut down\n", c.Session().Name)
			return nil
		}
		fmt.Fprintf(e.stdout, "left the screen; playground %q keeps running (stop it with: kraftlab down%s)\n", c.Session().Name, sessionFlag(c.Session().Name))
		return nil
	}
	return cmd
}

// attachedScreen is the live screen on a real cluster: read-only, so its
// keys that act are refused and it has no command line.
func (e *env) attachedScreen(cmd *cobra.Command, cfg attach.Config) error {
	out, ok := e.stdout.(*os.File)
	in, inOK := e.stdin.(*os.File)
	if !ok || !inOK || !tui.IsTerminal(out) || !tui.IsTerminal(in) {
		return usagef("kraftlab tui needs a terminal on standard input and output; from a script, use: kraftlab status --%s ...", flagBootstrap)
	}
	c, err := dialAttached(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := tui.Run(cmd.Context(), c, tui.Options{ReadOnly: true}); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// watched is a playground a tui screen watches over its socket: once the
// socket is gone, the playground has shut down (the screen then ends, as
// up's own does), rather than a read that failed.
type watched struct{ *control.Client }

func (w watched) Status(ctx context.Context) (view.View, error) {
	v, err := w.Client.Status(ctx)
	var ns *control.NoSessionError
	if errors.As(err, &ns) {
		return v, fmt.Errorf("%w: its control socket is gone", cluster.ErrClosed)
	}
	return v, err
}

func newSayCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "say TEXT...",
		Short: "Show a line of text on every live screen of the playground",
		Long: `Say publishes TEXT on the playground's event stream as an event of its own
kind, "say": every live screen watching the playground shows it in its event
log and on its status line, "kraftlab events" lists it, and say prints it.
In a scenario it narrates the demo for the room. The words may be quoted
together or not; at most ` + fmt.Sprint(cluster.MaxSayBytes) + ` bytes, one line.`,
		Example: indentExample("kraftlab say Now the leader dies: watch the followers' fetches fail\nkraftlab say 'Node 3 is behind the log start: it needs the snapshot'"),
	}
	addJSONFlag(cmd)
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if err := cluster.ValidateSay(strings.Join(args, " ")); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), readTimeout)
		defer cancel()
		ev, err := c.Say(ctx, strings.Join(args, " "))
		if err != nil {
			return apiError(c, err)
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), ev)
		}
		fmt.Fprintln(cmd.OutOrStdout(), "» "+ev.Message)
		return nil
	}
	return cmd
}

func newSleepCommand() *cobra.Command {
	var d time.Duration
	cmd := &cobra.Command{
		Use:   "sleep D",
		Short: "Wait for a while (a Go duration, at most 10m)",
		Long: `Sleep waits for D, a Go duration such as 500ms, 2s or 1m30s (at most ` + maxSleep.String() + `),
so that a scenario gives the room time to look, or lets time pass without
waiting for a condition. Ctrl-C ends it. To wait for a state, use wait.`,
		Example: indentExample("kraftlab sleep 2s"),
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("sleep takes one duration, e.g.: kraftlab sleep 2s")
		}
		v, err := time.ParseDuration(args[0])
		switch {
		case err != nil:
			return usagef("bad duration %q: %s", args[0], durationHint(args[0]))
		case v < 0:
			return usagef("sleep %v: the duration must not be negative", v)
		case v > maxSleep:
			return usagef("sleep %v: at most %v; to wait for a state, use wait COND --timeout D", v, maxSleep)
		}
		d = v
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-cmd.Context().Done():
			return usagef("interrupted")
		}
	}
	return cmd
}

func newPauseCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "pause [TEXT...]",
		Short: "Print TEXT and wait for Enter",
		Long: `Pause prints TEXT and waits until Enter is pressed, so that an instructor
decides when a scenario goes on. It reads the line from standard input (a
terminal, or whatever is piped in). When standard input ends, or is not
there (</dev/null, cron, CI), pause fails at once with exit code 2 instead of
hanging; "kraftlab scenario run --no-pause" skips pauses, and with
"scenario run --step" a pause does not wait a second time.`,
		Example: indentExample("kraftlab pause 'Ask the room: who will be the next leader?'"),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if text := strings.Join(args, " "); text != "" {
				fmt.Fprintln(w, text)
			}
			fmt.Fprint(w, "[Enter goes on] ")
			if err := newEnterReader(e, w).wait(cmd.Context()); err != nil {
				return usagef("pause: %v", err)
			}
			return nil
		},
	}
}

// enterReader waits for Enter on the env's standard input. Lines are read
// one at a time by a goroutine of their own, so that Ctrl-C ends a wait.
type enterReader struct {
	r    *bufio.Reader
	echo io.Writer // gets the newline a terminal would have echoed; nil on a terminal
	mu   sync.Mutex
}

func newEnterReader(e *env, prompt io.Writer) *enterReader {
	in := e.stdin
	if in == nil {
		in = strings.NewReader("")
	}
	k := &enterReader{r: bufio.NewReader(in), echo: prompt}
	if f, ok := in.(*os.File); ok && tui.IsTerminal(f) {
		k.echo = nil
	}
	return k
}

// errNoInput says that nobody can press Enter.
var errNoInput = errors.New("standard input ended, so nobody can press Enter")

func (k *enterReader) wait(ctx context.Context) error {
	_, err := k.line(ctx, false)
	return err
}

// readLine reads one typed line (an ask line's answer), echoing it where
// no terminal does.
func (k *enterReader) readLine(ctx context.Context) (string, error) {
	return k.line(ctx, true)
}

func (k *enterReader) line(ctx context.Context, echoLine bool) (string, error) {
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		line, err := k.r.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			err = errNoInput
		} else if errors.Is(err, io.EOF) {
			err = nil
		}
		done <- result{strings.TrimRight(line, "\r\n"), err}
	}()
	select {
	case res := <-done:
		if res.err == nil && k.echo != nil {
			if echoLine {
				fmt.Fprint(k.echo, res.line)
			}
			fmt.Fprintln(k.echo)
		}
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
