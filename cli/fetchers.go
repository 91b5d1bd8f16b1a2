package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func newFetchersCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fetchers [BROKER]",
		Short: "Show each broker's replica fetcher threads and the partitions they fetch",
		Long: `Fetchers shows how followers replicate: every running broker's
ReplicaFetcherThreads (Kafka's name ReplicaFetcherThread-<fetcherId>-<source
broker>), one thread per leader broker and fetcher id, and each partition the
thread fetches.

A thread loops: it sends its leader one Fetch request carrying every partition
it holds, appends what comes back, and sends the next. (Kafka keeps an
incremental fetch session, so after the first request its Fetches list only
the partitions whose fetch offset changed; kraftlab sends them all every time,
so you can read them.) That next Fetch is the
acknowledgement: the leader learns the follower's log end offset from the fetch
offset it asks for, advances the high watermark, and keeps the follower in the
ISR while it stays caught up (replica.lag.time.max.ms). Because one request
carries all of a thread's partitions, a partition the leader is slow to answer
delays its thread-mates, but not the partitions of another thread:
num.replica.fetchers threads per leader spread the partitions, each placed by
Kafka's hash of its topic and partition (the playground runs Kafka's default,
one thread per leader broker).

Per thread: its source (leader) broker, the Fetch requests it sent and those
that failed whole, the record bytes it appended and its last answer's age. Per
partition: STATE Fetching, or Truncating for a log with no leader epoch to
compare (it truncates to its fetch offset first; a returning old leader stays
Fetching: the leader's DivergingEpoch answer makes it cut its log, which the
TRUNCATIONS column counts), "delayed"
while it backs off after an error (replica.fetch.backoff.ms), the FETCH OFFSET
its next fetch asks for, the epoch of the last batch it appended, LAG (the
leader's high watermark less the fetch offset: Kafka's MaxLag is the largest),
the leader's high watermark as its last answer said (a fetch behind the
leader's own: the follower learns that it moved the high watermark from the
answer to its next fetch), the rate of record bytes appended (batches as the
producer sent them, compressed or not), THROTTLED (the broker's follower
replication quota counts it: follower.replication.throttled.replicas, set
with kafka-configs), records appended, truncations and the last error.
Above a broker's threads, when it has throttled replicas, the measured
throttled rates it serves as a leader and fetches as a follower.`,
		Example: indentExample("kraftlab fetchers\nkraftlab fetchers 102\nkraftlab fetchers --json"),
		Args:    fetchersArgs,
	}
	addJSONFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := fetchView(e, cmd)
		if err != nil {
			return err
		}
		rows, err := fetcherRows(&v, args)
		if err != nil {
			return err
		}
		if wantJSON(cmd) {
			return printJSON(cmd.OutOrStdout(), rows)
		}
		return writeFetchers(cmd.OutOrStdout(), rows, v.Timestamp)
	}
	return cmd
}

// fetchersArgs accepts no argument or one broker: an ID or a reference
// (target, leader-of:T-P, follower-of:T-P).
func fetchersArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usagef("fetchers takes no BROKER or one, got %d (%s); e.g.: kraftlab fetchers 102", len(args), strings.Join(args, " "))
	}
	for _, a := range args {
		if _, err := condition.ParseBrokerRef(a); err != nil {
			return usagef("%v", err)
		}
	}
	return nil
}

// fetcherRow is one broker in fetchers --json: its id and playground state
// with its threads and purgatories as the view holds them.
type fetcherRow struct {
	ID               int32                `json:"nodeId"`
	Node             view.State           `json:"nodeState"`
	Fetchers         []view.FetcherThread `json:"fetchers"`
	FailedPartitions []string             `json:"failedPartitions,omitempty"`
	DelayedProduces  int                  `json:"delayedProduces"`
	DelayedFetches   int                  `json:"delayedFetches"`
	// The measured throttled replication rates (view.Broker's).
	LeaderThrottledBytesPerSec   float64 `json:"leaderThrottledBytesPerSec"`
	FollowerThrottledBytesPerSec float64 `json:"followerThrottledBytesPerSec"`
}

