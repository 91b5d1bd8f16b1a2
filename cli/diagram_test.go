package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// sampleTrace is a short run between controller 1 and 2 and broker 101:
// a Fetch round trip, a Vote still held, a Fetch dropped while held, a
// heartbeat lost, and a Vote round trip whose request overtook the held
// one.
func sampleTrace() view.Trace {
	at := time.Date(2026, 12, 3, 13, 39, 13, 0, time.UTC).UnixMicro()
	return view.Trace{
		Nodes:    []view.TraceNode{{ID: 1, Kind: view.KindController}, {ID: 2, Kind: view.KindController}, {ID: 101, Kind: view.KindBroker}},
		Recorded: 9000, Capacity: 4096, NowUs: at + 9000,
		Messages: []view.TraceMessage{
			{Seq: 1, From: 2, To: 1, Conn: 1, CorrelationID: 7, Direction: view.MessageRequest, API: "Fetch", SentUs: at, DeliveredUs: at + 100, SentOrder: 1, EndOrder: 2, State: view.TraceDelivered, Label: "41",
				Fields: []view.MessageField{{Name: "fetch offset", Value: "41"}}},
			{Seq: 2, From: 1, To: 2, Conn: 1, CorrelationID: 7, Direction: view.MessageResponse, API: "Fetch", SentUs: at + 500, DeliveredUs: at + 600, SentOrder: 3, EndOrder: 4, State: view.TraceDelivered, Label: "HWM 41 +1"},
			{Seq: 3, From: 1, To: 2, Conn: 2, CorrelationID: 1, Direction: view.MessageRequest, API: "Vote", SentUs: at + 1000, SentOrder: 5, State: view.TraceInFlight, HeldID: 12, Label: "epoch 5"},
			{Seq: 4, From: 101, To: 1, Conn: 3, CorrelationID: 9, Direction: view.MessageRequest, API: "Fetch", SentUs: at + 1000, SentOrder: 6, EndOrder: 8, State: view.TraceDropped, HeldID: 13, Label: "<&>"},
			{Seq: 5, From: 101, To: 1, Conn: 4, CorrelationID: 2, Direction: view.MessageRequest, API: "BrokerHeartbeat", SentUs: at + 2000, SentOrder: 7, State: view.TraceLost},
			{Seq: 6, From: 1, To: 101, Conn: 5, CorrelationID: 3, Direction: view.MessageRequest, API: "Vote", SentUs: at + 3000, DeliveredUs: at + 3000, SentOrder: 9, EndOrder: 10, State: view.TraceDelivered},
			{Seq: 7, From: 101, To: 1, Conn: 5, CorrelationID: 3, Direction: view.MessageResponse, API: "Vote", SentUs: at + 4000, DeliveredUs: at + 5000, SentOrder: 11, EndOrder: 12, State: view.TraceDelivered, Label: "✓"},
		},
	}
}

// svgElem is an element of the diagram, with its attributes.
type svgElem struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG decodes the whole document, failing the test if it is not
// well-formed XML, and returns its elements in order.
func parseSVG(t *testing.T, b []byte) []svgElem {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var out []svgElem
	var open []int
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v\n%s", err, b)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(tok)
			}
		}
	}
	if len(out) == 0 || out[0].name != "svg" {
		t.Fatalf("no svg element: %s", b)
	}
	return out
}

