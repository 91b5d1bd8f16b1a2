package tui

import (
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// fetchersModel is the replica fetcher threads panel: per broker its
// ReplicaFetcherThreads (Kafka's ReplicaFetcherThread-<fetcherId>-
// <sourceBrokerId>), each with its source broker, requests, errors and
// last answer, and under each the partitions it fetches. Partitions of one
// thread share its fetches, so one that answers slowly shows as its
// thread's last answer ageing for all of them; raising
// num.replica.fetchers shows as more threads with fewer partitions each.
type fetchersModel struct{}

// fetcherLine is one line of the panel, with its depth: a broker, one of
// its threads, or one of a thread's partitions.
type fetcherLine struct {
	depth lineDepth
	text  string
	// short is the line when the lines under it are left out for room: a
	// thread with the most its partitions lag, a broker with its
	// threads in one line.
	short string
}

// lineDepth is how deep a fetchers line sits: broker, thread, partition.
type lineDepth int

const (
	depthBroker lineDepth = iota
	depthThread
	depthPartition
)

// view renders the panel in w cells and at most h lines: every thread
// with its partitions if they fit; else the threads alone, each saying
// the most any of its partitions lags; else a line per broker; else as
// many of those as fit and how many more there are.
func (fetchersModel) view(st *Styles, v *view.View, w, h int) block {
	out := block{paneSection(st, "Fetchers: each broker's replica fetcher threads", paneFetchers, w)}
	if h < 2 {
		return out
	}
	if v.Attached != nil {
		return append(out, st.Dim.Render(clip(notOnTheWire("fetcher threads (JMX only)"), w)))
	}
	lines, threads := fetcherLines(st, v)
	if lines == nil {
		return append(out, st.Dim.Render(clip("no brokers in this playground", w)))
	}
	if threads == 0 {
		why := "no fetcher threads: no broker follows a partition"
		if len(v.Topics) == 0 {
			why += " (no topics yet — press T to create one)"
		}
		out = append(out, st.Dim.Render(clip(why, w)))
		lines = keepDepth(lines, depthBroker, false)
	} else if room := h - len(out) - 1; len(lines) <= room || len(keepDepth(lines, depthThread, true)) <= room {
		out = append(out, st.Label.Render(clip(fmt.Sprintf("  %-26s %4s %5s %7s %4s  %s", "THREAD", "FROM", "PARTS", "REQS", "ERRS", "LAST ANSWER"), w)))
		if len(lines) > room {
			lines = keepDepth(lines, depthThread, true)
		}
	} else {
		lines = keepDepth(lines, depthBroker, true)
	}
	room := h - len(out)
	for i, l := range lines {
		if i == room-1 && len(lines) > room {
			out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more brokers (a taller window shows them)", len(lines)-i), w)))
			break
		}
		if i >= room {
			break
		}
		out = append(out, clip(l.text, w))
	}
	return out
}

// keepDepth keeps the lines down to depth, the deepest kept ones in their
// short form if short.
func keepDepth(lines []fetcherLine, depth lineDepth, short bool) []fetcherLine {
	var out []fetcherLine
	for _, l := range lines {
		if l.depth > depth {
			continue
		}
		if short && l.depth == depth && l.short != "" {
			l.text = l.short
		}
		out = append(out, l)
	}
	return out
}

// fetcherLines lays out every broker with its threads and their
// partitions, and counts the threads; nil when there are no brokers.
func fetcherLines(st *Styles, v *view.View) (lines []fetcherLine, threads int) {
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Kind != view.KindBroker {
			continue
		}
		lines = append(lines, fetcherLine{depth: depthBroker, text: brokerFetchLine(st, n), short: brokerFetchSummary(st, v, n)})
		if n.Broker == nil {
			continue
		}
		for j := range n.Broker.Fetchers {
			t := &n.Broker.Fetchers[j]
			threads++
			line := threadLine(st, v, t)
			lines = append(lines, fetcherLine{depth: depthThread, text: line, short: line + threadSummary(st, t.Partitions)})
			for k := range t.Partitions {
				lines = append(lines, fetcherLine{depth: depthPartition, text: fetchPartitionLine(st, &t.Partitions[k])})
			}
		}
	}
	return lines, threads
}

// brokerFetchSummary is a broker's threads in one line: where they fetch
// from, how many partitions, the most any lags and the oldest last
// answer.
func brokerFetchSummary(st *Styles, v *view.View, n *view.Node) string {
	b := n.Broker
	if n.State != view.StateRunning || b == nil || len(b.Fetchers) == 0 {
		return ""
	}
	var from []string
	var parts []view.FetcherPartition
	oldest := v.Timestamp
	for _, t := range b.Fetchers {
		from = append(from, fmt.Sprint(t.SourceBroker))
		parts = append(parts, t.Partitions...)
		oldest = min(oldest, t.LastResponseTimestamp)
	}
	last := "≤" + since(oldest, v.Timestamp) + " ago"
	if oldest < 0 {
		last = "not all yet" // a thread that has had no answer
	}
	s := fmt.Sprintf("%s: %d %s from %s, %d %s, answers %s", st.Value.Render(fmt.Sprintf("broker %d", n.ID)),
		len(b.Fetchers), plural(int64(len(b.Fetchers)), "thread", "threads"), strings.Join(from, ","),
		len(parts), plural(int64(len(parts)), "partition", "partitions"), last)
	s += threadSummary(st, parts)
	if len(b.FailedPartitions) > 0 {
		s += st.Err.Render(" · failed: " + strings.Join(b.FailedPartitions, ","))
	}
	return s
}

