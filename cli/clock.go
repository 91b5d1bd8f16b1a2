package cli

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/clock"
)

// maxAdvance bounds one clock advance: longer than any timeout a
// playground sets, short enough to be a typo's limit.
const maxAdvance = 24 * time.Hour

func newClockCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clock [pause | resume | slow N | advance DURATION]",
		Short: "Show, pause, slow down or advance the cluster's clock",
		Long: `Clock shows the playground's cluster clock: running, paused since when, or
in slow motion, and how far cluster time is behind the wall. Every timer of
the cluster reads this one clock: raft's election and fetch timeouts, the
brokers' heartbeats and sessions, ISR lag, long-poll waits, retries and
request timeouts, the loads.

  pause             stop cluster time: no timer fires, every message between
                    nodes waits at its link; the nodes still answer clients
                    (Kafka clients, kraftlab status), but nothing that waits
                    for time or for another node goes on
  resume            start cluster time again where it stood; the held
                    messages go on, in order
  slow N            cluster time passes at 1/N of wall speed (1 to 1000;
                    slow 1 is normal speed), link delays too
  advance DURATION  while paused, move cluster time on by DURATION (a Go
                    duration): the timers that fall due fire, in order, as
                    if that much time had passed with every message held

On a simulated playground (kraftlab up --sim) the clock is simulated time,
which stands still between actions: advance runs DURATION of it at once (as
fast as the CPU goes), resume runs it at wall speed (over slow's factor)
until pause, and each becomes a step of the run's history.

Kafka has no such clock: this is kraftlab's own, for looking at a cluster
while nothing moves.`,
		Example: indentExample("kraftlab clock\nkraftlab clock pause\nkraftlab clock advance 2s\nkraftlab clock resume\nkraftlab clock slow 10"),
		Args: func(cmd *cobra.Command, args []string) error {
			_, err := clockAction(args)
			return err
		},
		ValidArgs: []string{string(cluster.ClockPause), string(cluster.ClockResume), string(cluster.ClockSlow), string(cluster.ClockAdvance)},
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, err := clockAction(args)
		if err != nil {
			return err
		}
		return doAction(e, cmd, a)
	}
	return cmd
}

// clockAction reads clock's arguments.
func clockAction(args []string) (cluster.Action, error) {
	a := cluster.Action{Kind: cluster.ActClock}
	if len(args) == 0 {
		return a, nil
	}
	op, err := cluster.ParseClockOp(args[0])
	if err != nil {
		return a, usagef("clock %s: want pause, resume, slow N or advance DURATION, e.g. kraftlab clock advance 2s", args[0])
	}
	a.Clock = op
	want := map[cluster.ClockOp]string{cluster.ClockSlow: "slow N, e.g. kraftlab clock slow 10", cluster.ClockAdvance: "advance DURATION, e.g. kraftlab clock advance 2s"}
	if w, ok := want[op]; ok != (len(args) == 2) || len(args) > 2 {
		if !ok {
			return a, usagef("clock %s takes no argument", op)
		}
		return a, usagef("want clock %s", w)
	}
	switch op {
	case cluster.ClockSlow:
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > clock.MaxSlow {
			return a, usagef("clock slow %s: want a whole number from 1 (normal speed) to %d", args[1], clock.MaxSlow)
		}
		a.Slow = n
	case cluster.ClockAdvance:
		d, err := time.ParseDuration(args[1])
		if err != nil || d < time.Millisecond || d > maxAdvance {
			return a, usagef("clock advance %s: want a duration from 1ms to %v, e.g. 500ms or 2s", args[1], maxAdvance)
		}
		a.AdvanceMs = d.Milliseconds()
	}
	return a, nil
}