// The picture: well-formed, a column per node, one arrow per message,
// the held one dashed and ending half way, the dropped and lost ones
// crossed, and the labels escaped.
func TestDiagramSVG(t *testing.T) {
	tr := sampleTrace()
	var b bytes.Buffer
	if err := writeSVG(&b, tr); err != nil {
		t.Fatal(err)
	}
	elems := parseSVG(t, b.Bytes())
	var arrows, crosses []svgElem
	var texts []string
	lifelines := 0
	for _, e := range elems {
		switch {
		case e.name == "line" && e.attrs["class"] == "arrow":
			arrows = append(arrows, e)
		case e.name == "path" && e.attrs["class"] == "cross":
			crosses = append(crosses, e)
		case e.name == "line" && e.attrs["class"] == "lifeline":
			lifelines++
		case e.name == "text":
			texts = append(texts, e.text)
		}
	}
	if len(arrows) != len(tr.Messages) || lifelines != 3 || len(crosses) != 2 {
		t.Fatalf("%d arrows for %d messages, %d lifelines, %d crosses", len(arrows), len(tr.Messages), lifelines, len(crosses))
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"1", "2", "101", "controller", "broker", "Fetch 41", "Fetch HWM 41 +1", "Vote epoch 5 · in flight, held #12", "Fetch <&> · dropped", "BrokerHeartbeat · lost", "Vote ✓", "13:39:13.000", "the last 4096 of the 9000"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in the picture:\n%s", want, all)
		}
	}
	f := func(e svgElem, a string) float64 {
		v, err := strconv.ParseFloat(e.attrs[a], 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", a, e.attrs[a], err)
		}
		return v
	}
	col := map[int32]float64{}
	for i, n := range tr.Nodes {
		col[n.ID] = svgGutter + svgColumn*(float64(i)+0.5)
	}
	for i, m := range tr.Messages {
		a := arrows[i]
		dashed := a.attrs["stroke-dasharray"] != ""
		if dashed != (m.State == view.TraceInFlight) {
			t.Errorf("message %d (%s) dashed %v", m.Seq, m.State, dashed)
		}
		if f(a, "x1") != col[m.From] || f(a, "y2") < f(a, "y1") {
			t.Errorf("message %d from %d: arrow %v", m.Seq, m.From, a.attrs)
		}
		delivered := m.State == view.TraceDelivered
		if reaches := f(a, "x2") == col[m.To]; reaches != delivered {
			t.Errorf("message %d %s: reaches its receiver %v", m.Seq, m.State, reaches)
		}
		if (a.attrs["marker-end"] != "") != (delivered || m.State == view.TraceInFlight) {
			t.Errorf("message %d %s: arrowhead %q", m.Seq, m.State, a.attrs["marker-end"])
		}
	}
	// Time flows down: a response is drawn below its request, and the
	// held Vote ends below every delivery.
	if f(arrows[1], "y1") <= f(arrows[0], "y2") || f(arrows[2], "y2") <= f(arrows[6], "y2") {
		t.Errorf("rows out of order: %v %v %v", arrows[0].attrs, arrows[1].attrs, arrows[2].attrs)
	}

	// An empty window is still a picture, saying so.
	b.Reset()
	if err := writeSVG(&b, view.Trace{Nodes: tr.Nodes}); err != nil {
		t.Fatal(err)
	}
	if parseSVG(t, b.Bytes()); !strings.Contains(b.String(), "no message crossed the links") {
		t.Errorf("empty picture: %s", b.String())
	}
}

// shivizEvent is one event of a ShiViz log, parsed by the regular
// expression the help gives.
type shivizEvent struct {
	text, host string
	clock      map[string]int
}

func parseShiViz(t *testing.T, log string) []shivizEvent {
	t.Helper()
	re := regexp.MustCompile(shivizRegex)
	var out []shivizEvent
	rest := log
	for rest != "" {
		loc := re.FindStringSubmatchIndex(rest)
		if loc == nil || loc[0] != 0 {
			t.Fatalf("ShiViz's regex does not parse %q", rest)
		}
		m := re.FindStringSubmatch(rest)
		ev := shivizEvent{text: m[re.SubexpIndex("event")], host: m[re.SubexpIndex("host")]}
		if err := json.Unmarshal([]byte(m[re.SubexpIndex("clock")]), &ev.clock); err != nil {
			t.Fatalf("clock of %q: %v", m[0], err)
		}
		out = append(out, ev)
		rest = strings.TrimPrefix(rest[loc[1]:], "\n")
	}
	return out
}

// before reports whether a happened before b: a's clock is at most b's
// everywhere, and they differ.
func before(a, b map[string]int) bool {
	for h, n := range a {
		if b[h] < n {
			return false
		}
	}
	return len(a) != len(b) || !equalClocks(a, b)
}

func equalClocks(a, b map[string]int) bool {
	for h, n := range a {
		if b[h] != n {
			return false
		}
	}
	return true
}

