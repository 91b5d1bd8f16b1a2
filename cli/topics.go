package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func newTopicsCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topics",
		Short: "Create, list, describe and delete topics",
		Long: `Topics creates, lists, describes and deletes topics. Creating and deleting go
the way a Kafka client goes: to a running broker, which forwards the request
to the active controller; the controller writes the topic's records to the
metadata log and answers once they are committed. Every broker then applies
them from the log: "kraftlab wait topic NAME on all brokers" waits for that.
list and describe show the active controller's committed metadata.`,
		Example: indentExample("kraftlab topics create orders --partitions 3 --replication-factor 2\nkraftlab topics describe orders\nkraftlab topics delete orders"),
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newTopicsCreateCommand(e), newTopicsListCommand(e), newTopicsDescribeCommand(e), newTopicsDeleteCommand(e))
	return cmd
}

func newTopicsCreateCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a topic",
		Long: `Create asks the active controller, through a broker, for a topic. The
controller places the replicas over the unfenced brokers, makes each
partition's first replica its leader and all of them its ISR, and refuses
with Kafka's error a name that exists or is invalid, or a replication
factor above the unfenced brokers. Without flags the controller's
num.partitions and default.replication.factor (1 and 1) apply.

--config KEY=VALUE (repeatable) sets a topic config, as kafka-topics does:
the controller writes one ConfigRecord each. The data plane acts on
min.insync.replicas (while the ISR is smaller, acks=all produces are
refused and the high watermark stands still, so records taken with acks=1
stay unreadable; a setting above the replication factor asks for every
replica) and unclean.leader.election.enable (with no ISR member alive,
the controller elects a live replica outside the ISR, which may lose
records); both override the cluster defaults set with up --set.`,
		Example: indentExample("kraftlab topics create orders --partitions 3 --replication-factor 2\nkraftlab topics create payments -r 3 --config min.insync.replicas=2 --config unclean.leader.election.enable=false"),
		Args:    exactArgs(1, "one topic NAME", "kraftlab topics create orders"),
	}
	addJSONFlag(cmd)
	parts := cmd.Flags().Int32P("partitions", "p", 0, "number of partitions (default: the controller's num.partitions)")
	rf := cmd.Flags().Int16P("replication-factor", "r", 0, "replicas per partition (default: the controller's default.replication.factor)")
	configs := cmd.Flags().StringArray("config", nil, "a topic config KEY=VALUE, e.g. min.insync.replicas=2 (repeatable)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("partitions") && *parts < 1 || cmd.Flags().Changed("replication-factor") && *rf < 1 {
			return usagef("--partitions and --replication-factor must be at least 1")
		}
		cfg, err := topicConfigs(*configs)
		if err != nil {
			return err
		}
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActCreateTopic, Topic: args[0], Partitions: *parts, ReplicationFactor: *rf, Configs: cfg})
	}
	return cmd
}

func newTopicsDeleteCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "delete NAME",
		Short:   "Delete a topic",
		Long:    `Delete asks the active controller, through a broker, to delete the topic: it writes a RemoveTopicRecord, and every broker drops the topic when it applies it.`,
		Example: indentExample("kraftlab topics delete orders"),
		Args:    exactArgs(1, "one topic NAME", "kraftlab topics delete orders"),
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return doAction(e, cmd, cluster.Action{Kind: cluster.ActDeleteTopic, Topic: args[0]})
	}
	return cmd
}

func newTopicsListCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the topics",
		Long:    `List prints each topic of the committed metadata with its id, partitions, replication factor and the running brokers that have applied it.`,
		Example: indentExample("kraftlab topics list\nkraftlab topics list --json"),
		Args:    exactArgs(0, "no arguments", "kraftlab topics list"),
	}
	addJSONFlag(cmd)
	addAttachFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), v.Topics)
		}
		if len(v.Topics) == 0 && v.Attached != nil {
			return noTopicsRead(cmd, &v)
		}
		return writeTopics(cmd.OutOrStdout(), v.Topics)
	}
	return cmd
}

func newTopicsDescribeCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe [NAME...]",
		Short: "Describe topics' partitions: leader, leader epoch, ISR, high watermark, replicas' log ends",
		Long: `Describe prints every partition of the named topics (all topics without a
name) as the committed metadata holds it, as kafka-topics --describe does:
its leader (none when no in-sync replica is unfenced), leader epoch and
in-sync replicas. Beside the metadata it shows the data: HWM is the high
watermark on the leader's broker (- while no running broker leads), the
offset below which records are committed and consumers may read; REPLICAS
lists each replica as BROKER:LOG-END-OFFSET as that broker's own log holds
it (- when the broker does not run or has not opened it). A follower that
has not caught up with the leader's log end for replica.lag.time.max.ms
leaves the ISR; it rejoins once its log end reaches the high watermark. A line under the table names each
replica whose files had lost records when its broker opened it (a damaged
or truncated file): the offsets lost, what showed it, and whether it has
fetched them back.`,
		Example: indentExample("kraftlab topics describe orders\nkraftlab topics describe --json\nkraftlab topics describe --bootstrap-server localhost:9092"),
	}
	addJSONFlag(cmd)
	addAttachFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		topics := v.Topics
		if len(args) > 0 {
			topics = nil
			for _, name := range args {
				t, ok := v.Topic(name)
				if !ok {
					return usagef("no topic %q; the topics are: %s", name, topicNames(v.Topics))
				}
				topics = append(topics, *t)
			}
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), topics)
		}
		if len(topics) == 0 && v.Attached != nil {
			return noTopicsRead(cmd, &v)
		}
		return writePartitions(cmd.OutOrStdout(), topics)
	}
	return cmd
}

