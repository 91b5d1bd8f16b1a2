package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

const nodeHelp = "NODE is a node ID (controllers 1..N, brokers 101..100+M), leader, follower\n(the running follower of the leader with the lowest ID), old-leader (the\nleader before the last kill, stop, isolate, resign, wipe, disk or mark),\ntarget (the node that action targeted) or controller (the active controller:\nthe leader, or in zk mode the broker holding /controller). In zk mode, kill,\nstop and start also take zk, the ZooKeeper server, and partition BROKER zk\ncuts a broker off from it."

// nodeCommand describes one single-node action.
type nodeCommand struct {
	kind    cluster.ActionKind
	short   string
	long    string
	example string
}

var nodeCommands = []nodeCommand{
	{cluster.ActKill, "Kill a node abruptly, as kill -9 would",
		"Kill stops the node at once: its connections drop and it writes nothing more.\nIts data stays on disk for \"kraftlab start\". Kill the leader to watch the\nfollowers notice the silence (controller.quorum.fetch.timeout.ms) and elect.",
		"kraftlab kill leader\nkraftlab kill 3"},
	{cluster.ActStart, "Start a killed or stopped node again",
		"Start restarts the node from its data folder: it reads its quorum state and\nlog back, then fetches from the leader what it missed, or a snapshot when the\nleader's log no longer goes back that far.",
		"kraftlab start 3"},
	{cluster.ActStop, "Stop a node gracefully",
		"Stop shuts the node down cleanly. A leader first resigns with EndQuorumEpoch,\nso the others elect at once instead of waiting for a timeout.",
		"kraftlab stop leader"},
	{cluster.ActIsolate, "Cut a node off from every other node",
		"Isolate takes down every link to and from the node; the node keeps running.\nAn isolated leader resigns once a majority has not fetched from it for 1.5 x\ncontroller.quorum.fetch.timeout.ms (check-quorum). Undo with \"kraftlab heal\".",
		"kraftlab isolate leader"},
	{cluster.ActSnapshot, "Make a node snapshot its metadata and trim its log",
		"Snapshot makes the node write a snapshot at its high watermark and move its\nlog start offset there. A follower that is further behind must then fetch\nthe snapshot (FetchSnapshot) before it can fetch the log again.",
		"kraftlab snapshot leader"},
	{cluster.ActWipe, "Make a node lose its disk and start again empty",
		"Wipe kills the node if it runs, deletes its data folder (log, snapshots,\nquorum-state file) as a lost disk would, formats it again for the same\ncluster and node, and starts it: it fetches everything back from the leader.\nA wiped voter forgot its vote too. In a dynamic quorum (kraft.version 1, the\ndefault) the new folder has a new directory id, which the voter set does not\nname: the node comes back as an observer, counted nowhere, until\n\"controllers remove NODE\" drops its old entry and \"controllers add NODE\"\nadds it again (KIP-853). With a static voter set (up --set kraft.version=0)\nnothing tells the others it is not the voter it was, so it can help elect a\nleader that lacks committed records.",
		"kraftlab wipe 3"},
}

func newNodeActionCommands(e *env) []*cobra.Command {
	var cmds []*cobra.Command
	for _, nc := range nodeCommands {
		cmd := &cobra.Command{
			Use:               string(nc.kind) + " NODE",
			Short:             nc.short,
			Long:              nc.long + "\n\n" + nodeHelp,
			Example:           indentExample(nc.example),
			Args:              nodeArgs(1, 1, "one NODE", firstLine(nc.example)),
			ValidArgsFunction: completeNodes(e, 1),
		}
		addJSONFlag(cmd)
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			ref, _ := condition.ParseNodeRef(args[0])
			return doAction(e, cmd, cluster.Action{Kind: nc.kind, Node: ref})
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

func newResignCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resign",
		Short: "Make the leader resign (EndQuorumEpoch) and stay up",
		Long: `Resign makes the current leader step down gracefully without stopping: it
sends EndQuorumEpoch to the other voters, naming the most caught-up ones as
preferred successors, and the quorum elects a new leader at once.`,
		Example: indentExample("kraftlab resign"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab resign"),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActResign})
	}
	return cmd
}

func newMarkCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mark",
		Short: "Record the baseline now: the leader, its epoch and high watermark",
		Long: `Mark records the baseline without acting on any node: the leader, the
highest epoch with a leader and the metadata log's high watermark, as a
kill, stop, isolate, resign, wipe or disk records them just before it acts.
Conditions then compare with it: "wait hwm > baseline", "expect node 2
log-end == baseline+2", "wait new-leader". With the cluster clock paused,
mark once the links are quiet, then watch each stepped message move the
quorum.`,
		Example: indentExample("kraftlab mark\nkraftlab expect hwm == baseline"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab mark"),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActMark})
	}
	return cmd
}

