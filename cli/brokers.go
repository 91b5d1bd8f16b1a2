package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func newBrokersCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "brokers",
		Short: "List the brokers: lifecycle state, fencing, metadata lag, heartbeats",
		Long: `Brokers lists every broker's place in the metadata. STATE is what the
broker's lifecycle manager says of itself (STARTING, RECOVERY, RUNNING,
PENDING_CONTROLLED_SHUTDOWN, SHUTTING_DOWN); FENCED is what the active
controller's committed metadata says: a broker starts fenced, is unfenced
at the first heartbeat whose metadata offset has reached its own
registration record (STARTING lasts until then, RECOVERY is caught up but
still fenced), and is fenced again only when the controller has not heard
its heartbeat for broker.session.timeout.ms (or it asks to be). EPOCH is
its broker epoch (Kafka uses the offset of its registration record;
kraftlab a lower bound of it). LAG* is
kraftlab's own measure, the committed metadata offsets it has not applied:
Kafka has no such metric and never fences a broker for lagging. Kafka's
own figure is beside it: APPLIED-LAG-MS, the broker's
last-applied-record-lag-ms (how old the newest metadata record it applied
is). HEARTBEAT is when the controller last heard from it, LEADS the
partitions it leads. A broker whose NODE is "external" is not one of the playground's
nodes but registered with its controllers all the same (a real Kafka broker
can join them): only the metadata and the heartbeats speak of it. Under the
table: the active controller's KafkaController metrics.`,
		Example: indentExample("kraftlab brokers\nkraftlab brokers --json"),
		Args:    nodeArgs(0, 0, "no arguments", "kraftlab brokers"),
	}
	addJSONFlag(cmd)
	addAttachFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), brokerRows(&v))
		}
		return writeBrokers(cmd.OutOrStdout(), &v)
	}
	return cmd
}

// brokerRow is one broker in brokers --json: the node's id, listener and
// playground state with its view.Broker.
type brokerRow struct {
	ID       int32      `json:"nodeId"`
	Listener string     `json:"listener"`
	Node     view.State `json:"nodeState,omitempty"`
	// External: not a playground node but a broker that joined its
	// controllers (a real Kafka broker, say); only the metadata knows it.
	External bool `json:"external,omitempty"`
	// LastAppliedRecordLagMs is the broker's own
	// last-applied-record-lag-ms (broker-metadata-metrics), -1 unknown.
	LastAppliedRecordLagMs int64 `json:"last-applied-record-lag-ms"`
	view.Broker
}

func brokerRows(v *view.View) []brokerRow {
	rows := []brokerRow{}
	for _, n := range v.Nodes {
		if !n.IsBroker() {
			continue
		}
		r := brokerRow{ID: n.ID, Listener: n.Listener, Node: n.State, LastAppliedRecordLagMs: -1,
			Broker: view.Broker{BrokerEpoch: -1, MetadataLag: -1, LastHeartbeatTimestamp: -1}}
		if n.Broker != nil {
			r.Broker = *n.Broker
		}
		if md := n.Metadata; md != nil && md.LastAppliedRecordTimestamp >= 0 {
			r.LastAppliedRecordLagMs = md.LastAppliedRecordLagMs
		}
		rows = append(rows, r)
	}
	for _, b := range v.ExternalBrokers {
		rows = append(rows, brokerRow{ID: b.ID, Listener: b.Listener, External: true, LastAppliedRecordLagMs: -1, Broker: b.Broker})
	}
	return rows
}

func writeBrokers(w io.Writer, v *view.View) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BROKER\tLISTENER\tNODE\tSTATE\tFENCED\tEPOCH\tLAG*\tAPPLIED-LAG-MS\tHEARTBEAT\tLEADS")
	for _, r := range brokerRows(v) {
		fenced := "-"
		if r.Registered {
			fenced = fmt.Sprint(r.Fenced)
			if r.InControlledShutdown {
				fenced += " (shutting down)"
			}
		}
		hb := "never"
		if v.Attached != nil {
			hb = "-" // only the active controller knows, and tells nobody
		}
		if r.LastHeartbeatTimestamp >= 0 {
			hb = ago(r.LastHeartbeatTimestamp, v.Timestamp)
		}
		node := string(r.Node)
		if r.External {
			node = "external"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", r.ID, orDash(r.Listener), node, orDash(string(r.State)), fenced,
			int64OrDash(r.BrokerEpoch), int64OrDash(r.MetadataLag), int64OrDash(r.LastAppliedRecordLagMs), hb, r.PartitionsLed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if v.Attached != nil {
		_, err := fmt.Fprintf(w, "* LAG here is the metadata quorum's high watermark minus the log end offset the broker last fetched (its observer row in DescribeQuorum):\n"+
			"  what it applied, its STATE, EPOCH and APPLIED-LAG-MS are JMX-only. %s\n", attachedNote(v))
		return err
	}
	if _, err := fmt.Fprintln(w, lagNote); err != nil {
		return err
	}
	for _, n := range v.Nodes {
		if m := n.ControllerMetrics; m != nil && m.ActiveControllerCount == 1 {
			_, err := fmt.Fprintf(w, "\nactive controller %d (kafka.controller:type=KafkaController): ActiveBrokerCount %d, FencedBrokerCount %d, GlobalTopicCount %d, GlobalPartitionCount %d, OfflinePartitionsCount %d, TimedOutBrokerHeartbeatCount %d, UncleanLeaderElectionsPerSec %d (a count), LastCommittedRecordOffset %d\n",
				n.ID, m.ActiveBrokerCount, m.FencedBrokerCount, m.GlobalTopicCount, m.GlobalPartitionCount, m.OfflinePartitionsCount, m.TimedOutBrokerHeartbeatCount, m.UncleanLeaderElectionsPerSec, m.LastCommittedRecordOffset)
			return err
		}
	}
	_, err := fmt.Fprintln(w, "\nno active controller: nobody registers, unfences or fences brokers until the quorum has a leader")
	return err
}

// lagNote says under the brokers table what LAG* is, and what Kafka
// fences on.
const lagNote = "* LAG is kraftlab's own measure (committed metadata offsets not applied yet); APPLIED-LAG-MS is Kafka's last-applied-record-lag-ms.\n" +
	"  Kafka fences a broker only for a missed session (broker.session.timeout.ms), never for lag, and unfences it once it has applied its own registration."

// int64OrDash spells a count that is -1 when unknown.
func int64OrDash(n int64) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
