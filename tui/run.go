package tui

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/kraftlab/kraftlab/cluster"
)

// IsTerminal reports whether f is a terminal the screen can run on.
func IsTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// Run shows the screen for ctrl on the terminal (standard input and
// output) until the user quits, the playground shuts down or ctx ends.
// It reports whether the user asked to quit.
func Run(ctx context.Context, ctrl cluster.Operator, opts Options) (quit bool, err error) {
	m := New(ctx, ctrl, opts)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithAltScreen(), tea.WithMouseCellMotion())
	_, err = p.Run()
	if opts.Lesson != nil {
		opts.Lesson.Close() // nobody can press a key for the lesson any more
	}
	if (errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) || errors.Is(err, tea.ErrInterrupted) {
		err = nil // ended from outside: kraftlab down, Ctrl-C sent as a signal
	}
	if err != nil {
		return m.Quitting(), fmt.Errorf("run the screen: %w", err)
	}
	return m.Quitting(), nil
}