// brokerFetchLine heads a broker's threads: how many it runs, the
// requests waiting in its purgatories, and the partitions its fetchers
// gave up on.
func brokerFetchLine(st *Styles, n *view.Node) string {
	head := st.Value.Render(fmt.Sprintf("broker %d", n.ID))
	b := n.Broker
	if n.State != view.StateRunning || b == nil {
		return head + ": " + st.State(n.State).Render(string(n.State)) + st.Dim.Render(", no fetchers")
	}
	var s strings.Builder
	s.WriteString(head)
	if len(b.Fetchers) == 0 {
		s.WriteString(st.Dim.Render(": no fetcher threads (it follows no partition)"))
	} else {
		parts := 0
		for _, t := range b.Fetchers {
			parts += len(t.Partitions)
		}
		fmt.Fprintf(&s, ": %d %s, %d %s", len(b.Fetchers), plural(int64(len(b.Fetchers)), "thread", "threads"), parts, plural(int64(parts), "partition", "partitions"))
	}
	s.WriteString(st.Dim.Render(fmt.Sprintf(" · purgatory: %d produce, %d fetch", b.DelayedProduces, b.DelayedFetches)))
	if len(b.FailedPartitions) > 0 {
		s.WriteString(st.Err.Render(" · failed: " + strings.Join(b.FailedPartitions, ",")))
	}
	return s.String()
}

// threadLine is one fetcher thread.
func threadLine(st *Styles, v *view.View, t *view.FetcherThread) string {
	errs := fmt.Sprintf("%4d", t.Errors)
	if t.Errors > 0 {
		errs = st.Err.Render(errs)
	}
	last := since(t.LastResponseTimestamp, v.Timestamp)
	if t.LastResponseTimestamp >= 0 {
		last += " ago"
	}
	return fmt.Sprintf("  %-26s %4d %5d %7d %s  %s", t.Name, t.SourceBroker, len(t.Partitions), t.Requests, errs, last)
}

// threadSummary says, for partitions whose lines are left out, the most
// any of them lags and how many are not fetching.
func threadSummary(st *Styles, parts []view.FetcherPartition) string {
	most := int64(-1)
	held := 0
	for _, p := range parts {
		most = max(most, p.Lag)
		if p.Delayed || p.State != view.FetchStateFetching {
			held++
		}
	}
	lag := offset(most)
	if most > 0 {
		lag = st.Warn.Render(lag)
	}
	s := st.Dim.Render("  max lag ") + lag
	if held > 0 {
		s += st.Warn.Render(fmt.Sprintf(", %d not fetching", held))
	}
	return s
}

// fetchPartitionLine is one partition of a thread: its phase, the offset
// its next fetch asks for, the leader's high watermark its last answer
// carried and how far the fetch offset lags it (Kafka's ConsumerLag of the
// replica), and the rate it appends at. The high watermark is on the line
// because under acks=all a slow follower holds it back: its lag to the
// high watermark stays small while it is far behind the leader's log end,
// which the partitions pane shows.
func fetchPartitionLine(st *Styles, p *view.FetcherPartition) string {
	state := st.FetchState(p.State).Render(fit(string(p.State), 10))
	if p.Delayed {
		state = st.Err.Render(fit("Delayed", 10)) // left out of fetches for replica.fetch.backoff.ms
	}
	lag := offset(p.Lag)
	if p.Lag > 0 {
		lag = st.Warn.Render(lag)
	}
	var extra strings.Builder
	if p.Throttled {
		// follower.replication.throttled.replicas names it: a replica a
		// throttled reassignment is adding, say.
		extra.WriteString(st.Warn.Render(" THROTTLED"))
	}
	if p.Truncations > 0 {
		extra.WriteString(st.Warn.Render(fmt.Sprintf(" truncated %d×", p.Truncations)))
	}
	if p.LastError != "" {
		extra.WriteString(st.Err.Render(" " + p.LastError))
	}
	return fmt.Sprintf("   %-10s %s at %6s hwm %6s lag %s %9s%s", fmt.Sprintf("%s-%d", p.Topic, p.Partition), state, offset(p.FetchOffset), offset(p.HighWatermark), fitLeft(lag, 5), byteRate(p.BytesPerSec), extra.String())
}
