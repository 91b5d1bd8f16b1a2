package cli

import (
	"github.com/kraftlab/kraftlab/cluster"
	"github.com/spf13/cobra"
)

func newControllersCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "controllers",
		Short: "Add controllers to a dynamic quorum or remove them",
		Long: `Controllers grows and shrinks a dynamic metadata quorum (kraft.version 1,
KIP-853, the default, as Kafka 4.4's kafka-storage format --standalone or
--initial-controllers makes it): the initial controllers write their voter
set, each voter by id and directory id (the id of its log folder, in its
meta.properties), into the metadata log, and the voter set then changes
one controller at a time, as Kafka's kafka-metadata-quorum add-controller
and remove-controller change it. A static quorum (up --set
kraft.version=0, controller.quorum.voters) refuses both until it is
upgraded ("controllers upgrade", or Kafka's kafka-features upgrade
--feature kraft.version=1), and so does a push quorum (up --quorum push).

A wiped controller (kraftlab wipe) comes back with a new directory id: the
voter set still names its old one, so it is an observer, and the quorum
counts it nowhere. Remove the old entry (controllers remove NODE), then
add the controller back (controllers add NODE) once it has caught up.`,
		Example: indentExample("kraftlab up --controllers 1\nkraftlab controllers add\nkraftlab controllers remove 1\nkraftlab controllers add 1"),
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newControllersAddCommand(e), newControllersRemoveCommand(e), newControllersUpgradeCommand(e))
	return cmd
}

func newControllersAddCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add [NODE]",
		Short: "Start a new controller, or take a running observer one, and add it to the voters",
		Long: `Add with no NODE starts a new controller with the next free id. It starts
as an observer: it fetches the metadata log from the leader, finding it
through the initial controllers (controller.quorum.bootstrap.servers). Once
it has caught up, the leader accepts its AddRaftVoter: it appends a
VotersRecord naming the new voter set, in force at once, and the command
returns when that record is committed. Until then the leader answers
REQUEST_TIMED_OUT and the command asks again.

Add NODE adds controller NODE, which runs as an observer, with the
directory id its folder has now: one removed earlier, or one whose folder
was wiped and which came back with a new directory id (remove its old
entry first: controllers remove NODE).

With --observer it only starts the controller (or, with NODE, leaves it
as it is), and writes a controller.properties into its folder for Kafka's
tool, which then adds it: kafka-metadata-quorum --bootstrap-controller
LEADER add-controller --command-config PATH (its node.id, listeners and
metadata.log.dir, whose meta.properties holds the directory id).

` + nodeHelp,
		Example:           indentExample("kraftlab controllers add\nkraftlab controllers add --observer\nkraftlab controllers add 2"),
		Args:              nodeArgs(0, 1, "at most one NODE", "kraftlab controllers add 2"),
		ValidArgsFunction: completeNodes(e, 1),
	}
	observer := cmd.Flags().Bool("observer", false, "only start the controller: add it with kafka-metadata-quorum add-controller")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, _ := refs(args)
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActAddController, Node: a, Observer: *observer})
	}
	return cmd
}

func newControllersRemoveCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remove NODE",
		Short: "Remove a controller from the voters",
		Long: `Remove sends the leader RemoveRaftVoter for the controller, with the
directory id the voter set names for it (kafka-metadata-quorum
remove-controller --controller-id --controller-directory-id, read from
describe --status): the leader appends a VotersRecord without it, in
force at once, and the command returns when that record is committed. The
removed controller runs on as an observer. A leader that removes itself
leads on, without counting itself, until the record commits, then
resigns. A wiped controller is removed by its old entry, the one its new
folder no longer matches.

` + nodeHelp,
		Example:           indentExample("kraftlab controllers remove 1\nkraftlab controllers remove leader"),
		Args:              nodeArgs(1, 1, "one NODE", "kraftlab controllers remove 1"),
		ValidArgsFunction: completeNodes(e, 1),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, _ := refs(args)
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActRemoveController, Node: a})
	}
	return cmd
}

func newControllersUpgradeCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade a static quorum to kraft.version 1",
		Long: `Upgrade makes a static quorum (up --set kraft.version=0) dynamic, as
Kafka 4.4's kafka-features --bootstrap-controller ... upgrade --feature
kraft.version=1 does: it sends the active controller UpdateFeatures. Each
voter has described itself (directory id, listeners, kraft.version range)
to the leader with UpdateRaftVoter; once all have, the leader appends a
KRaftVersionRecord and a VotersRecord naming them, and the command returns
when those commit. Until then the leader refuses, and the command tries
again for up to 30 seconds. From then on "controllers add" and
"controllers remove" work.`,
		Example: indentExample("kraftlab up --set kraft.version=0\nkraftlab controllers upgrade"),
		Args:    cobra.NoArgs,
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActUpgradeKRaftVersion})
	}
	return cmd
}
