package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func newDiskCommand(e *env) *cobra.Command {
	var delay diskDelay
	cmd := &cobra.Command{
		Use:   "disk NODE --delay D",
		Short: "Make a node's disk slow (or normal again with --delay 0)",
		Long: `Disk makes every write and fsync of the node's files take D longer: its
metadata log, snapshots and quorum-state file and, on a broker, its
partition logs. The node keeps running and keeps its links; only its disk
is slow, as an overloaded or failing device is. The delay is the node's
hardware: it stays across kill, start and wipe, until "kraftlab disk NODE
--delay 0". It runs on the cluster clock: paused, the writes wait; slowed,
they take longer on the wall. A kill does not wait for them. Like a kill
it records the baseline: "target" then names the node, and "wait hwm >=
baseline+N" counts what commits meanwhile. On the live screen, w gives
the selected node's disk 100ms more, or makes it normal again.

Why commit goes on while a follower's disk is slow: the leader needs a
majority of the voters, itself included, to hold a record before it
commits it, and the other follower is enough. The slow follower appends
what it is given, each write and fsync costing D more, so its log end
falls behind while the high watermark moves on. Under pull (Kafka's) it
sets the pace: its next Fetch waits for its last write, so it fetches less
often and more at a time. Under push (up --quorum push) the leader sets
it: it streams AppendEntries up to 256 ahead of the answers, which queue
at the slow follower, time out, and make the leader probe it again. Once
its disk is normal again it catches up. On the leader a slow disk slows
commit itself: the leader counts its own log only once it is flushed.

` + nodeHelp,
		Example:           indentExample("kraftlab disk follower --delay 100ms\nkraftlab disk 3 --delay 0"),
		ValidArgsFunction: completeNodes(e, 1),
	}
	cmd.Flags().Var(&delay, "delay", fmt.Sprintf("make each write and fsync take this much longer, 0 to %v, e.g. 100ms", view.MaxDiskDelay))
	addJSONFlag(cmd)
	check := nodeArgs(1, 1, "one NODE", "kraftlab disk 3 --delay 100ms")
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return err
		}
		if !cmd.Flags().Changed("delay") {
			return usagef("disk needs --delay, e.g.: kraftlab disk %s --delay 100ms (to make it normal again: --delay 0)", args[0])
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, _ := refs(args)
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActDisk, Node: a, DelayMs: time.Duration(delay).Milliseconds()})
	}
	return cmd
}

// diskDelay is a disk delay flag: whole milliseconds, 0 to
// view.MaxDiskDelay.
type diskDelay time.Duration

func (d *diskDelay) String() string { return time.Duration(*d).String() }
func (d *diskDelay) Type() string   { return "duration" }
func (d *diskDelay) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%s", durationHint(s))
	}
	switch {
	case v < 0 || v > view.MaxDiskDelay:
		return fmt.Errorf("must be between 0 and %v", view.MaxDiskDelay)
	case v%time.Millisecond != 0:
		return fmt.Errorf("must be whole milliseconds")
	}
	*d = diskDelay(v)
	return nil
}
