package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// diagramTrace is a short run between controllers 1 and 2 and broker
// 101: a Fetch round trip, a Vote the links hold, a Fetch dropped and a
// heartbeat lost.
func diagramTrace() []view.TraceMessage {
	return []view.TraceMessage{
		{Seq: 1, From: 2, To: 1, Direction: view.MessageRequest, API: "Fetch", State: view.TraceDelivered, Label: "41"},
		{Seq: 2, From: 1, To: 2, Direction: view.MessageResponse, API: "Fetch", State: view.TraceDelivered, Label: "HWM 41"},
		{Seq: 3, From: 1, To: 101, Direction: view.MessageRequest, API: "Vote", State: view.TraceInFlight, HeldID: 12, Label: "epoch 5"},
		{Seq: 4, From: 101, To: 1, Direction: view.MessageRequest, API: "Fetch", State: view.TraceDropped, HeldID: 13, Label: "7"},
		{Seq: 5, From: 101, To: 2, Direction: view.MessageRequest, API: "BrokerHeartbeat", State: view.TraceLost},
		{Seq: 6, From: 2, To: 1, Direction: view.MessageResponse, API: "Vote", State: view.TraceDelivered, Label: "✓"},
	}
}

// The diagram: a column per node, a row per message oldest first, each
// an arrow from its sender to its receiver; a held one dotted and
// stopping half way, a dropped or lost one crossed; the oldest rows go
// first when the panel is short.
func TestDiagramPane(t *testing.T) {
	st := DefaultStyles()
	v := &view.View{
		Nodes: []view.Node{{ID: 1, Kind: view.KindController}, {ID: 2, Kind: view.KindController}, {ID: 101, Kind: view.KindBroker}},
		Trace: diagramTrace(),
	}
	got := diagramView(st, v, 60, 20)
	// Columns of 8 cells: the lifelines at 4, 12 and 20.
	want := []string{
		"    1       2      101",
		"    │◀──────┤       │ Fetch 41",
		"    ├──────▶│       │ Fetch HWM 41",
		"    ├┄┄┄┄┄┄▷│       │ Vote epoch 5 held #12",
		"    │       │✕──────┤ Fetch 7 dropped",
		"    │       │     ✕─┤ BrokerHeartbeat lost",
		"    │◀──────┤       │ Vote ✓",
	}
	if len(got) != 1+len(want) || !strings.HasPrefix(got[0], "Messages, oldest first") {
		t.Fatalf("diagram:\n%s", strings.Join(got, "\n"))
	}
	for i, w := range want {
		if g := strings.TrimRight(got[i+1], " "); g != w {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
	// Three lines: the title, the nodes and the newest message.
	if short := diagramView(st, v, 60, 3); len(short) != 3 || !strings.Contains(short[2], "Vote ✓") {
		t.Errorf("short diagram:\n%s", strings.Join(short, "\n"))
	}
	// Narrow, the columns shrink to 4 cells and every line fits.
	for _, l := range diagramView(st, v, 30, 20) {
		if cellWidth(l) > 30 {
			t.Errorf("line wider than 30: %q", l)
		}
	}
	if empty := diagramView(st, &view.View{Nodes: v.Nodes}, 60, 10); len(empty) != 2 || !strings.Contains(empty[1], "no message") {
		t.Errorf("empty diagram: %q", empty)
	}
}

// m shows the Messages pane in the brokers' place, and again the pane it
// took the place of; b reaches it after the fetchers; on a small screen m
// brings the pane to the front.
func TestDiagramKey(t *testing.T) {
	m := New(context.Background(), nil, Options{})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	v := view.View{
		LeaderID: 1, Nodes: []view.Node{{ID: 1, Kind: view.KindController, State: view.StateRunning}, {ID: 2, Kind: view.KindController, State: view.StateRunning}, {ID: 101, Kind: view.KindBroker, State: view.StateRunning}},
		Trace: diagramTrace(), Clock: view.Clock{Slow: 1},
	}
	m.pollSeq++
	m.Update(snapshotMsg{seq: m.pollSeq, view: v})
	key := func(r rune) string {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		return m.View()
	}
	const diagram = "Messages, oldest first"
	if s := m.View(); strings.Contains(s, diagram) {
		t.Fatalf("the diagram shows before m:\n%s", s)
	}
	key('b') // partitions
	if s := key('m'); m.pane != paneMessages || !strings.Contains(s, diagram) || !strings.Contains(s, "Vote epoch 5 held #12") {
		t.Fatalf("after m, pane %v:\n%s", m.pane, s)
	}
	if s := key('m'); m.pane != panePartitions || strings.Contains(s, diagram) {
		t.Fatalf("m again goes back to the partitions, pane %v:\n%s", m.pane, s)
	}
	key('b') // fetchers
	key('b') // groups
	if s := key('b'); m.pane != paneMessages || !strings.Contains(s, diagram) {
		t.Fatalf("b after the groups, pane %v:\n%s", m.pane, s)
	}
	if key('b'); m.pane != paneBrokers {
		t.Fatalf("b after the messages: pane %v", m.pane)
	}

	// On a small screen, m brings the pane forward.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 16})
	if !m.tabbed() {
		t.Fatal("80x16 is not tabbed")
	}
	m.tab = 0
	if s := key('m'); m.tab != dataTab || m.pane != paneMessages || !strings.Contains(s, diagram) {
		t.Fatalf("m on a tabbed screen: tab %d, pane %v\n%s", m.tab, m.pane, s)
	}
}

// TestRecordPaused records a quorum with its cluster clock paused, from
// a real fast-profile cluster: some messages stepped, one dropped, the
// rest held at the links. KRAFTLAB_TUI_RECORD=1 go test -run TestRecordPaused ./tui
func TestRecordPaused(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, "testdata/paused.json", "the real engine, 3 controllers and 3 brokers, profile fast")
	pg := rec.pg
	rec.until("a leader with every voter caught up and the brokers unfenced", 30*time.Second, func(v *view.View) bool {
		return v.LeaderID != view.NoLeader && v.HighWatermark > 0 && v.MaxFollowerLag == 0 && unfencedBrokers(v) == 3
	})
	rec.cut()
	do := func(a cluster.Action) {
		if _, err := pg.Do(ctx, a); err != nil {
			t.Fatalf("%v: %v", a, err)
		}
	}
	do(cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	defer pg.Do(ctx, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})
	// The parked Fetches answer as time moves by hand; their responses
	// wait at the links.
	rec.until("messages held", 30*time.Second, func(v *view.View) bool {
		if v.HeldMessages >= 4 {
			return true
		}
		do(cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 100})
		return false
	})
	do(cluster.Action{Kind: cluster.ActStep})
	do(cluster.Action{Kind: cluster.ActStep})
	do(cluster.Action{Kind: cluster.ActDrop})
	rec.frames(time.Second)
	paused := rec.cut()
	paused.Select = rec.last.LeaderID
	rec.save("paused", paused)
}

// TestGoldenDiagram replays a quorum whose cluster clock is paused, with
// the Messages pane in the brokers' place: the last messages, the held
// ones dotted and stopping half way, one dropped (go test ./tui -run
// TestGoldenDiagram -update rewrites testdata/TestGoldenDiagram). On a
// small screen the pane's tab is in front.
func TestGoldenDiagram(t *testing.T) {
	r := loadRecording(t, "paused")
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := replay(r, size[0], size[1])
			m.pane = paneMessages
			if m.tabbed() {
				m.tab = dataTab
			}
			golden.RequireEqual(t, []byte(m.View()+"\n"))
		})
	}
}
