package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// fetchersView is replicationView with broker 102's fetcher thread for
// leader 101 (partition 0 truncating, partition 2 delayed after an error)
// and broker 101's for leader 102.
func fetchersView(now int64) view.View {
	v := replicationView(now)
	for i := range v.Nodes {
		switch v.Nodes[i].ID {
		case 101:
			v.Nodes[i].Broker.Fetchers = []view.FetcherThread{{Name: "ReplicaFetcherThread-0-102", SourceBroker: 102, Requests: 40, LastResponseTimestamp: now - 12,
				Partitions: []view.FetcherPartition{{Topic: "orders", Partition: 1, State: view.FetchStateFetching, FetchOffset: 75, Lag: 0, HighWatermark: 75, BytesPerSec: 2048, Throttled: true}}}}
			v.Nodes[i].Broker.DelayedFetches = 1
		case 102:
			v.Nodes[i].State = view.StateRunning
			v.Nodes[i].Broker.Fetchers = []view.FetcherThread{{Name: "ReplicaFetcherThread-0-101", SourceBroker: 101, Requests: 55, Errors: 2, LastResponseTimestamp: now - 1500,
				Partitions: []view.FetcherPartition{
					{Topic: "orders", Partition: 0, State: view.FetchStateTruncating, FetchOffset: 90, Lag: 30, HighWatermark: 120, Truncations: 1},
					{Topic: "orders", Partition: 2, State: view.FetchStateFetching, Delayed: true, FetchOffset: 10, Lag: 5, HighWatermark: -1, LastError: "NOT_LEADER_OR_FOLLOWER"},
				}}}
			v.Nodes[i].Broker.DelayedProduces = 3
			v.Nodes[i].Broker.FailedPartitions = []string{"orders-7"}
		}
	}
	return v
}

func fetchersText(v *view.View, w, h int) string {
	return ansi.Strip(strings.Join(fetchersModel{}.view(DefaultStyles(), v, w, h), "\n"))
}

// Tall enough, the panel shows every broker, each of its threads (name,
// source broker, partitions, requests, errors, last answer) and each
// partition of a thread: its phase, fetch offset, lag and rate; a
// truncating, a delayed, a throttled and an erring partition say so, and so does a
// broker's purgatory and the partitions its fetchers gave up on.
func TestFetchersPanelShowsThreadsAndTheirPartitions(t *testing.T) {
	v := fetchersView(1_000_000)
	out := fetchersText(&v, 100, 20)
	for _, want := range []string{
		"Fetchers: each broker's replica fetcher threads (b: groups)",
		"broker 101: 1 thread, 1 partition · purgatory: 0 produce, 1 fetch",
		"  ReplicaFetcherThread-0-102  102     1      40    0  12ms ago",
		"   orders-1   Fetching   at     75 hwm     75 lag     0 2.0 KiB/s THROTTLED",
		"broker 102: 1 thread, 2 partitions · purgatory: 3 produce, 0 fetch · failed: orders-7",
		"  ReplicaFetcherThread-0-101  101     2      55    2  1.5s ago",
		"   orders-0   Truncating at     90 hwm    120 lag    30     0 B/s truncated 1×",
		"   orders-2   Delayed    at     10 hwm      - lag     5     0 B/s NOT_LEADER_OR_FOLLOWER",
		"broker 103: killed, no fetchers",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fetchers panel lacks %q:\n%s", want, out)
		}
	}
}

// Shorter, the partitions' lines go first, each thread saying the most
// its partitions lag; shorter still, one line per broker; then as many
// brokers as fit and how many more there are.
func TestFetchersPanelDegradesThreadsThenBrokers(t *testing.T) {
	v := fetchersView(1_000_000)
	threads := fetchersText(&v, 100, 7)
	if strings.Contains(threads, "orders-0   Truncating") || !strings.Contains(threads, "ReplicaFetcherThread-0-101  101     2      55    2  1.5s ago  max lag 30, 2 not fetching") {
		t.Errorf("a 7-line panel does not show the threads with their partitions summed up:\n%s", threads)
	}
	brokers := fetchersText(&v, 120, 4)
	if strings.Contains(brokers, "ReplicaFetcherThread") || !strings.Contains(brokers, "broker 102: 1 thread from 101, 2 partitions, answers ≤1.5s ago  max lag 30, 2 not fetching · failed: orders-7") {
		t.Errorf("a 4-line panel does not show a line per broker:\n%s", brokers)
	}
	cut := fetchersText(&v, 100, 3)
	if got := len(strings.Split(cut, "\n")); got != 3 || !strings.Contains(cut, "… 2 more brokers") {
		t.Errorf("a 3-line panel does not say what it hides (%d lines):\n%s", got, cut)
	}
}

// With no thread to show the panel says why, and still lists why each
// broker has none.
func TestFetchersPanelSaysWhyItHasNoThreads(t *testing.T) {
	v := replicationView(1_000_000)
	v.Topics = nil
	out := fetchersText(&v, 100, 10)
	for _, want := range []string{
		"no fetcher threads: no broker follows a partition (no topics yet — press T to create one)",
		"broker 101: no fetcher threads (it follows no partition)",
		"broker 103: killed, no fetchers",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fetchers panel lacks %q:\n%s", want, out)
		}
	}
	v.Nodes = v.Nodes[:3]
	if out := fetchersText(&v, 80, 10); !strings.Contains(out, "no brokers in this playground") {
		t.Errorf("fetchers panel without brokers does not say so:\n%s", out)
	}
}

// With num.replica.fetchers at 2 a broker runs two threads per source
// broker, each with its share of the partitions: the panel shows both,
// each with its own partitions under it.
func TestFetchersPanelShowsEveryThreadOfOneSource(t *testing.T) {
	v := replicationView(1_000_000)
	part := func(p int32) view.FetcherPartition {
		return view.FetcherPartition{Topic: "orders", Partition: p, State: view.FetchStateFetching, FetchOffset: 10, HighWatermark: 10}
	}
	v.Nodes[3].Broker.Fetchers = []view.FetcherThread{
		{Name: "ReplicaFetcherThread-0-102", FetcherID: 0, SourceBroker: 102, LastResponseTimestamp: 999_990, Partitions: []view.FetcherPartition{part(0), part(3)}},
		{Name: "ReplicaFetcherThread-1-102", FetcherID: 1, SourceBroker: 102, LastResponseTimestamp: 999_990, Partitions: []view.FetcherPartition{part(1)}},
	}
	out := fetchersText(&v, 100, 20)
	want := []string{
		"broker 101: 2 threads, 3 partitions",
		"  ReplicaFetcherThread-0-102  102     2",
		"   orders-0 ", "   orders-3 ",
		"  ReplicaFetcherThread-1-102  102     1",
		"   orders-1 ",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if i < 0 {
			t.Fatalf("fetchers panel lacks %q after offset %d, in this order:\n%s", w, at, out)
		}
		at += i + len(w)
	}
}