// The ShiViz log: every line pair parses with the regex of the help; a
// host's own entry counts its events; a delivered message has a send and
// a receive, one not delivered a send only; a message's send happened
// before its receive, a request's send before its response's receive,
// and its receive before the response's send.
func TestDiagramShiViz(t *testing.T) {
	tr := sampleTrace()
	var b bytes.Buffer
	if err := writeShiViz(&b, tr); err != nil {
		t.Fatal(err)
	}
	evs := parseShiViz(t, b.String())
	if len(evs) != 7+4 { // 7 sends, 4 deliveries
		t.Fatalf("%d events:\n%s", len(evs), b.String())
	}
	count := map[string]int{}
	for _, ev := range evs {
		count[ev.host]++
		if ev.clock[ev.host] != count[ev.host] {
			t.Fatalf("event %d of %s has its own entry %d: %+v", count[ev.host], ev.host, ev.clock[ev.host], ev)
		}
	}
	if count["controller-1"] == 0 || count["controller-2"] == 0 || count["broker-101"] == 0 {
		t.Fatalf("hosts: %v", count)
	}
	find := func(prefix string, m view.TraceMessage) shivizEvent {
		t.Helper()
		for _, ev := range evs {
			if ev.text == prefix+" "+describeTraced(m) {
				return ev
			}
		}
		t.Fatalf("no %s event of %+v in:\n%s", prefix, m, b.String())
		return shivizEvent{}
	}
	for _, m := range tr.Messages {
		if m.State == view.TraceDelivered && !before(find("send", m).clock, find("receive", m).clock) {
			t.Errorf("%s received before it was sent:\n%s", describeTraced(m), b.String())
		}
	}
	for _, pair := range [][2]int{{0, 1}, {5, 6}} {
		req, resp := tr.Messages[pair[0]], tr.Messages[pair[1]]
		if !before(find("send", req).clock, find("receive", resp).clock) || !before(find("receive", req).clock, find("send", resp).clock) {
			t.Errorf("%s and its response out of happens-before:\n%s", describeTraced(req), b.String())
		}
		if before(find("receive", resp).clock, find("send", req).clock) {
			t.Errorf("a response received before its request was sent:\n%s", b.String())
		}
	}
	for _, i := range []int{2, 3, 4} {
		find("send", tr.Messages[i])
		for _, ev := range evs {
			if ev.text == "receive "+describeTraced(tr.Messages[i]) {
				t.Errorf("a %s message received: %+v", tr.Messages[i].State, ev)
			}
		}
	}
}

// events --diagram takes svg or shiviz, a window only with a diagram,
// and none of the event list's flags; it draws what the playground's
// trace holds.
func TestEventsDiagramCommand(t *testing.T) {
	h := newHarness(t)
	tr := sampleTrace()
	h.serve("default", clustertest.Options{Trace: tr.Messages})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"events", "--diagram", "png"}, `--diagram "png": want svg (a picture) or shiviz (a log for ShiViz)`},
		{[]string{"events", "--last", "5"}, "--last draws a window of the messages with --diagram svg"},
		{[]string{"events", "--since", "5s"}, "--since draws a window"},
		{[]string{"events", "--diagram", "svg", "--follow"}, "takes no --follow"},
		{[]string{"events", "--diagram", "svg", "--json"}, "takes no --json"},
		{[]string{"events", "--diagram", "svg", "--last", "-1"}, "--last -1: want a number of messages"},
		{[]string{"events", "--diagram", "shiviz", "--since", "-2s"}, "--since -2s: want a positive duration"},
	} {
		code, out, errOut := h.run(c.args...)
		expectRun(t, strings.Join(c.args, " "), code, out, errOut, ExitUsage, c.want)
	}
	code, out, errOut := h.run("events", "--diagram", "svg", "--last", "3")
	expectRun(t, "events --diagram svg --last 3", code, out, errOut, ExitOK, "<svg", "Vote ✓")
	arrows := 0
	for _, e := range parseSVG(t, []byte(out)) {
		if e.attrs["class"] == "arrow" {
			arrows++
		}
	}
	if arrows != 3 {
		t.Errorf("--last 3 drew %d arrows:\n%s", arrows, out)
	}
	code, out, errOut = h.run("events", "--diagram", "shiviz")
	expectRun(t, "events --diagram shiviz", code, out, errOut, ExitOK, "send Fetch request 2→1: 41")
	if evs := parseShiViz(t, out); len(evs) != 11 {
		t.Errorf("shiviz of the whole trace: %d events", len(evs))
	}
	code, out, errOut = h.run("events", "--help")
	expectRun(t, "events --help", code, out, errOut, ExitOK, shivizRegex, "--diagram svg > run.svg")
	code, out, errOut = h.run("__complete", "events", "--diagram", "")
	expectRun(t, "complete --diagram", code, out, errOut, ExitOK, "svg\nshiviz\n")
}
