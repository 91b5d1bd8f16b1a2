package cli

import (
	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
)

func newElectLeadersCommand(e *env) *cobra.Command {
	var unclean bool
	cmd := &cobra.Command{
		Use:   "elect-leaders [TOPIC-P...]",
		Short: "Elect partitions' preferred leaders (or unclean ones), as kafka-leader-election does",
		Long: `Elect-leaders sends ElectLeaders to the active controller through a broker,
as kafka-leader-election does. A partition's preferred replica is the first
of its replicas; after a failover another replica leads, and a preferred
election gives the leadership back to the first one when it is in the ISR
and its broker unfenced (PREFERRED_LEADER_NOT_AVAILABLE otherwise,
ELECTION_NOT_NEEDED when it leads already). With auto.leader.rebalance.enable
(Kafka's default: on) the controller does this by itself every
leader.imbalance.check.interval.seconds. --unclean instead elects a leader
for a partition that has none, from outside the ISR if no member is alive:
records only the ISR had may be lost. Without partitions, every partition
of every topic.`,
		Example: indentExample("kraftlab elect-leaders orders-0 orders-1\nkraftlab elect-leaders\nkraftlab elect-leaders ledger-0 --unclean"),
	}
	cmd.Flags().BoolVar(&unclean, "unclean", false, "elect a leader for leaderless partitions, from outside the ISR if need be")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActElectLeaders, TopicPartitions: args, Unclean: unclean})
	}
	return cmd
}
