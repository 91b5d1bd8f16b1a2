package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func newGroupsCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "groups [GROUP...]",
		Short: "Show the consumer groups: state, coordinator, members, committed offsets and lag",
		Long: `Groups asks the playground's brokers about their consumer groups, as
kafka-consumer-groups --describe does: each group's state, protocol and
coordinator (the broker leading the group's __consumer_offsets
partition), its members with the partitions assigned to each, and per
partition the committed offset, the log end and the lag between them.
Without a name it shows every group. Groups of Kafka's consumer protocol
(KIP-848) are described with ConsumerGroupDescribe, as
kafka-consumer-groups describes them, with the assignor the coordinator
uses.`,
		Example: indentExample("kraftlab groups\nkraftlab groups billing\nkraftlab groups --json"),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		seeds := runningBrokers(&v)
		if len(seeds) == 0 {
			return failedf("no broker is running to ask (kraftlab brokers shows them; kraftlab start NODE starts one)")
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("kraftlab-cli"))
		if err != nil {
			return fmt.Errorf("kafka client: %w", err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), readTimeout)
		defer cancel()
		adm := kadm.NewClient(cl)
		names := args
		if len(names) == 0 {
			listed, err := adm.ListGroups(ctx)
			if err != nil {
				return failedf("list the groups: %v", err)
			}
			names = listed.Groups()
		}
		slices.Sort(names)
		if len(names) == 0 {
			if wantJSON(cmd) {
				return printJSON(cmd.OutOrStdout(), []groupRow{})
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "no consumer groups yet (kraftlab consume --group G TOPIC makes one)")
			return err
		}
		lags, err := adm.Lag(ctx, names...)
		if err != nil {
			return failedf("describe the groups: %v", err)
		}
		rows := groupRows(lags, names)
		var consumers []string
		had := map[string]groupRow{}
		for i, name := range names {
			if describesAsConsumerGroup(lags[name]) {
				consumers = append(consumers, name)
				had[name] = rows[i]
			}
		}
		if len(consumers) > 0 {
			described := consumerGroupRows(ctx, adm, consumers, had)
			for i, name := range names {
				if r, ok := described[name]; ok {
					rows[i] = r
				}
			}
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), rows)
		}
		return writeGroups(cmd.OutOrStdout(), rows)
	}
	return cmd
}

// runningBrokers are the listeners of the running brokers.
func runningBrokers(v *view.View) []string {
	var seeds []string
	for _, n := range v.Nodes {
		if n.IsBroker() && n.State == view.StateRunning && n.Listener != "" {
			seeds = append(seeds, n.Listener)
		}
	}
	return seeds
}

// The group types, as ListGroups v5 names them.
const (
	groupTypeClassic  = "classic"
	groupTypeConsumer = "consumer"
)

// groupRow is one group in groups --json.
type groupRow struct {
	Group string `json:"group"`
	// Type is the group's protocol: classic, or consumer (KIP-848).
	Type         string           `json:"type"`
	State        string           `json:"state"`
	Protocol     string           `json:"protocol"`
	Coordinator  int32            `json:"coordinator"`
	Members      []groupMemberRow `json:"members"`
	Partitions   []groupLagRow    `json:"partitions"`
	Error        string           `json:"error,omitempty"`
	OffsetsError string           `json:"offsetsError,omitempty"`
}

type groupMemberRow struct {
	MemberID   string   `json:"memberId"`
	InstanceID string   `json:"instanceId,omitempty"`
	ClientID   string   `json:"clientId"`
	Host       string   `json:"host"`
	Assigned   []string `json:"assigned"`
}

type groupLagRow struct {
	Partition string `json:"partition"`
	Committed int64  `json:"committed"`
	LogEnd    int64  `json:"logEnd"`
	Lag       int64  `json:"lag"`
	Member    string `json:"member,omitempty"`
}

func groupRows(lags kadm.DescribedGroupLags, names []string) []groupRow {
	rows := []groupRow{}
	for _, name := range names {
		l, ok := lags[name]
		if !ok {
			rows = append(rows, groupRow{Group: name, Error: "not answered", Members: []groupMemberRow{}, Partitions: []groupLagRow{}})
			continue
		}
		r := groupRow{Group: name, Type: groupTypeClassic, State: l.State, Protocol: l.Protocol, Coordinator: l.Coordinator.NodeID,
			Members: []groupMemberRow{}, Partitions: []groupLagRow{}}
		if l.DescribeErr != nil {
			r.Error = l.DescribeErr.Error()
		}
		if l.FetchErr != nil {
			r.OffsetsError = l.FetchErr.Error()
		}
		for _, m := range l.Members {
			mr := groupMemberRow{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: []string{}}
			if m.InstanceID != nil {
				mr.InstanceID = *m.InstanceID
			}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					for _, p := range t.Partitions {
						mr.Assigned = append(mr.Assigned, fmt.Sprintf("%s-%d", t.Topic, p))
					}
				}
			}
			r.Members = append(r.Members, mr)
		}
		for _, pl := range l.Lag.Sorted() {
			lr := groupLagRow{Partition: fmt.Sprintf("%s-%d", pl.Topic, pl.Partition), Committed: pl.Commit.At, LogEnd: pl.End.Offset, Lag: pl.Lag}
			if pl.Member != nil {
				lr.Member = pl.Member.MemberID
			}
			r.Partitions = append(r.Partitions, lr)
		}
		rows = append(rows, r)
	}
	return rows
}

func writeGroups(w io.Writer, rows []groupRow) error {
	for i, r := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "group %s: %s\n", r.Group, r.Error)
			continue
		}
		what := "protocol"
		if r.Type == groupTypeConsumer {
			what = "consumer protocol, assignor"
		}
		fmt.Fprintf(w, "group %s: %s, %s %s, coordinator %d, %d members\n", r.Group, r.State, what, orDash(r.Protocol), r.Coordinator, len(r.Members))
		for _, m := range r.Members {
			who := m.MemberID
			if m.InstanceID != "" {
				who += " (instance " + m.InstanceID + ")"
			}
			fmt.Fprintf(w, "  member %s, client %s from %s: %s\n", who, m.ClientID, m.Host, orDash(strings.Join(m.Assigned, ",")))
		}
		if r.OffsetsError != "" {
			fmt.Fprintf(w, "  committed offsets not read: %s\n", r.OffsetsError)
		}
		if len(r.Partitions) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  PARTITION\tCOMMITTED\tLOG-END\tLAG\tMEMBER")
		for _, p := range r.Partitions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Partition, int64OrDash(p.Committed), int64OrDash(p.LogEnd), int64OrDash(p.Lag), orDash(p.Member))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