func newPartitionCommand(e *env) *cobra.Command {
	var oneway bool
	cmd := &cobra.Command{
		Use:   "partition A B",
		Short: "Cut the link between two nodes",
		Long: `Partition drops every message between A and B; both keep running and keep
talking to everyone else. With --oneway only what A sends B is dropped (its
requests to B and its answers to B's requests), as a one-way network fault
would.

` + nodeHelp,
		Example:           indentExample("kraftlab partition 1 2\nkraftlab partition leader 3 --oneway"),
		Args:              nodeArgs(2, 2, "two NODEs", "kraftlab partition 1 2"),
		ValidArgsFunction: completeNodes(e, 2),
	}
	cmd.Flags().BoolVar(&oneway, "oneway", false, "drop only what A sends B")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, b := refs(args)
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActPartition, Node: a, Peer: b, OneWay: oneway})
	}
	return cmd
}

func newHealCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "heal [A [B]]",
		Short: "Restore links: between A and B, every link of A, or all of them",
		Long: `Heal removes every fault (partition, isolation, delay, jitter, loss) from the
link between A and B in both directions; given one node, from every link to
and from it (what "kraftlab isolate A" did); given no nodes, from every link.

` + nodeHelp,
		Example: indentExample("kraftlab heal\nkraftlab heal 3\nkraftlab heal 1 2"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return nodeArgs(1, 1, "", "")(cmd, args)
			}
			return nodeArgs(0, 2, "no NODE, one or two", "kraftlab heal 3 or kraftlab heal 1 2")(cmd, args)
		},
		ValidArgsFunction: completeNodes(e, 2),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, b := refs(args)
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActHeal, Node: a, Peer: b})
	}
	return cmd
}

func newLinkCommand(e *env) *cobra.Command {
	var delay, jitter msDuration
	var loss lossValue
	var oneway bool
	cmd := &cobra.Command{
		Use:   "link A B [--delay D] [--jitter D] [--loss P]",
		Short: "Slow down or make lossy the link between two nodes",
		Long: `Link sets the quality of the link between A and B, both ways unless --oneway:
each message is held back by the delay plus a random extra of up to the
jitter (in order, as on a TCP connection), and the given share of messages
is lost. Options left out are set to zero; a
partition on the link stays. Undo with "kraftlab heal A B".

Why a follower behind a lossy link flaps between Follower and Prospective:
each lost message costs its sender a whole request timeout
(controller.quorum.request.timeout.ms) before it asks again. A follower
whose Fetch, or the leader's answer to it, is lost hears nothing from the
leader for that long, which is as long as controller.quorum.fetch.timeout.ms
in every profile (4000 ms on workshop, 2000 ms on kafka): it becomes
Prospective and asks for pre-votes, and turns Follower again at the
leader's next answer. "kraftlab up --help" lists both timeouts.

` + nodeHelp,
		Example:           indentExample("kraftlab link 1 2 --delay 200ms --jitter 50ms\nkraftlab link leader 3 --loss 20%"),
		ValidArgsFunction: completeNodes(e, 2),
	}
	cmd.Flags().Var(&delay, "delay", "hold each message back this long, e.g. 200ms")
	cmd.Flags().Var(&jitter, "jitter", "add a random extra delay of up to this much")
	cmd.Flags().Var(&loss, "loss", "drop this share of messages, e.g. 10% or 0.1")
	cmd.Flags().BoolVar(&oneway, "oneway", false, "change only the direction A → B")
	addJSONFlag(cmd)
	check := nodeArgs(2, 2, "two NODEs", "kraftlab link 1 2 --delay 200ms")
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return err
		}
		if !cmd.Flags().Changed("delay") && !cmd.Flags().Changed("jitter") && !cmd.Flags().Changed("loss") {
			return usagef("link needs --delay, --jitter or --loss, e.g.: kraftlab link 1 2 --delay 200ms (to clear a link: kraftlab heal 1 2)")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, b := refs(args)
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActLink, Node: a, Peer: b, OneWay: oneway,
			DelayMs: time.Duration(delay).Milliseconds(), JitterMs: time.Duration(jitter).Milliseconds(), Loss: float64(loss)})
	}
	return cmd
}

