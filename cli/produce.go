package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// produceTimeout bounds how long a record may wait for its acks before
// produce gives up on it: long enough for a leader election of the
// workshop profile, short enough that a refused record shows its error.
const produceTimeout = 15 * time.Second

// maxProduceRecordBytes bounds --size: records of a playground, not a
// benchmark.
const maxProduceRecordBytes = 1 << 20

// maxProduceCount bounds --count, so that a typo does not fill the disk.
const maxProduceCount = 1_000_000

// produceAcks are the values of --acks, with what a learner should know.
var produceAcks = map[string]int16{"all": -1, "-1": -1, "1": 1, "0": 0}

type produceOptions struct {
	acks      string
	key       string
	partition int32
	count     int
	size      int
	// expectError is the Kafka error the produce must be refused with
	// (--expect-error), "" when it must succeed.
	expectError string
}

func newProduceCommand(e *env) *cobra.Command {
	o := &produceOptions{}
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce records to a topic, as kafka-console-producer does",
		Long: `Produce sends records to the playground's brokers with a real Kafka client
(franz-go), the way any producer does: it reads the cluster from a broker's
Metadata, sends each partition's records to its leader, and the leader
answers once --acks says so. acks=all (the default) waits until every replica
in the ISR has the record: the followers' next Fetch past it is their
acknowledgement, and the high watermark moves. The leader refuses with
NOT_ENOUGH_REPLICAS when the ISR is smaller than min.insync.replicas
(capped at the replication factor). acks=1 answers once the leader's own
log has it, acks=0 not at all; while the ISR is below min.insync.replicas
such records are kept but the high watermark does not move, so consumers
see them only once enough replicas are back in the ISR.

Without --count it reads stdin and sends one record per line, printing each
record's partition and offset. With --count N it sends N records of --size
bytes, spread round the partitions, and prints a summary. --key sets every
record's key (the key picks the partition); --partition sends to one
partition.

With acks=all the producer is idempotent, as Kafka's clients are by
default: the broker gives it a producer id and drops a retried batch it
already holds. --expect-error NAME turns the line around for scripts and
scenarios: it succeeds only when the leader refuses the records with that
Kafka error, e.g. NOT_ENOUGH_REPLICAS.`,
		Example: indentExample("echo hello | kraftlab produce orders\nkraftlab produce orders --count 50 --acks all\nkraftlab produce orders --key user-7 --partition 0\nkraftlab produce orders --count 1 --expect-error NOT_ENOUGH_REPLICAS"),
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactArgs(1, "one TOPIC", "kraftlab produce orders --count 10")(cmd, args); err != nil {
				return err
			}
			return o.validate(cmd, e.scenario)
		},
	}
	cmd.Flags().StringVar(&o.acks, "acks", "all", "acknowledgements the leader waits for: all, 1 or 0")
	cmd.Flags().StringVar(&o.key, "key", "", "the key of every record (default none: records spread over the partitions)")
	cmd.Flags().Int32Var(&o.partition, "partition", -1, "send every record to this partition (default: the partitioner picks)")
	cmd.Flags().IntVar(&o.count, "count", 0, "send this many generated records instead of reading stdin")
	cmd.Flags().IntVar(&o.size, "size", 100, "bytes of each generated record's value, with --count")
	cmd.Flags().StringVar(&o.expectError, "expect-error", "", "succeed only if the records are refused with this Kafka error, e.g. NOT_ENOUGH_REPLICAS")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := newBrokerClient(e, cmd, args[0], o.partition, o.producerOpts()...)
		if err != nil {
			return err
		}
		defer cl.Close()
		if o.count > 0 {
			return o.produceCount(cmd.Context(), cmd.OutOrStdout(), cl, args[0])
		}
		return o.produceLines(cmd.Context(), cmd.OutOrStdout(), e.stdin, cl, args[0])
	}
	return cmd
}

