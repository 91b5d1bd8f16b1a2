package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumeFetchMaxWait is how long a broker may hold an empty fetch: short,
// so that --timeout is kept to within it.
const consumeFetchMaxWait = 250 * time.Millisecond

type consumeOptions struct {
	fromBeginning bool
	offset        int64
	partition     int32
	max           int
	timeout       time.Duration
	// group, if set, reads as a member of this consumer group.
	group string
	// groupProtocol is the group protocol, Kafka's group.protocol:
	// classic or consumer (KIP-848).
	groupProtocol string
}

// consumedRecord is one record in consume --json.
type consumedRecord struct {
	Topic       string  `json:"topic"`
	Partition   int32   `json:"partition"`
	Offset      int64   `json:"offset"`
	LeaderEpoch int32   `json:"leaderEpoch"`
	Timestamp   int64   `json:"timestamp"`
	Key         *string `json:"key"`
	Value       string  `json:"value"`
}

func newConsumeCommand(e *env) *cobra.Command {
	o := &consumeOptions{}
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Read records from a topic, as kafka-console-consumer does",
		Long: `Consume reads records from the playground's brokers with a real Kafka client
(franz-go), with no consumer group: it fetches every partition (or
--partition) from its leader and prints each record's partition, offset, key
and value. A consumer only sees records below the high watermark, the ones
every in-sync replica has: a record acks=1 wrote to the leader alone is not
visible until the followers fetched it.

It starts at the end of each partition (only new records) unless
--from-beginning or --offset says otherwise, and stops after --max records,
or when nothing new came for --timeout.

With --group it reads as a member of that consumer group: the group's
coordinator, the leader of the group's partition of __consumer_offsets,
shares the partitions among the group's members (with --group-protocol
classic, the default, through the member it makes the group's leader; with
consumer, KIP-848's protocol, by assigning them itself), and
the group's committed offsets say where to start (--from-beginning only
where it has none). It commits the records it printed, then leaves.`,
		Example: indentExample("kraftlab consume orders --from-beginning\nkraftlab consume orders --partition 0 --offset 10 --max 5\nkraftlab consume orders --from-beginning --max 50 --json\nkraftlab consume orders --group billing --from-beginning --max 10"),
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactArgs(1, "one TOPIC", "kraftlab consume orders --from-beginning")(cmd, args); err != nil {
				return err
			}
			return o.validate(cmd)
		},
	}
	addJSONFlag(cmd)
	cmd.Flags().BoolVar(&o.fromBeginning, "from-beginning", false, "start at each partition's log start offset")
	cmd.Flags().Int64Var(&o.offset, "offset", -1, "start at this offset of each partition (default: the end)")
	cmd.Flags().Int32Var(&o.partition, "partition", -1, "read only this partition (default: all)")
	cmd.Flags().IntVar(&o.max, "max", 0, "stop after this many records (default: no limit)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Second, "stop when nothing new came for this long")
	cmd.Flags().StringVar(&o.group, "group", "", "read as a member of this consumer group, from its committed offsets, and commit what was printed")
	cmd.Flags().StringVar(&o.groupProtocol, "group-protocol", groupTypeClassic, "the group protocol, as Kafka's group.protocol: classic (the client assigns) or consumer (KIP-848: the coordinator assigns)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := newBrokerClient(e, cmd, args[0], o.partition, o.consumerOpts(args[0])...)
		if err != nil {
			return err
		}
		defer cl.Close()
		n, err := o.consume(cmd.Context(), cmd.OutOrStdout(), cl, wantJSON(cmd))
		if err != nil {
			return err
		}
		if !wantJSON(cmd) {
			fmt.Fprintf(cmd.ErrOrStderr(), "consumed %s from %s\n", plural(int64(n), "record"), args[0])
		}
		return nil
	}
	return cmd
}

