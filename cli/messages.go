package cli

import (
	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// messageFlags are the filters of messages, step and drop.
type messageFlags struct {
	id                uint64
	api, from, to     string
	request, response bool
	all               bool
	until             string
	fromRef, toRef    condition.NodeRef
	direction         view.MessageDirection
}

func (f *messageFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().Uint64Var(&f.id, "id", 0, "only the message with this id (kraftlab messages lists them)")
	cmd.Flags().StringVar(&f.api, "api", "", what+" of this API, by Kafka's name: Fetch, Vote, BeginQuorumEpoch, BrokerHeartbeat…")
	cmd.Flags().StringVar(&f.from, "from", "", what+" sent by this NODE (a response is sent by the node that answers)")
	cmd.Flags().StringVar(&f.to, "to", "", what+" going to this NODE")
	cmd.Flags().BoolVar(&f.request, "request", false, "only requests")
	cmd.Flags().BoolVar(&f.response, "response", false, "only responses")
	addJSONFlag(cmd)
}

// check validates the flags and resolves their node references.
func (f *messageFlags) check(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes flags only, e.g.: kraftlab %s --api Fetch --from 2 --to 1", cmd.Name(), cmd.Name())
	}
	for _, r := range []struct {
		flag, s string
		ref     *condition.NodeRef
	}{{"--from", f.from, &f.fromRef}, {"--to", f.to, &f.toRef}} {
		if r.s == "" {
			continue
		}
		ref, err := condition.ParseNodeRef(r.s)
		if err != nil {
			return usagef("%s %s: %v", r.flag, r.s, err)
		}
		*r.ref = ref
	}
	switch {
	case f.request && f.response:
		return usagef("--request and --response exclude each other")
	case f.request:
		f.direction = view.MessageRequest
	case f.response:
		f.direction = view.MessageResponse
	}
	if f.all && (f.id != 0 || f.api != "" || f.from != "" || f.to != "" || f.direction != "") {
		return usagef("step --all delivers every held message: it takes no filter")
	}
	if f.until != "" {
		if f.all || f.id != 0 {
			return usagef("step --until delivers messages until its condition holds: it takes no --all nor --id")
		}
		if _, err := condition.Parse(f.until); err != nil {
			return usagef("--until %s: %v (conditions: kraftlab wait --help)", f.until, err)
		}
	}
	return nil
}

func (f *messageFlags) action(kind cluster.ActionKind) cluster.Action {
	return cluster.Action{Kind: kind, MessageID: f.id, API: f.api, Node: f.fromRef, Peer: f.toRef, Direction: f.direction, All: f.all, Until: f.until}
}

const messagesHelp = `While the cluster clock is paused (kraftlab clock pause) every message
between nodes waits at its link: a request before it is written, a response
after it is read. Each held message has an id, its link (from → to), its API,
whether it is a request or a response, its correlation id (a response's is its
request's) and, for the APIs of replication, the fields that matter: a
Fetch's offset, last fetched epoch and replica, its response's high
watermark, records and diverging epoch; a Vote's epochs and whether it was
granted; a BeginQuorumEpoch's leader and epoch; a BrokerHeartbeat's broker
epoch, metadata offset and fencing.

Order: each TCP connection delivers its messages in order, so stepping a
message delivers first every message held before it on the same connection
(a response travels on its request's connection, which is not the one of
the answering node's own requests: those may overtake each other, as on a
real network).

A node answers a delivered message a moment later, on its own: step and
drop wait up to a second of wall time for a match before they say none is
held, and in a scenario "wait held API" waits for one (e.g. wait held
CreateTopics). A line that needs the cluster's answer, such as topics
create, waits while paused until its messages are stepped: in a scenario,
end it with & and step them in the lines after it; kraftlab mark records
the baseline that conditions then compare with.

On the live screen (kraftlab up, kraftlab tui), space pauses the clock and
the queue pane lists the held messages: n delivers the oldest, c moves into
the queue, where enter delivers the chosen message and D drops it.`

func newMessagesCommand(e *env) *cobra.Command {
	var f messageFlags
	cmd := &cobra.Command{
		Use:   "messages [--api API] [--from NODE] [--to NODE] [--request|--response]",
		Short: "List the messages the links hold while the clock is paused",
		Long: `Messages lists the messages the links hold, oldest first.

` + messagesHelp,
		Example: indentExample("kraftlab clock pause\nkraftlab messages\nkraftlab messages --api Fetch --response --json"),
	}
	f.add(cmd, "only messages")
	cmd.Args = f.check
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return doAction(e, cmd, f.action(cluster.ActMessages)) }
	return cmd
}

func newStepCommand(e *env) *cobra.Command {
	var f messageFlags
	cmd := &cobra.Command{
		Use:   "step [--api API] [--from NODE] [--to NODE] [--request|--response] [--id N] [--all] [--until COND]",
		Short: "Deliver the next held message while the clock is paused",
		Long: `Step delivers the oldest held message (across every link) that the flags
match, and first the messages held before it on its connection; --all
delivers every held message. The clock stays paused: what the receiver does
with the message happens now, and what it sends back waits at its link.

--until COND delivers the matching messages one at a time, oldest first,
waiting for the answers they cause, until the condition holds (any condition
wait takes; at most 30 s). "step --until parked" brings the metadata quorum
to rest: every follower's and observer's Fetch waits at the leader, so the
next record appended goes out at once in each parked Fetch's answer.

` + messagesHelp,
		Example: indentExample("kraftlab clock pause\nkraftlab step\nkraftlab step --api Fetch --from 2 --to 1\nkraftlab step --all\nkraftlab step --until parked"),
	}
	f.add(cmd, "the next message")
	cmd.Flags().BoolVar(&f.all, "all", false, "deliver every held message")
	cmd.Flags().StringVar(&f.until, "until", "", "deliver the matching messages one at a time until this condition holds")
	cmd.Args = f.check
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return doAction(e, cmd, f.action(cluster.ActStep)) }
	return cmd
}

func newDropCommand(e *env) *cobra.Command {
	var f messageFlags
	cmd := &cobra.Command{
		Use:   "drop [--api API] [--from NODE] [--to NODE] [--request|--response] [--id N]",
		Short: "Lose the next held message while the clock is paused",
		Long: `Drop loses the oldest held message that the flags match, silently, as a
lossy link (kraftlab link --loss) does: the connection stays up and the
messages behind it go on. A dropped request never reaches its server; a
dropped response was handled by its server but never reaches its caller.
Either way the caller hears nothing and its request times out on the
cluster clock (controller.quorum.request.timeout.ms for the quorum's
requests): while paused that happens only as "kraftlab clock advance"
moves time past it, or after "kraftlab clock resume".

` + messagesHelp,
		Example: indentExample("kraftlab clock pause\nkraftlab drop --api Fetch --response --from 1 --to 2\nkraftlab clock advance 2s"),
	}
	f.add(cmd, "the next message")
	cmd.Args = f.check
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return doAction(e, cmd, f.action(cluster.ActDrop)) }
	return cmd
}