func (o *produceOptions) validate(cmd *cobra.Command, inScenario bool) error {
	if _, ok := produceAcks[o.acks]; !ok {
		return usagef("bad --acks %q: want all, 1 or 0", o.acks)
	}
	if cmd.Flags().Changed("partition") && o.partition < 0 {
		return usagef("--partition must be 0 or more, got %d", o.partition)
	}
	if o.expectError != "" && kerr.TypedErrorForCode(kerrCode(o.expectError)) == nil {
		return usagef("bad --expect-error %q: want a Kafka error name, e.g. NOT_ENOUGH_REPLICAS", o.expectError)
	}
	if o.count < 0 || o.count > maxProduceCount {
		return usagef("--count must be between 1 and %d, got %d", maxProduceCount, o.count)
	}
	if cmd.Flags().Changed("size") && o.count == 0 {
		return usagef("--size sizes the records of --count; lines from stdin are sent as they are")
	}
	if o.size < 0 || o.size > maxProduceRecordBytes {
		return usagef("--size must be between 0 and %s, got %d", humanize.IBytes(maxProduceRecordBytes), o.size)
	}
	if inScenario && o.count == 0 {
		return usagef("in a scenario, produce needs --count N: a scenario line has no stdin to read records from")
	}
	return nil
}

// producerOpts are the producer's client options. With acks=all the
// producer is idempotent, as Kafka's clients are by default (the broker
// hands it a producer id and drops a retried batch it already holds);
// idempotence needs acks=all, so acks 1 and 0 turn it off.
func (o *produceOptions) producerOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.RequiredAcks(acksOf(produceAcks[o.acks])),
		kgo.RecordDeliveryTimeout(produceTimeout),
		// A refusal such as NOT_ENOUGH_REPLICAS is retriable; retry a few
		// times, then show it rather than hide it behind the timeout. The
		// client retries after refreshing metadata, which it otherwise
		// does at most every 5s: the retries would outlast the timeout.
		kgo.RecordRetries(4),
		kgo.MetadataMinAge(200 * time.Millisecond),
		kgo.UnknownTopicRetries(2),
	}
	if produceAcks[o.acks] != -1 {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	switch {
	case o.partition >= 0:
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	case o.count > 0 && o.key == "":
		// Generated records go round the partitions, so that every
		// partition (and every fetcher thread) gets some; the default
		// sticky partitioner would put a whole --count in one batch.
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	return opts
}

func acksOf(n int16) kgo.Acks {
	switch n {
	case 0:
		return kgo.NoAck()
	case 1:
		return kgo.LeaderAck()
	}
	return kgo.AllISRAcks()
}

func (o *produceOptions) record(topic string, value []byte) *kgo.Record {
	r := &kgo.Record{Topic: topic, Value: value}
	if o.key != "" {
		r.Key = []byte(o.key)
	}
	if o.partition >= 0 {
		r.Partition = o.partition
	}
	return r
}

// produceLines sends one record per line of in, each waited for, as
// kafka-console-producer does.
func (o *produceOptions) produceLines(ctx context.Context, w io.Writer, in io.Reader, cl *kgo.Client, topic string) error {
	if in == nil {
		in = strings.NewReader("")
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), maxProduceRecordBytes)
	n := 0
	for sc.Scan() {
		r := o.record(topic, []byte(sc.Text()))
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return o.refused(w, err, topic, n)
		}
		n++
		if o.acks == "0" {
			fmt.Fprintf(w, "sent to partition %d (acks=0: no offset comes back)\n", r.Partition)
			continue
		}
		fmt.Fprintf(w, "partition %d offset %d\n", r.Partition, r.Offset)
	}
	if err := sc.Err(); err != nil {
		return usagef("read stdin: %v", err)
	}
	if n == 0 {
		fmt.Fprintln(w, "no records: stdin had no lines (type them, or pipe them in, one record per line)")
	}
	return nil
}

// produceCount sends o.count generated records at once and sums up where
// they went.
func (o *produceOptions) produceCount(ctx context.Context, w io.Writer, cl *kgo.Client, topic string) error {
	records := make([]*kgo.Record, o.count)
	for i := range records {
		records[i] = o.record(topic, generatedValue(i, o.size))
	}
	results := cl.ProduceSync(ctx, records...)
	ok := 0
	var firstErr error
	for _, r := range results {
		if r.Err != nil {
			if firstErr == nil {
				firstErr = r.Err
			}
			continue
		}
		ok++
	}
	if firstErr != nil {
		return o.refused(w, firstErr, topic, ok)
	}
	if o.expectError != "" {
		return failedf("produce to %s: all %d records were written, but --expect-error wanted them refused with %s", topic, o.count, o.expectError)
	}
	fmt.Fprintf(w, "produced %d records of %s to %s with acks=%s\n", o.count, humanize.Bytes(uint64(o.size)), topic, o.acks)
	if o.acks == "0" {
		return nil
	}
	return writeOffsetRanges(w, records)
}

