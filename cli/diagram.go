package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// diagramKind is a format events --diagram writes.
type diagramKind string

// The diagram formats.
const (
	diagramSVG    diagramKind = "svg"
	diagramShiViz diagramKind = "shiviz"
)

func parseDiagram(s string) (diagramKind, error) {
	switch k := diagramKind(s); k {
	case diagramSVG, diagramShiViz:
		return k, nil
	}
	return "", usagef("--diagram %q: want svg (a picture) or shiviz (a log for ShiViz)", s)
}

// shivizRegex is the parser ShiViz asks for with a log: each event is a
// line, then the host and its vector clock.
const shivizRegex = `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`

const diagramHelp = `--diagram draws the messages between nodes instead: every request and
response that crossed the links (the trace keeps the last 4096), each from
its sender when it was sent to its receiver when it was delivered. svg writes
a space-time diagram, one column per node and time flowing down, for slides
(kraftlab events --diagram svg > run.svg); a message the links hold is drawn
dashed, ending half way, and a dropped or lost one ends in a cross. shiviz
writes a log for ShiViz (https://bestchai.bitbucket.io/shiviz/): paste it,
and give ShiViz this parser regular expression:

  ` + shivizRegex + `

--last N and --since DURATION (of cluster time) draw a window of the trace.
Rows follow the order things happened in, not the clock: while the cluster
clock is paused, every message stepped happens at the same cluster time.`

// diagramEnd is one end of a traced message: its send, or its delivery
// or drop.
type diagramEnd struct {
	order uint64
	m     int // index of the message
	send  bool
}

// diagramEnds are the ends of the messages of t, in the order they
// happened.
func diagramEnds(msgs []view.TraceMessage) []diagramEnd {
	var ends []diagramEnd
	for i, m := range msgs {
		ends = append(ends, diagramEnd{m.SentOrder, i, true})
		if m.EndOrder != 0 {
			ends = append(ends, diagramEnd{m.EndOrder, i, false})
		}
	}
	slices.SortFunc(ends, func(a, b diagramEnd) int { return cmp.Compare(a.order, b.order) })
	return ends
}

// diagramNodes are the diagram's columns: the playground's nodes, and
// any other a message names.
func diagramNodes(t view.Trace) []view.TraceNode {
	nodes := slices.Clone(t.Nodes)
	known := map[int32]bool{}
	for _, n := range nodes {
		known[n.ID] = true
	}
	var extra []view.TraceNode
	for _, m := range t.Messages {
		for _, id := range []int32{m.From, m.To} {
			if !known[id] {
				known[id] = true
				extra = append(extra, view.TraceNode{ID: id})
			}
		}
	}
	slices.SortFunc(extra, func(a, b view.TraceNode) int { return cmp.Compare(a.ID, b.ID) })
	return append(nodes, extra...)
}

// hostName is a node as ShiViz names its hosts.
func hostName(n view.TraceNode) string {
	if n.Kind == "" {
		return "node-" + strconv.Itoa(int(n.ID))
	}
	return string(n.Kind) + "-" + strconv.Itoa(int(n.ID))
}

// fate says what became of a message that was not delivered, "" if it
// was.
func fate(m view.TraceMessage) string {
	switch m.State {
	case view.TraceDelivered:
		return ""
	case view.TraceInFlight:
		if m.HeldID != 0 {
			return fmt.Sprintf("in flight, held #%d", m.HeldID)
		}
		return "in flight"
	}
	return string(m.State)
}

// describeTraced is a message in a line: "Fetch request 2→1: 41 (corr
// 55, 120 B)".
func describeTraced(m view.TraceMessage) string {
	s := fmt.Sprintf("%s %s %d→%d", m.API, m.Direction, m.From, m.To)
	if m.Label != "" {
		s += ": " + m.Label
	}
	s += fmt.Sprintf(" (corr %d, %d B", m.CorrelationID, m.Bytes)
	if f := fate(m); f != "" {
		s += ", " + f
	}
	return s + ")"
}

