package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/control"
)

// pollInterval is how often wait looks at the status: a few times per
// election round of the fast profile, and cheap over the local socket.
const pollInterval = 50 * time.Millisecond

// checkResult is what wait and expect print with --json.
type checkResult struct {
	Condition string `json:"condition"`
	OK        bool   `json:"ok"`
	Saw       string `json:"saw"`
	ElapsedMs int64  `json:"elapsedMs"`
}

// singleEquals documents that a lone = is read as ==, as shells and SQL
// users type it; what wait and expect print is always ==.
const singleEquals = `A single = means ==: "hwm = 5" is "hwm == 5", and prints as such.`

func newWaitCommand(e *env, expect bool) *cobra.Command {
	name, short, long := "wait", "Wait until a condition holds (exit 1 if it does not in time)",
		`Wait looks at the playground's status every 50ms until the condition holds,
and fails with exit code 1, saying what it last saw, if it still does not
after --timeout. On a simulated playground (kraftlab up --sim) it runs
simulated time instead, looking every 10ms of it, until the condition holds
or --timeout of simulated time has passed.`
	example := "kraftlab wait leader\nkraftlab wait new-leader --timeout 10s\nkraftlab wait node 3 role Follower\nkraftlab wait hwm '>=' baseline+5"
	if expect {
		name, short, long = "expect", "Check a condition once (exit 1 if it does not hold)",
			`Expect looks at the playground's status once and fails with exit code 1,
saying what it saw, if the condition does not hold.`
		example = "kraftlab expect leader != 2\nkraftlab expect node old-leader state isolated"
	}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:               name + " COND",
		Short:             short,
		Long:              long + "\n\nConditions (words may be quoted together or not):\n" + condition.Forms + "\n" + singleEquals,
		Example:           indentExample(example),
		ValidArgsFunction: completeCondition(e),
	}
	if !expect {
		cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long")
	}
	addJSONFlag(cmd)
	addAttachFlags(cmd)
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s needs a condition, e.g.: %s (every condition: kraftlab %s --help)", name, firstLine(example), name)
		}
		if _, err := condition.Parse(strings.Join(args, " ")); err != nil {
			return usagef("%v (see: kraftlab %s --help)", err, name)
		}
		if !expect && timeout <= 0 {
			return usagef("--timeout must be positive, got %v", timeout)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cond, _ := condition.Parse(strings.Join(args, " "))
		src, err := e.viewSource(cmd)
		if err != nil {
			return err
		}
		defer src.Close()
		start := time.Now()
		ctx := cmd.Context()
		if !expect {
			if pg, ok := src.(playgroundSource); ok {
				if v, err := src.status(ctx); err == nil && v.Sim != nil {
					return simWait(cmd, pg.c, cond, timeout)
				}
			}
		}
		var deadline <-chan time.Time
		if !expect {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
		for {
			v, err := src.status(ctx)
			if err != nil {
				return err
			}
			ok, saw, err := cond.Eval(&v)
			unknownTopic := errors.Is(err, condition.ErrUnknownTopic) || errors.Is(err, condition.ErrUnknownPartition)
			switch {
			case (unknownTopic || errors.Is(err, condition.ErrNoCoordinator)) && !expect:
				// It may yet be created, by another shell or a client;
				// a group's partition may yet get a leader.
				saw, err = err.Error(), nil
			case unknownTopic:
				return usagef("%s %s: %v; list them with: %s topics", name, cond, err, self)
			case err != nil:
				return usagef("%s %s: %v", name, cond, err)
			}
			res := checkResult{Condition: cond.String(), OK: ok, Saw: saw, ElapsedMs: time.Since(start).Milliseconds()}
			if ok || expect {
				return report(cmd, name, res, 0)
			}
			select {
			case <-tick.C:
			case <-deadline:
				return report(cmd, name, res, timeout)
			case <-ctx.Done():
				return usagef("interrupted")
			}
		}
	}
	return cmd
}

// simWait is wait on a simulated playground: simulated time runs until
// the condition holds, or for --timeout of it, as fast as the CPU goes.
func simWait(cmd *cobra.Command, c *control.Client, cond condition.Condition, timeout time.Duration) error {
	res, err := c.Do(cmd.Context(), cluster.Action{Kind: cluster.ActRun, Until: cond.String(), AdvanceMs: timeout.Milliseconds()})
	if err != nil {
		return apiError(c, err)
	}
	out := checkResult{Condition: cond.String(), OK: res.Held, Saw: res.Message, ElapsedMs: res.RanMs}
	if out.OK && !wantJSON(cmd) {
		fmt.Fprintf(cmd.OutOrStdout(), "ok: %s (after %s of simulated time)\n", out.Saw, fmtDuration(time.Duration(out.ElapsedMs)*time.Millisecond))
		return nil
	}
	return report(cmd, "wait", out, timeout)
}

// report prints the outcome of wait or expect; a false condition is exit 1.
func report(cmd *cobra.Command, name string, res checkResult, waited time.Duration) error {
	w := cmd.OutOrStdout()
	if wantJSON(cmd) {
		if err := printJSON(w, res); err != nil {
			return err
		}
	} else if res.OK {
		after := ""
		if name == "wait" {
			after = fmt.Sprintf(" (after %s)", fmtDuration(time.Duration(res.ElapsedMs)*time.Millisecond))
		}
		fmt.Fprintf(w, "ok: %s%s\n", res.Saw, after)
	}
	switch {
	case res.OK:
		return nil
	case name == "wait":
		return failedf("wait %s: still false after %v; last saw: %s", res.Condition, waited, res.Saw)
	}
	return failedf("expect %s: false; saw: %s", res.Condition, res.Saw)
}

func fmtDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}