func (o *consumeOptions) validate(cmd *cobra.Command) error {
	if o.fromBeginning && cmd.Flags().Changed("offset") {
		return usagef("--from-beginning and --offset both say where to start; give one")
	}
	if cmd.Flags().Changed("offset") && o.offset < 0 {
		return usagef("--offset must be 0 or more, got %d", o.offset)
	}
	if cmd.Flags().Changed("partition") && o.partition < 0 {
		return usagef("--partition must be 0 or more, got %d", o.partition)
	}
	if o.max < 0 {
		return usagef("--max must be 0 (no limit) or more, got %d", o.max)
	}
	if cmd.Flags().Changed("group") && o.group == "" {
		return usagef("--group needs a group name")
	}
	if o.groupProtocol != groupTypeClassic && o.groupProtocol != groupTypeConsumer {
		return usagef("--group-protocol must be %s or %s, got %q", groupTypeClassic, groupTypeConsumer, o.groupProtocol)
	}
	if cmd.Flags().Changed("group-protocol") && o.group == "" {
		return usagef("--group-protocol needs --group")
	}
	if o.group != "" && (cmd.Flags().Changed("partition") || cmd.Flags().Changed("offset")) {
		return usagef("--group reads where the group's committed offsets say, from the partitions its coordinator assigns; drop --partition and --offset")
	}
	if o.timeout <= 0 {
		return usagef("--timeout must be positive, got %v", o.timeout)
	}
	return nil
}

// start is where each partition is read from.
func (o *consumeOptions) start() kgo.Offset {
	switch {
	case o.fromBeginning:
		return kgo.NewOffset().AtStart()
	case o.offset >= 0:
		return kgo.NewOffset().At(o.offset)
	}
	return kgo.NewOffset().AtEnd()
}

func (o *consumeOptions) consumerOpts(topic string) []kgo.Opt {
	opts := []kgo.Opt{kgo.FetchMaxWait(consumeFetchMaxWait)}
	if o.partition >= 0 {
		return append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {o.partition: o.start()}}))
	}
	opts = append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(o.start()))
	if o.group != "" {
		opts = append(opts, kgo.ConsumerGroup(o.group), kgo.DisableAutoCommit())
		if o.groupProtocol == groupTypeConsumer {
			opts = append(opts, kgo.ServerSideBalancer())
		}
	}
	return opts
}

// consume prints records until o.max of them or o.timeout without one.
func (o *consumeOptions) consume(ctx context.Context, w io.Writer, cl *kgo.Client, asJSON bool) (int, error) {
	n := 0
	enc := json.NewEncoder(w)
	for o.max == 0 || n < o.max {
		pollCtx, cancel := context.WithTimeout(ctx, o.timeout)
		want := 0
		if o.max > 0 {
			want = o.max - n
		}
		fetches := cl.PollRecords(pollCtx, want)
		cancel()
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
				continue
			}
			return n, failedf("fetch %s-%d: %v", fe.Topic, fe.Partition, fe.Err)
		}
		if fetches.NumRecords() == 0 {
			return n, nil // nothing new for o.timeout
		}
		var err error
		var printed []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			if err != nil || (o.max > 0 && n >= o.max) {
				return
			}
			n++
			printed = append(printed, r)
			if asJSON {
				err = enc.Encode(recordJSON(r))
				return
			}
			key := "-"
			if r.Key != nil {
				key = string(r.Key)
			}
			_, err = fmt.Fprintf(w, "partition %d offset %d key %s: %s\n", r.Partition, r.Offset, key, r.Value)
		})
		if err != nil {
			return n, fmt.Errorf("print records: %w", err)
		}
		if o.group != "" {
			if err := cl.CommitRecords(ctx, printed...); err != nil {
				return n, failedf("commit to group %s: %v", o.group, err)
			}
		}
	}
	return n, nil
}

func recordJSON(r *kgo.Record) consumedRecord {
	c := consumedRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, LeaderEpoch: r.LeaderEpoch, Timestamp: r.Timestamp.UnixMilli(), Value: string(r.Value)}
	if r.Key != nil {
		k := string(r.Key)
		c.Key = &k
	}
	return c
}
