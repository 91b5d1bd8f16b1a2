package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
)

func newReassignCommand(e *env) *cobra.Command {
	var replicas string
	var throttle int64
	var list, cancel, verify bool
	cmd := &cobra.Command{
		Use:   "reassign TOPIC-P... --replicas IDS [--throttle RATE] | --list | --cancel TOPIC-P... | --verify [TOPIC-P...]",
		Short: "Move partitions to other brokers, as kafka-reassign-partitions does",
		Long: `Reassign moves partitions to other replicas through the active controller
(AlterPartitionReassignments, forwarded by a broker), as
kafka-reassign-partitions --execute does. The controller first adds the
target replicas to the partition, marked adding, with the replicas leaving
marked removing; the new replicas' fetchers copy the log from the leader,
and once the leader takes every adding replica into the ISR the same
change completes the move: the removing replicas leave the replicas and
the ISR, and the leadership too if the leader was one of them. A move the
ISR already allows (a new order of the same replicas, fewer replicas all in
sync) completes at once.

--throttle RATE (bytes a second) first sets the replication throttle the
way the tool does: leader.replication.throttled.rate and
follower.replication.throttled.rate on every broker involved, and the
topic's leader.replication.throttled.replicas (the replicas moved from) and
follower.replication.throttled.replicas (those moved to). The new replica's
fetcher shows THROTTLED (kraftlab fetchers) until it joins the ISR.
--verify says whether the moves are done and, once none is left, removes
the throttles, as the tool's --verify does; wait for one with
"kraftlab wait reassigned TOPIC-P". --list shows the moves in progress,
--cancel puts partitions back on their original replicas (and removes the
throttles).`,
		Example: indentExample("kraftlab reassign orders-0 --replicas 102,103,104 --throttle 100000\nkraftlab reassign --list\nkraftlab wait reassigned orders-0\nkraftlab reassign --verify orders-0\nkraftlab reassign --cancel orders-0"),
	}
	cmd.Flags().StringVar(&replicas, "replicas", "", "the target replicas, broker ids in preferred order, e.g. 102,103,104")
	cmd.Flags().Int64Var(&throttle, "throttle", 0, "the replication throttle while the replicas move, in bytes a second")
	cmd.Flags().BoolVar(&list, "list", false, "list the reassignments in progress")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "cancel the partitions' reassignments")
	cmd.Flags().BoolVar(&verify, "verify", false, "say whether the reassignments are done; once they are, remove the throttles")
	cmd.MarkFlagsMutuallyExclusive("list", "cancel", "verify")
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a := cluster.Action{Kind: cluster.ActReassign, TopicPartitions: args, Throttle: throttle}
		switch {
		case list:
			a.Reassign = cluster.ReassignList
		case cancel:
			a.Reassign = cluster.ReassignCancel
		case verify:
			a.Reassign = cluster.ReassignVerify
		}
		if a.Reassign != cluster.ReassignExecute && (replicas != "" || throttle != 0) {
			return usagef("--replicas and --throttle go with a move, not with --%s", a.Reassign)
		}
		if cmd.Flags().Changed("throttle") && throttle <= 0 {
			return usagef("--throttle is a rate in bytes a second above 0, got %d", throttle)
		}
		if a.Reassign == cluster.ReassignExecute {
			if len(args) == 0 || replicas == "" {
				return usagef("reassign names the partitions and their target replicas, e.g.: kraftlab reassign orders-0 --replicas 102,103,104")
			}
			ids, err := parseIDs(replicas)
			if err != nil {
				return err
			}
			a.Replicas = ids
		}
		return doAction(e, cmd, a)
	}
	return cmd
}

// parseIDs reads --replicas' comma-separated broker ids.
func parseIDs(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || n < 0 {
			return nil, usagef("bad --replicas %q: want broker ids separated by commas, e.g. 102,103,104", s)
		}
		out = append(out, int32(n))
	}
	return out, nil
}