// clockTime is a cluster time in Unix microseconds as the events list
// writes times.
func clockTime(us int64) string { return time.UnixMicro(us).Format("15:04:05.000") }

// writeShiViz writes t as a ShiViz log: each send and each delivery an
// event of its node, with the node's vector clock. A send ticks its
// sender's clock; a delivery merges the clock the message left with and
// ticks its receiver's. A message not delivered has its send only.
func writeShiViz(w io.Writer, t view.Trace) error {
	hosts := map[int32]string{}
	for _, n := range diagramNodes(t) {
		hosts[n.ID] = hostName(n)
	}
	clocks := map[int32]map[string]int{}
	sent := make([]map[string]int, len(t.Messages))
	bw := bufio.NewWriter(w)
	for _, e := range diagramEnds(t.Messages) {
		m := t.Messages[e.m]
		if !e.send && m.State != view.TraceDelivered {
			continue // dropped or cut: nobody received it
		}
		node, text := m.From, "send "+describeTraced(m)
		if !e.send {
			node, text = m.To, "receive "+describeTraced(m)
		}
		c := clocks[node]
		if c == nil {
			c = map[string]int{}
			clocks[node] = c
		}
		if e.send {
			c[hosts[node]]++
			sent[e.m] = maps.Clone(c)
		} else {
			for h, n := range sent[e.m] {
				c[h] = max(c[h], n)
			}
			c[hosts[node]]++
		}
		vc, err := json.Marshal(c) // keys sorted
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "%s\n%s %s\n", text, hosts[node], vc)
	}
	return bw.Flush()
}

// diagramFlags are events' --diagram and its window.
type diagramFlags struct {
	format string
	kind   diagramKind
	last   int
	since  time.Duration
}

func (d *diagramFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.format, "diagram", "", "draw the messages between nodes instead: svg (a picture) or shiviz (a log for ShiViz)")
	cmd.Flags().IntVar(&d.last, "last", 0, "with --diagram: only the last N messages")
	cmd.Flags().DurationVar(&d.since, "since", 0, "with --diagram: only the messages sent in the last DURATION of cluster time")
	cmd.RegisterFlagCompletionFunc("diagram", cobra.FixedCompletions([]string{string(diagramSVG), string(diagramShiViz)}, cobra.ShellCompDirectiveNoFileComp))
}

// check validates the flags: a known format, a window only with one,
// none of the event list's flags with one.
func (d *diagramFlags) check(cmd *cobra.Command, scenario bool) error {
	fl := cmd.Flags()
	if !fl.Changed("diagram") {
		for _, name := range []string{"last", "since"} {
			if fl.Changed(name) {
				return usagef("--%s draws a window of the messages with --diagram svg or --diagram shiviz; events lists every event", name)
			}
		}
		return nil
	}
	k, err := parseDiagram(d.format)
	if err != nil {
		return err
	}
	for _, name := range []string{"follow", "after", "json"} {
		if fl.Changed(name) {
			return usagef("--diagram draws the messages between nodes and takes no --%s (that is for the list of events)", name)
		}
	}
	switch {
	case d.last < 0:
		return usagef("--last %d: want a number of messages, 1 or more", d.last)
	case d.since < 0:
		return usagef("--since %v: want a positive duration of cluster time, such as 5s", d.since)
	case scenario:
		return usagef("events --diagram writes a picture, so it cannot be a scenario line; run it from a shell")
	}
	d.kind = k
	return nil
}

// write fetches the trace's window and writes the diagram to w.
func (d *diagramFlags) write(ctx context.Context, c *control.Client, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	t, err := c.Trace(ctx, cluster.TraceQuery{Last: d.last, Since: d.since})
	if err != nil {
		return apiError(c, err)
	}
	if d.kind == diagramShiViz {
		return writeShiViz(w, t)
	}
	return writeSVG(w, t)
}