// fetcherRows is every broker, or the one args names.
func fetcherRows(v *view.View, args []string) ([]fetcherRow, error) {
	rows := []fetcherRow{}
	if len(args) == 1 {
		ref, _ := condition.ParseBrokerRef(args[0]) // checked by fetchersArgs
		id, err := ref.Resolve(v)
		if err != nil {
			return nil, failedf("fetchers %s: %v", args[0], err)
		}
		args = []string{fmt.Sprint(id)}
	}
	var brokers []string
	for _, n := range v.Nodes {
		if n.Kind != view.KindBroker {
			continue
		}
		brokers = append(brokers, fmt.Sprint(n.ID))
		if len(args) == 1 && args[0] != fmt.Sprint(n.ID) {
			continue
		}
		r := fetcherRow{ID: n.ID, Node: n.State, Fetchers: []view.FetcherThread{}}
		if b := n.Broker; b != nil {
			if b.Fetchers != nil {
				r.Fetchers = b.Fetchers
			}
			r.FailedPartitions, r.DelayedProduces, r.DelayedFetches = b.FailedPartitions, b.DelayedProduces, b.DelayedFetches
			r.LeaderThrottledBytesPerSec, r.FollowerThrottledBytesPerSec = b.LeaderThrottledBytesPerSec, b.FollowerThrottledBytesPerSec
		}
		rows = append(rows, r)
	}
	if len(args) == 1 && len(rows) == 0 {
		return nil, usagef("no broker %s; the brokers are: %s", args[0], strings.Join(brokers, ", "))
	}
	return rows, nil
}

func writeFetchers(w io.Writer, rows []fetcherRow, now int64) error {
	for i, r := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if r.Node != view.StateRunning {
			fmt.Fprintf(w, "broker %d: not running (%s)\n", r.ID, r.Node)
			continue
		}
		threads := threadCount(len(r.Fetchers))
		if len(r.Fetchers) == 0 {
			threads = "no fetcher threads: it follows no partition"
		}
		fmt.Fprintf(w, "broker %d: %s; purgatories: %d delayed produces, %d delayed fetches\n", r.ID, threads, r.DelayedProduces, r.DelayedFetches)
		if r.LeaderThrottledBytesPerSec > 0 || r.FollowerThrottledBytesPerSec > 0 {
			fmt.Fprintf(w, "  throttled replication: %s/s served as leader, %s/s fetched as follower\n",
				humanize.Bytes(uint64(r.LeaderThrottledBytesPerSec)), humanize.Bytes(uint64(r.FollowerThrottledBytesPerSec)))
		}
		if len(r.FailedPartitions) > 0 {
			fmt.Fprintf(w, "  failed partitions (no thread fetches them until metadata adds them again): %s\n", strings.Join(r.FailedPartitions, ", "))
		}
		for _, th := range r.Fetchers {
			if err := writeThread(w, th, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// countOf spells n things, "1 request" or "2 requests".
func countOf(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func threadCount(n int) string {
	if n == 1 {
		return "1 fetcher thread"
	}
	return fmt.Sprintf("%d fetcher threads", n)
}

func writeThread(w io.Writer, th view.FetcherThread, now int64) error {
	fmt.Fprintf(w, "  %s from broker %d: %s, %s, %s appended, last answer %s\n",
		th.Name, th.SourceBroker, countOf(th.Requests, "request"), countOf(th.Errors, "error"), humanize.Bytes(uint64(max(th.Bytes, 0))), ago(th.LastResponseTimestamp, now))
	if len(th.Partitions) == 0 {
		_, err := fmt.Fprintln(w, "    no partitions")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    PARTITION\tSTATE\tFETCH OFFSET\tLAST EPOCH\tLAG\tHWM\tBYTES/S\tTHROTTLED\tRECORDS\tTRUNCATIONS\tLAST ERROR")
	for _, p := range th.Partitions {
		state := string(p.State)
		if p.Delayed {
			state += " (delayed)"
		}
		throttled := "no"
		if p.Throttled {
			throttled = "yes"
		}
		fmt.Fprintf(tw, "    %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n",
			view.TopicPartition{Topic: p.Topic, Partition: p.Partition}, state, p.FetchOffset, epochOrDash(p.LastFetchedEpoch),
			int64OrDash(p.Lag), int64OrDash(p.HighWatermark), humanize.Bytes(uint64(max(p.BytesPerSec, 0)))+"/s", throttled, p.Records, p.Truncations, orDash(p.LastError))
	}
	return tw.Flush()
}

func epochOrDash(e int32) string {
	if e < 0 {
		return "-"
	}
	return fmt.Sprint(e)
}
