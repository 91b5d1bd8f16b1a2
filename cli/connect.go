package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Deadlines of the calls to the control API, so that a playground that
// does not answer (stuck, or stopped without closing its socket) never
// hangs a command or a scenario line. An action's deadline is longer:
// starting a node replays its log, and a graceful stop waits up to 5s for
// a successor.
const (
	readTimeout   = 30 * time.Second
	actionTimeout = time.Minute
)

// sessionOf returns the session a command acts on.
func (e *env) sessionOf(cmd *cobra.Command) (control.Session, error) {
	if e.session != nil {
		return *e.session, nil
	}
	flag, _ := cmd.Flags().GetString("session")
	s, err := control.NewSession(control.Home(e.getenv), control.SessionName(flag, e.getenv))
	if err != nil {
		return control.Session{}, usagef("%v", err)
	}
	return s, nil
}

// connect returns a client for the command's session.
func (e *env) connect(cmd *cobra.Command) (*control.Client, error) {
	s, err := e.sessionOf(cmd)
	if err != nil {
		return nil, err
	}
	return control.NewClient(s), nil
}

// upHint is the command that starts the session's playground.
func upHint(session string) string {
	return self + " up" + sessionFlag(session)
}

// apiError turns a control API error into a one-line message that says
// what to do, with exit code 2.
func apiError(c *control.Client, err error) error {
	var ns *control.NoSessionError
	hint := ""
	switch {
	case errors.As(err, &ns):
		hint = "; start one with: " + upHint(ns.Session)
	case errors.Is(err, context.Canceled):
		return usagef("interrupted")
	case errors.Is(err, context.DeadlineExceeded):
		return usagef("playground %q did not answer in time (%v); it may be stuck: look at the shell that runs %s", c.Session().Name, err, upHint(c.Session().Name))
	case errors.Is(err, condition.ErrUnknownNode):
		hint = "; list them with: kraftlab nodes"
	case errors.Is(err, condition.ErrNoLeader):
		hint = "; wait for one with: kraftlab wait leader"
	case errors.Is(err, cluster.ErrClosed):
		hint = "; start a new one with: " + upHint(c.Session().Name)
	}
	return usagef("%v%s", err, hint)
}

// status fetches the view, within readTimeout.
func status(ctx context.Context, c *control.Client) (view.View, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	v, err := c.Status(ctx)
	if err != nil {
		return v, apiError(c, err)
	}
	return v, nil
}
