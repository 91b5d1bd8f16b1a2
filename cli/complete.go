package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// completionTimeout bounds the status call behind dynamic completion, so
// that a stuck playground never stalls the shell; it leaves room for a
// busy machine (a playground, its screen and a shell on two cores).
const completionTimeout = time.Second

// nodeCompletions lists leader, old-leader and, when a playground answers,
// its node IDs with their kind, state and role.
func nodeCompletions(e *env, cmd *cobra.Command) []string {
	out := []string{condition.RefLeader + "\tthe current leader", condition.RefFollower + "\tthe running follower of the leader with the lowest ID",
		condition.RefOldLeader + "\tthe leader before the last kill, stop, isolate, resign, wipe, disk or mark", condition.RefTarget + "\tthe node that action targeted"}
	c, err := e.connect(cmd)
	if err != nil {
		return out
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	v, err := c.Status(ctx)
	if err != nil {
		// Say why there are no IDs (shells that show active help print it).
		return cobra.AppendActiveHelp(out, fmt.Sprintf("no node IDs: %v (node IDs come from the running playground; --session NAME picks another)", err))
	}
	for _, n := range v.Nodes {
		desc := string(n.Kind) + ", " + string(n.State)
		if n.Role != "" {
			desc += ", " + string(n.Role)
		}
		out = append(out, fmt.Sprintf("%d\t%s", n.ID, desc))
	}
	return out
}

// groupCompletions lists the consumer groups the playground's brokers
// serve, with their state.
func groupCompletions(e *env, cmd *cobra.Command) []string {
	c, err := e.connect(cmd)
	if err != nil {
		return nil
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	v, err := c.Status(ctx)
	if err != nil {
		return cobra.AppendActiveHelp(nil, fmt.Sprintf("no group IDs: %v", err))
	}
	var out []string
	for _, g := range v.Groups {
		out = append(out, fmt.Sprintf("%s\t%s, coordinator %d", g.ID, g.State, g.Coordinator))
	}
	return out
}

// completeNodes completes up to max node arguments.
func completeNodes(e *env, max int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nodeCompletions(e, cmd), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCondition completes the words of a wait or expect condition.
func completeCondition(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		switch {
		case len(args) == 0:
			return condition.Words(), none
		case len(args) == 1 && slices.Contains([]string{"node", "fenced", "unfenced", "broker", "metadata-lag", "fetcher-lag"}, args[0]):
			return nodeCompletions(e, cmd), none
		case len(args) == 1 && strings.HasPrefix(args[0], "group-"):
			return groupCompletions(e, cmd), none
		case args[0] == "node" && len(args) == 2:
			return condition.NodeWords(), none
		case args[0] == "node" && len(args) == 3 && args[2] == "role":
			return view.Names(view.Roles()), none
		case args[0] == "node" && len(args) == 3 && args[2] == "state":
			return view.Names(view.States()), none
		}
		return nil, none
	}
}

// completeSettings completes --set keys, leaving the cursor after "=".
func completeSettings(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, s := range cluster.SettingKeys() {
		if strings.HasPrefix(s.Key, toComplete) {
			out = append(out, s.Key+"=\t"+s.Doc)
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}
