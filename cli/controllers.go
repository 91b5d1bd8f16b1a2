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
KIP-853), which "kraftlab up --set kraft.version=1" starts: its initial
controllers write their voter set into the metadata log, and the voter set
then changes one controller at a time, as Kafka's kafka-metadata-quorum
add-controller and remove-controller change it. A static quorum
(kraft.version 0, the default) refuses both.`,
		Example: indentExample("kraftlab up --controllers 1 --set kraft.version=1\nkraftlab controllers add\nkraftlab controllers remove 1"),
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newControllersAddCommand(e), newControllersRemoveCommand(e))
	return cmd
}

func newControllersAddCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Start a new controller and add it to the voters",
		Long: `Add starts a new controller with the next free id. It starts as an observer:
it fetches the metadata log from the leader, finding it through the initial
controllers (controller.quorum.bootstrap.servers). Once it has caught up,
the leader accepts its AddRaftVoter: it appends a VotersRecord naming the
new voter set, in force at once, and the command returns when that record
is committed. Until then the leader answers REQUEST_TIMED_OUT and the
command asks again.

With --observer it only starts the controller, and writes a
controller.properties into its folder for Kafka's tool, which then adds it:
kafka-metadata-quorum --bootstrap-controller LEADER add-controller
--command-config PATH (its node.id, listeners and metadata.log.dir, whose
meta.properties holds the directory id).`,
		Example: indentExample("kraftlab controllers add\nkraftlab controllers add --observer"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab controllers add"),
	}
	observer := cmd.Flags().Bool("observer", false, "only start the controller: add it with kafka-metadata-quorum add-controller")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActAddController, Observer: *observer})
	}
	return cmd
}

func newControllersRemoveCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remove NODE",
		Short: "Remove a controller from the voters",
		Long: `Remove sends the leader RemoveRaftVoter for the controller: the leader
appends a VotersRecord without it, in force at once, and the command
returns when that record is committed. The removed controller runs on as an
observer. A leader that removes itself leads on, without counting itself,
until the record commits, then resigns.

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