// fetchView is the view a read-only command prints: of the real cluster
// its attach flags name, or else of its session's playground.
func fetchView(e *env, cmd *cobra.Command) (view.View, error) {
	if cfg, ok, err := attachConfig(cmd); err != nil || ok {
		if err != nil {
			return view.View{}, err
		}
		return readOnce(cmd.Context(), cfg)
	}
	c, err := e.connect(cmd)
	if err != nil {
		return view.View{}, err
	}
	defer c.Close()
	return status(cmd.Context(), c)
}

func topicNames(ts []view.Topic) string {
	if len(ts) == 0 {
		return "none yet (kraftlab topics create NAME)"
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func writeTopics(w io.Writer, ts []view.Topic) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no topics yet: kraftlab topics create NAME")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tID\tPARTITIONS\tREPLICATION\tON BROKERS")
	for _, t := range ts {
		rf := 0
		if len(t.Partitions) > 0 {
			rf = len(t.Partitions[0].Replicas)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", t.Name, t.ID, len(t.Partitions), rf, joinIDs(t.OnBrokers))
	}
	return tw.Flush()
}

func writePartitions(w io.Writer, ts []view.Topic) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no topics yet: kraftlab topics create NAME")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tLEADER\tEPOCH\tISR\tELR\tLAST KNOWN ELR\tHWM\tREPLICAS (BROKER:LOG END)")
	var notes []string
	for _, t := range ts {
		for _, p := range t.Partitions {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Name, p.Partition, idOrNone(p.Leader), p.LeaderEpoch,
				joinIDs(p.Isr), joinIDs(p.Elr), joinIDs(p.LastKnownElr), int64OrDash(p.HighWatermark), replicaLogEnds(&p))
			notes = append(notes, damageNotes(t.Name, &p)...)
			if p.Reassigning() {
				// kafka-topics --describe adds Adding Replicas and
				// Removing Replicas the same way.
				notes = append(notes, fmt.Sprintf("%s-%d is being reassigned: adding replicas %s, removing replicas %s",
					t.Name, p.Partition, joinIDs(p.AddingReplicas), joinIDs(p.RemovingReplicas)))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// damageNotes are a line for each replica of p whose files had lost
// records when its broker opened it.
func damageNotes(topic string, p *view.Partition) []string {
	var out []string
	for _, r := range p.ReplicaStates {
		if r.Damage == "" {
			continue
		}
		state := "DAMAGED, fetching back what it lost"
		if r.Repaired {
			state = "was DAMAGED, repaired"
		}
		out = append(out, fmt.Sprintf("%s-%d on broker %d %s: %s", topic, p.Partition, r.Broker, state, r.Damage))
	}
	return out
}

// replicaLogEnds spells each replica as BROKER:LOG-END-OFFSET, the log end
// as the replica's own broker holds it: - when that broker does not run
// or has not opened the replica.
func replicaLogEnds(p *view.Partition) string {
	if len(p.Replicas) == 0 {
		return "-"
	}
	s := make([]string, len(p.Replicas))
	for i, id := range p.Replicas {
		end := "-"
		for _, r := range p.ReplicaStates {
			if r.Broker == id && r.Hosted {
				end = fmt.Sprint(r.LogEndOffset)
			}
		}
		s[i] = fmt.Sprintf("%d:%s", id, end)
	}
	return strings.Join(s, " ")
}

func idOrNone(id int32) string {
	if id == view.NoLeader {
		return "none"
	}
	return fmt.Sprint(id)
}

func joinIDs(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// exactArgs accepts exactly n arguments and reports anything else with an
// example.
func exactArgs(n int, want, example string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			got := "nothing"
			if len(args) > 0 {
				got = fmt.Sprintf("%d (%s)", len(args), strings.Join(args, " "))
			}
			return usagef("%s takes %s, got %s; e.g.: %s", cmd.CommandPath(), want, got, example)
		}
		return nil
	}
}

// noTopicsRead says why a real cluster shows no topics: it has none, or
// they could not be read.
func noTopicsRead(cmd *cobra.Command, v *view.View) error {
	msg := "no topics"
	if slices.Contains(v.Attached.Unread, "topics") {
		msg = "topics not read (Metadata needs --bootstrap-server)"
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s; %s\n", msg, attachedNote(v))
	return err
}
