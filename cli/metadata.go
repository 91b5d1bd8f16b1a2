package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

func newMetadataCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metadata [PATH]",
		Short: "Browse a node's metadata image as kafka-metadata-shell does (ls a directory, cat a file)",
		Long: `Metadata shows the metadata image a node has applied from the committed
metadata log, as the tree Kafka's kafka-metadata-shell browses, with Kafka's
names and texts: /image/provenance, /image/features, /image/cluster/brokers/ID,
/image/topics/byName/TOPIC/PARTITION, /image/topics/byId/ID, /image/configs.
A directory prints its children one per line, as the shell's ls; a file its
text, as its cat. Without --node it reads the active controller (the quorum's
leader); a broker's image shows what that broker has applied so far. A path
that is not there names the missing part and what its parent holds.

"kraftlab metadata log" prints the committed log itself, as kafka-dump-log
--cluster-metadata-decoder does.`,
		Example: indentExample("kraftlab metadata\nkraftlab metadata /image/topics/byName\nkraftlab metadata /image/cluster/brokers/101 --node 102\nkraftlab metadata /image/topics/byName/orders/0 --json"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("%s takes at most one PATH, got %d (%s); e.g.: kraftlab metadata /image/topics/byName", cmd.CommandPath(), len(args), strings.Join(args, " "))
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	addJSONFlag(cmd)
	nodeFlag := addNodeFlag(e, cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ref, err := parseNodeFlag(*nodeFlag)
		if err != nil {
			return err
		}
		p := "/"
		if len(args) == 1 {
			p = args[0]
		}
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), readTimeout)
		defer cancel()
		entry, err := c.BrowseMetadata(ctx, ref, p)
		if err != nil {
			return apiError(c, err)
		}
		out := cmd.OutOrStdout()
		if wantJSON(cmd) {
			return printJSON(out, entry)
		}
		if !entry.Directory {
			_, err := fmt.Fprint(out, entry.Text)
			return err
		}
		for _, child := range entry.Children {
			fmt.Fprintln(out, child)
		}
		return nil
	}
	cmd.AddCommand(newMetadataLogCommand(e))
	return cmd
}

func newMetadataLogCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Print a node's committed metadata log as kafka-dump-log --cluster-metadata-decoder does",
		Long: `Log prints a node's metadata log (__cluster_metadata), decoded as
kafka-dump-log --cluster-metadata-decoder prints a segment: a line per batch
(offsets, leader epoch, size, CRC…) and a line per record, a metadata record
as its JSON and a control record (LeaderChange, SnapshotHeader…) as Kafka
prints it. Only committed batches are printed: those whose last offset is
below the node's high watermark; the count of the others is given at the end.

The log starts at the node's log start offset: after a snapshot (kraftlab
snapshot NODE, or the node's snapshot policy) the records before it are gone
from the log and live only in the snapshot — the first line says so, and
"kraftlab metadata" shows the image they built. Without --node it reads the
active controller. --max-bytes bounds one read; the last line then says
which --from reads on.`,
		Example: indentExample("kraftlab metadata log\nkraftlab metadata log --node 101 --from 40\nkraftlab metadata log --max-bytes 4096 --json | jq '.dump.batches[].records[].type'"),
		Args:    exactArgs(0, "no arguments", "kraftlab metadata log --from 10"),
	}
	addJSONFlag(cmd)
	nodeFlag := addNodeFlag(e, cmd)
	from := cmd.Flags().Int64("from", 0, "the first offset to print (below the log start: from the log start)")
	maxBytes := cmd.Flags().Int("max-bytes", cluster.DefaultMetadataLogBytes, fmt.Sprintf("read about this many bytes of whole batches (at most %d)", cluster.MaxMetadataLogBytes))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ref, err := parseNodeFlag(*nodeFlag)
		if err != nil {
			return err
		}
		if *maxBytes < 1 {
			return usagef("--max-bytes %d: want at least 1 (default %d)", *maxBytes, cluster.DefaultMetadataLogBytes)
		}
		if err := cluster.ValidateMetadataLog(*from, *maxBytes); err != nil {
			return usagef("%v", err)
		}
		c, err := e.connect(cmd)
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), readTimeout)
		defer cancel()
		l, err := c.MetadataLog(ctx, ref, *from, *maxBytes)
		if err != nil {
			return apiError(c, err)
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), l)
		}
		return l.WriteText(cmd.OutOrStdout())
	}
	return cmd
}

// addNodeFlag adds --node NODE, completed with the playground's nodes.
func addNodeFlag(e *env, cmd *cobra.Command) *string {
	v := cmd.Flags().String("node", "", "the node to read: an id or leader (default: the active controller)")
	cmd.RegisterFlagCompletionFunc("node", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return nodeCompletions(e, cmd), cobra.ShellCompDirectiveNoFileComp
	})
	return v
}

// parseNodeFlag parses --node; empty is the zero NodeRef, the active
// controller.
func parseNodeFlag(v string) (condition.NodeRef, error) {
	if v == "" {
		return condition.NodeRef{}, nil
	}
	ref, err := condition.ParseNodeRef(v)
	if err != nil {
		return condition.NodeRef{}, usagef("--node: %v", err)
	}
	return ref, nil
}
