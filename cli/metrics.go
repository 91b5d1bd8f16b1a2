package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func newMetricsCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metrics [NODE]",
		Short: "Show the nodes' raft-metrics, with Kafka's names (kafka.server:type=raft-metrics)",
		Long: `Metrics prints what Kafka's raft client reports as the MBean
` + view.RaftMetricsGroup + `, with Kafka's metric names, for every node (a table,
one column per node) or for NODE (a node ID or leader). --json keys each
metric by its Kafka name; without NODE it prints every node with its id,
kind, state and "raftMetrics".

` + metricsHelp() + `
Averages, maxima and rates are over Kafka's sampled window: 2 samples of
30 s, a sample forgotten once its last event is 60 s old. NaN (null in JSON)
is an average or maximum over a window with no sample, as Kafka reports
it; "-" is a leader-only metric on another node. A node that does not run
has no metrics. docs/design.md lists where kraftlab differs from Kafka.`,
		Example: indentExample("kraftlab metrics\nkraftlab metrics leader\nkraftlab metrics 2 --json | jq '.\"current-state\"'"),
		Args:    nodeArgs(0, 1, "at most one NODE", "kraftlab metrics leader"),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		node := ""
		if len(args) == 1 {
			node = args[0]
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), readTimeout)
		defer cancel()
		rep, err := c.Metrics(ctx, node)
		if err != nil {
			return apiError(c, err)
		}
		w := cmd.OutOrStdout()
		if node == "" {
			if wantJSON(cmd) {
				return printJSON(w, rep.Nodes)
			}
			return writeMetricsTable(w, rep.Nodes)
		}
		if len(rep.Nodes) != 1 {
			return usagef("the playground answered %d nodes for %s", len(rep.Nodes), node)
		}
		n := rep.Nodes[0]
		if n.RaftMetrics == nil {
			return usagef("node %d is %s: only a running node has raft-metrics; start it with: kraftlab start %d", n.ID, n.State, n.ID)
		}
		if wantJSON(cmd) {
			return printJSON(w, n.RaftMetrics)
		}
		return writeNodeMetrics(w, n)
	}
	return cmd
}

// metricsHelp lists every metric with its meaning, one a line.
func metricsHelp() string {
	var b strings.Builder
	names := view.RaftMetricNames()
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	for _, name := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, name, view.RaftMetricHelp(name))
	}
	return b.String()
}

// writeMetricsTable prints one row per metric and one column per node.
func writeMetricsTable(w io.Writer, nodes []view.NodeMetrics) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t", view.RaftMetricsGroup)
	for _, n := range nodes {
		fmt.Fprintf(tw, "%d\t", n.ID)
	}
	fmt.Fprintln(tw)
	var down []string
	for _, name := range view.RaftMetricNames() {
		fmt.Fprintf(tw, "%s\t", name)
		for _, n := range nodes {
			v := "·"
			if n.RaftMetrics != nil {
				v = n.RaftMetrics.Format(name)
			}
			fmt.Fprintf(tw, "%s\t", v)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range nodes {
		if n.RaftMetrics == nil {
			down = append(down, strconv.Itoa(int(n.ID))+" "+string(n.State))
		}
	}
	if len(down) > 0 {
		_, err := fmt.Fprintf(w, "\n· no metrics: a node has them only while it runs (%s)\n", strings.Join(down, ", "))
		return err
	}
	return nil
}

// writeNodeMetrics prints one node's metrics with their meanings.
func writeNodeMetrics(w io.Writer, n view.NodeMetrics) error {
	fmt.Fprintf(w, "node %d (%s), %s\n", n.ID, n.Kind, view.RaftMetricsGroup)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range view.RaftMetricNames() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, n.RaftMetrics.Format(name), view.RaftMetricHelp(name))
	}
	return tw.Flush()
}
