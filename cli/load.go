package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func newLoadCommand(e *env) *cobra.Command {
	var size byteSize = cluster.DefaultLoadRecordBytes
	var topic string
	cmd := &cobra.Command{
		Use:   "load [RATE [--size BYTES] | stop] [--topic TOPIC]",
		Short: "Start, change or stop a background load: metadata records on the leader, or --topic records through the brokers",
		Long: `Load makes the playground append RATE records a second to the metadata log
on the current leader, each of --size bytes, as a producer would: the log
end offsets and the high watermark move, and followers and observers have
something to fetch. The records go out in batches every 10ms, one Append
each, and count as committed once the leader's high watermark passes them.

The load follows the leader across elections and pauses while there is
none. A record whose append failed (the node no longer led, or lost the
leadership before the record committed) counts as failed: if it reached
the old leader's log, the next leader may still commit it, so its fate is
unknown, as with Kafka's NOT_LEADER_OR_FOLLOWER. Records the rate called
for while there was no leader, or while too much waited to commit, count
as skipped.

With --topic TOPIC the load goes through the data plane instead: a real
Kafka client (franz-go, acks=all, idempotent) produces RATE records a second
of --size bytes to the topic, round the partitions, so that the partition
leaders' logs and high watermarks and the followers' fetcher threads move
(kraftlab fetchers, kraftlab topics describe, b on the live screen). The
client follows partition leaders across failures by itself; records it
gives up on count as failed, those the rate called for while a second's
worth waited for answers as skipped. Each topic has a load of its own (at
most ` + strconv.Itoa(cluster.MaxTopicLoads) + ` at once), beside the metadata load: "load stop --topic T"
stops T's and leaves the others running. P on the live screen does the same.

"load RATE" starts the load or changes its rate, "load stop" (or "load 0")
stops it, and "load" alone shows it. At most ` + strconv.Itoa(cluster.MaxLoadRate) + ` records/s, records of at
most ` + humanize.IBytes(cluster.MaxLoadRecordBytes) + `, and at most ` + humanize.IBytes(cluster.MaxLoadBytesPerSec) + `/s in all.`,
		Example:           indentExample("kraftlab load 200\nkraftlab load 5000 --size 1KiB\nkraftlab load\nkraftlab load stop\nkraftlab load 500 --topic orders\nkraftlab load stop --topic orders"),
		ValidArgsFunction: cobra.FixedCompletions([]string{"stop\tstop the load", "100\trecords per second"}, cobra.ShellCompDirectiveNoFileComp),
	}
	cmd.Flags().Var(&size, "size", "size of each record, e.g. 100, 1KiB or 4kB")
	cmd.Flags().StringVar(&topic, "topic", "", "produce to this topic through the brokers instead of appending metadata records")
	addJSONFlag(cmd)
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usagef("load takes a RATE or stop, got %d arguments; e.g.: kraftlab load 200", len(args))
		}
		if len(args) == 0 {
			if cmd.Flags().Changed("topic") {
				return usagef("load --topic needs a RATE or stop; e.g.: kraftlab load 200 --topic %s", topic)
			}
			if cmd.Flags().Changed("size") {
				return usagef("load --size needs a RATE; e.g.: kraftlab load 200 --size %d", int(size))
			}
			return nil
		}
		rate, err := loadRate(args[0])
		if err != nil {
			return err
		}
		if rate == 0 && cmd.Flags().Changed("size") {
			return usagef("load stop takes no --size")
		}
		if err := cluster.ValidateLoad(rate, int(size)); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return showLoad(e, cmd)
		}
		rate, _ := loadRate(args[0])
		a := cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: rate, Topic: topic, StartedBy: view.OriginCLI}
		if e.scenario {
			a.StartedBy = view.OriginScenario
		}
		if rate > 0 {
			a.RecordBytes = int(size)
		}
		return doAction(e, cmd, a)
	}
	return cmd
}

// loadRate reads load's argument: stop, or records per second.
func loadRate(arg string) (int, error) {
	if arg == "stop" {
		return 0, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return 0, usagef("bad load rate %q: want records per second, such as 200, or stop", arg)
	}
	return n, nil
}

// showLoad prints the load's state.
func showLoad(e *env, cmd *cobra.Command) error {
	c, err := e.connect(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := status(cmd.Context(), c)
	if err != nil {
		return err
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), struct {
			view.Load
			Topics []view.TopicLoad `json:"topicLoads"`
		}{v.Load, v.TopicLoads})
	}
	writeLoad(cmd.OutOrStdout(), &v)
	return nil
}

func writeLoad(w io.Writer, v *view.View) {
	l := v.Load
	fmt.Fprintf(w, "load %s%s\n", l, startedBy(l.StartedBy))
	fmt.Fprintf(w, "  records committed %d, failed %d, skipped %d, in flight %d\n", l.Committed, l.Failed, l.Skipped, l.InFlight)
	if l.LastError != "" {
		fmt.Fprintf(w, "  last failure %s: %s\n", ago(l.LastErrorTimestamp, v.Timestamp), l.LastError)
	}
	for _, t := range v.TopicLoads {
		fmt.Fprintf(w, "topic load %s to topic %s%s\n", view.LoadRate(t.RecordsPerSec, t.RecordBytes), t.Topic, startedBy(t.StartedBy))
		fmt.Fprintf(w, "  records acknowledged %d, failed %d, skipped %d, in flight %d\n", t.Acked, t.Failed, t.Skipped, t.InFlight)
		if t.LastError != "" {
			fmt.Fprintf(w, "  last failure %s: %s\n", ago(t.LastErrorTimestamp, v.Timestamp), t.LastError)
		}
	}
}

// startedBy says who started a load, "" if unknown.
func startedBy(o view.Origin) string {
	if o == "" {
		return ""
	}
	return ", started from " + o.Words()
}

// byteSize is a size flag in bytes: 100, 1KiB, 4kB.
type byteSize int

func (b *byteSize) String() string { return strconv.Itoa(int(*b)) }
func (b *byteSize) Type() string   { return "bytes" }
func (b *byteSize) Set(s string) error {
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("want a size such as 100, 1KiB or 4kB")
	}
	if n < cluster.MinLoadRecordBytes || n > cluster.MaxLoadRecordBytes {
		return fmt.Errorf("must be between %d B and %s", cluster.MinLoadRecordBytes, humanize.IBytes(cluster.MaxLoadRecordBytes))
	}
	*b = byteSize(n)
	return nil
}

// loadLines are what status says about the loads: the metadata load's
// once it ran, and each running topic load's.
func loadLines(v *view.View) []string {
	var out []string
	if l := v.Load; l.On() || l.Committed+l.Failed+l.Skipped > 0 {
		out = append(out, fmt.Sprintf("load %s; %d records committed%s", l, l.Committed, startedBy(l.StartedBy)))
	}
	for _, t := range v.TopicLoads {
		out = append(out, fmt.Sprintf("topic load %s to topic %s; %d records acknowledged, %d failed%s",
			view.LoadRate(t.RecordsPerSec, t.RecordBytes), t.Topic, t.Acked, t.Failed, startedBy(t.StartedBy)))
	}
	return out
}
