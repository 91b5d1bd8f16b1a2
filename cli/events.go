package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/attach"
)

func newEventsCommand(e *env) *cobra.Command {
	var follow bool
	var after uint64
	var d diagramFlags
	cmd := &cobra.Command{
		Use:   "events [--follow] [--diagram svg|shiviz [--last N] [--since DURATION]]",
		Short: "Print what happened: elections, role changes, kills, link changes…",
		Long: `Events prints the playground's recent events, oldest first: elections, role
changes, BeginQuorumEpoch and EndQuorumEpoch, truncations, snapshots, and
every action taken. --follow keeps printing new ones until the playground
shuts down or you press Ctrl-C. --json prints one JSON object per line.

` + diagramHelp,
		Example: indentExample("kraftlab events\nkraftlab events --follow\nkraftlab events --json --after 120\nkraftlab events --diagram svg > run.svg\nkraftlab events --diagram svg --last 60 > election.svg\nkraftlab events --diagram shiviz --since 5s > run.log"),
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	cmd.Flags().Uint64Var(&after, "after", 0, "only events after this sequence number")
	addJSONFlag(cmd)
	d.add(cmd)
	addAttachFlags(cmd)
	cmd.Long += " On a real cluster events are\nwhat changed between two polls, marked (inferred), so they need --follow."
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if err := nodeArgs(0, 0, "no arguments", "kraftlab events --follow")(cmd, args); err != nil {
			return err
		}
		if follow && e.scenario {
			return usagef("events --follow never ends, so it cannot be a scenario line; use events without --follow")
		}
		return d.check(cmd, e.scenario)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cfg, ok, err := attachConfig(cmd); err != nil || ok {
			if err != nil {
				return err
			}
			if !follow || d.kind != "" || cmd.Flags().Changed("after") {
				return usagef("a real cluster's events are what changed between two polls from now on: use events --follow (no --after, no --diagram: its messages are not visible)")
			}
			return followAttached(cmd, cfg)
		}
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		if d.kind != "" {
			return d.write(cmd.Context(), c, cmd.OutOrStdout())
		}
		ctx := cmd.Context()
		if !follow {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, readTimeout)
			defer cancel()
		}
		return printEvents(cmd, c.Events(ctx, after, follow), follow, func(err error) error { return apiError(c, err) })
	}
	return cmd
}

// printEvents prints events as they come, a line or a JSON object each;
// with follow, Ctrl-C ends it without an error.
func printEvents(cmd *cobra.Command, events iter.Seq2[cluster.Event, error], follow bool, fail func(error) error) error {
	w := cmd.OutOrStdout()
	enc := json.NewEncoder(w)
	for ev, err := range events {
		if errors.Is(err, context.Canceled) && follow {
			return nil
		}
		if err != nil {
			return fail(err)
		}
		if wantJSON(cmd) {
			if err := enc.Encode(ev); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(w, ev)
	}
	return nil
}

// followAttached prints what changes between polls of a real cluster
// until Ctrl-C.
func followAttached(cmd *cobra.Command, cfg attach.Config) error {
	c, err := dialAttached(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return printEvents(cmd, c.Events(cmd.Context(), 0, true), true, attachedError)
}