// writeOffsetRanges prints, per partition, the offsets the records got.
func writeOffsetRanges(w io.Writer, records []*kgo.Record) error {
	type span struct{ first, last, n int64 }
	spans := map[int32]*span{}
	for _, r := range records {
		s, ok := spans[r.Partition]
		if !ok {
			spans[r.Partition] = &span{first: r.Offset, last: r.Offset, n: 1}
			continue
		}
		s.first, s.last, s.n = min(s.first, r.Offset), max(s.last, r.Offset), s.n+1
	}
	parts := make([]int32, 0, len(spans))
	for p := range spans {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		s := spans[p]
		if _, err := fmt.Fprintf(w, "  partition %d: %d records, offsets %d..%d\n", p, s.n, s.first, s.last); err != nil {
			return err
		}
	}
	return nil
}

// generatedValue is record i's value: its number, padded to size bytes so
// that a consumer can tell the records apart.
func generatedValue(i, size int) []byte {
	v := []byte(fmt.Sprintf("record-%d", i))
	if len(v) >= size {
		return v[:size]
	}
	pad := make([]byte, size-len(v))
	for j := range pad {
		pad[j] = '.'
	}
	return append(v, pad...)
}

// refused reports a produce that failed: as expected when the leader's
// error is --expect-error's, else as produceError says.
func (o *produceOptions) refused(w io.Writer, err error, topic string, written int) error {
	var ke *kerr.Error
	if o.expectError != "" && errors.As(err, &ke) && ke.Message == o.expectError {
		_, werr := fmt.Fprintf(w, "refused as expected: %s: %s (%d records written before it)\n", ke.Message, ke.Description, written)
		return werr
	}
	return produceError(err, topic, o.acks, written)
}

// produceError says why a record was not written, with Kafka's error name
// and what it means here.
func produceError(err error, topic, acks string, written int) error {
	done := ""
	if written > 0 {
		done = fmt.Sprintf(" (%d records written before it)", written)
	}
	var ke *kerr.Error
	errors.As(err, &ke)
	switch {
	case ke == kerr.NotEnoughReplicas || ke == kerr.NotEnoughReplicasAfterAppend:
		return failedf("produce to %s refused%s: %s: the ISR is smaller than min.insync.replicas, so acks=%s cannot be met (kraftlab topics describe %s shows the ISR)", topic, done, ke.Message, acks, topic)
	case errors.Is(err, kgo.ErrRecordTimeout):
		return failedf("produce to %s timed out%s after %v: no leader accepted the records (kraftlab topics describe %s shows the leaders)", topic, done, produceTimeout, topic)
	case ke != nil:
		return failedf("produce to %s refused%s: %s: %s", topic, done, ke.Message, ke.Description)
	}
	return failedf("produce to %s%s: %v", topic, done, err)
}

// newBrokerClient is a Kafka client seeded with the playground's running
// brokers, as the view lists their listeners: the CLI itself dials them,
// as any Kafka client on this machine would. It checks that topic (and
// partition, when 0 or more) exist, so that a typo says so at once.
func newBrokerClient(e *env, cmd *cobra.Command, topic string, partition int32, opts ...kgo.Opt) (*kgo.Client, error) {
	v, err := fetchView(e, cmd)
	if err != nil {
		return nil, err
	}
	t, ok := v.Topic(topic)
	if !ok {
		return nil, usagef("no topic %q; the topics are: %s", topic, topicNames(v.Topics))
	}
	if partition >= int32(len(t.Partitions)) {
		return nil, usagef("topic %s has partitions 0..%d, not %d", topic, len(t.Partitions)-1, partition)
	}
	var seeds []string
	for _, n := range v.Nodes {
		if n.Kind == view.KindBroker && n.State == view.StateRunning && n.Listener != "" {
			seeds = append(seeds, n.Listener)
		}
	}
	if len(seeds) == 0 {
		return nil, failedf("no broker is running to talk to (kraftlab brokers shows them; kraftlab start NODE starts one)")
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID("kraftlab-cli")}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, nil
}

// kerrCode is the code of the Kafka error named name, 0 if none is.
func kerrCode(name string) int16 {
	for code := int16(1); code < 200; code++ {
		if e := kerr.TypedErrorForCode(code); e != nil && e.Message == name {
			return code
		}
	}
	return 0
}
