package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func newRewindCommand(e *env) *cobra.Command {
	var branch int
	cmd := &cobra.Command{
		Use:   "rewind STEP [--branch B]",
		Short: "Replay a simulated run to an earlier step (up --sim)",
		Long: `Rewind builds a simulated playground (kraftlab up --sim) again from its seed
and replays its steps up to STEP: the same seed and the same steps give the
same run, event for event. STEP 0 is the cluster just started. The steps
after STEP stay in the history; the next action starts a new branch there,
and rewind --branch B STEP goes to any step of any branch. kraftlab history
shows the steps and the branches.`,
		Example: indentExample("kraftlab rewind 3\nkraftlab rewind 0\nkraftlab rewind 7 --branch 1"),
	}
	cmd.Flags().IntVar(&branch, "branch", 0, "the branch to replay (default: the current one)")
	addJSONFlag(cmd)
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("rewind takes one step number, e.g.: kraftlab rewind 3 (the steps: kraftlab history)")
		}
		if n, err := strconv.Atoi(args[0]); err != nil || n < 0 {
			return usagef("rewind %s: want a step number, 0 or more (the steps: kraftlab history)", args[0])
		}
		if branch < 0 {
			return usagef("--branch %d: want a branch number from 1 (the branches: kraftlab history)", branch)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		n, _ := strconv.Atoi(args[0])
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActRewind, Step: n, Branch: branch})
	}
	return cmd
}

func newHistoryCommand(e *env) *cobra.Command {
	var log, asScenario bool
	cmd := &cobra.Command{
		Use:   "history [--log]",
		Short: "Show a simulated run's steps and branches (up --sim)",
		Long: `History shows a simulated playground's run (kraftlab up --sim) as its seed
makes it: each branch's steps (the actions, and the stretches of simulated
time that waits, clock advance and a running clock took), with the time
each began, the branch it left and where, and where the run stands now.
--log prints the current branch's event log up to where it stands instead:
every step and what the cluster reported in it, with simulated times. Two
runs of one seed with the same steps print the same log. --scenario prints
the current branch up to where it stands as a scenario file (its up line,
then a line a step; a wait or a running clock becomes the clock advance it
took): kraftlab scenario run takes it again, event for event.`,
		Example: indentExample("kraftlab history\nkraftlab history --log\nkraftlab history --scenario > branch.txt\nkraftlab history --json"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab history"),
	}
	cmd.Flags().BoolVar(&log, "log", false, "print the current branch's event log")
	cmd.Flags().BoolVar(&asScenario, "scenario", false, "print the current branch up to where the run stands as a scenario file")
	cmd.MarkFlagsMutuallyExclusive("log", "scenario")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		w := cmd.OutOrStdout()
		if log {
			res, err := c.Do(cmd.Context(), cluster.Action{Kind: cluster.ActHistory})
			if err != nil {
				return apiError(c, err)
			}
			if wantJSON(cmd) {
				return printJSON(w, res.Log)
			}
			for _, ev := range res.Log {
				fmt.Fprintln(w, ev)
			}
			return nil
		}
		v, err := status(cmd.Context(), c)
		if err != nil {
			return err
		}
		if v.Sim == nil {
			return usagef("this playground is not simulated: history is of kraftlab up --sim --seed N")
		}
		if asScenario {
			return printScenario(w, &v)
		}
		if wantJSON(cmd) {
			return printJSON(w, v.Sim)
		}
		printHistory(w, v.Sim)
		return nil
	}
	return cmd
}

// printHistory prints the branches, the current one's position marked.
func printHistory(w io.Writer, s *view.Sim) {
	fmt.Fprintf(w, "seed %d: at step %d of branch %d\n", s.Seed, s.Step, s.Branch)
	for _, b := range s.Branches {
		from := ""
		if b.Parent > 0 {
			from = fmt.Sprintf(", left branch %d after its step %d", b.Parent, b.Fork)
		}
		fmt.Fprintf(w, "\nbranch %d%s:\n", b.ID, from)
		for i, st := range b.Steps {
			n := i + 1
			if n <= b.Fork {
				continue // the parent's
			}
			mark := "  "
			if b.ID == s.Branch && n == s.Step {
				mark = "▶ "
			}
			fmt.Fprintf(w, "%s%4d  %10s  %s\n", mark, n, fmtSimTime(st.AtMs), st.Action)
		}
		if b.ID == s.Branch && s.Step == 0 {
			fmt.Fprintln(w, "▶    0  (the cluster just started)")
		}
		if len(b.Steps) == b.Fork {
			fmt.Fprintln(w, strings.Repeat(" ", 6)+"(no steps of its own)")
		}
	}
}

// printScenario prints the current branch, up to where the run stands,
// as a scenario: the up line of the seed, profile and settings, then each
// step's line.
func printScenario(w io.Writer, v *view.View) error {
	s := v.Sim
	up := fmt.Sprintf("up --sim --seed %d --profile %s", s.Seed, v.Profile)
	base, err := cluster.ProfileSettings(cluster.ProfileName(v.Profile))
	if err != nil {
		return err
	}
	for _, k := range cluster.SettingKeys() {
		if want, err := base.Get(k.Key); err == nil && v.Settings[k.Key] != "" && v.Settings[k.Key] != want {
			up += fmt.Sprintf(" --set %s=%s", k.Key, v.Settings[k.Key])
		}
	}
	fmt.Fprintf(w, "# seed %d, branch %d to step %d, as kraftlab history --scenario wrote it:\n# kraftlab scenario run takes the same steps again, event for event.\n%s\n", s.Seed, s.Branch, s.Step, up)
	for _, b := range s.Branches {
		if b.ID != s.Branch {
			continue
		}
		for _, st := range b.Steps[:s.Step] {
			fmt.Fprintln(w, st.Replay)
		}
	}
	return nil
}

// fmtSimTime spells a time since the run started, as the event log's.
func fmtSimTime(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}