func newDownCommand(e *env) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Shut the playground down",
		Long: `Down asks the running playground to stop every node and exit, and waits
(up to --timeout) until its up has let the session go: nodes stopped, the
temporary data folder and the session folder removed.`,
		Example:     indentExample("kraftlab down\nkraftlab down --session demo"),
		Args:        nodeArgs(0, 0, "no arguments", "kraftlab down"),
		Annotations: map[string]string{annotNoScenario: "a scenario's playground shuts down by itself when the file ends"},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 15*time.Second, "how long to wait for the playground to exit")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
		defer cancel()
		if err := c.Down(ctx); err != nil {
			return apiError(c, err)
		}
		s := c.Session()
		if err := waitSessionGone(ctx, s); err != nil {
			return usagef("playground %q stopped answering but still holds its session after %v (%v); look at the shell that runs %s", s.Name, timeout, err, upHint(s.Name))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "playground %q is down: its nodes are stopped and its folders removed\n", s.Name)
		return nil
	}
	return cmd
}

// doAction performs an action through the control API and prints its result.
func doAction(e *env, cmd *cobra.Command, a cluster.Action) error {
	c, err := e.connect(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), actionTimeout)
	defer cancel()
	res, err := c.Do(ctx, a)
	if err != nil {
		return apiError(c, err)
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), res)
	}
	fmt.Fprintln(cmd.OutOrStdout(), res.Message)
	return nil
}

func refs(args []string) (a, b condition.NodeRef) {
	if len(args) >= 1 {
		a, _ = condition.ParseNodeRef(args[0])
	}
	if len(args) == 2 {
		b, _ = condition.ParseNodeRef(args[1])
	}
	return a, b
}

// nodeArgs accepts exactly lo or hi node references (lo == hi for a fixed
// count) and reports anything else with an example.
func nodeArgs(lo, hi int, want, example string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != lo && len(args) != hi {
			got := "nothing"
			if len(args) > 0 {
				got = fmt.Sprintf("%d (%s)", len(args), strings.Join(args, " "))
			}
			return usagef("%s takes %s, got %s; e.g.: %s", cmd.Name(), want, got, example)
		}
		for _, a := range args {
			if _, err := condition.ParseNodeRef(a); err != nil {
				return usagef("%v", err)
			}
		}
		return nil
	}
}

func addJSONFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("json", false, "print JSON instead of text")
}

func wantJSON(cmd *cobra.Command) bool {
	j, _ := cmd.Flags().GetBool("json")
	return j
}

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func indentExample(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// msDuration is a non-negative duration flag in whole milliseconds.
type msDuration time.Duration

func (d *msDuration) String() string { return time.Duration(*d).String() }
func (d *msDuration) Type() string   { return "duration" }
func (d *msDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Errorf("%s", durationHint(s))
	case v < 0:
		return fmt.Errorf("must not be negative")
	case v%time.Millisecond != 0:
		return fmt.Errorf("must be whole milliseconds")
	case v > view.MaxLinkDelay:
		return fmt.Errorf("must be at most %v", view.MaxLinkDelay)
	}
	*d = msDuration(v)
	return nil
}

// lossValue is a share of messages: 10% or 0.1.
type lossValue float64

func (l *lossValue) String() string { return strconv.FormatFloat(float64(*l)*100, 'g', -1, 64) + "%" }
func (l *lossValue) Type() string   { return "percent" }
func (l *lossValue) Set(s string) error {
	num, pct := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return fmt.Errorf("want a share of messages such as 10%% or 0.1")
	}
	if pct {
		v /= 100
	}
	if !(v >= 0 && v <= 1) {
		return fmt.Errorf("want 0%% to 100%% (or 0 to 1); a plain number above 1 needs a %% sign")
	}
	*l = lossValue(v)
	return nil
}
