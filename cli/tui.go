package cli

import (
	"context"
	"fmt"
	"os"
	"time"

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
	if _, err := tui.Run(ctx, p.pg, tui.Options{Started: started, OwnsCluster: true}); err != nil {
		fmt.Fprintf(e.stderr, "kraftlab: %v; running headless\n", err)
		return false
	}
	return true
}
