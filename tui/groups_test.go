package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// groupsView is a playground of three brokers whose broker coordinator
// serves group billing from __consumer_offsets-1: a member reading
// orders, one partition behind by 5.
func groupsView(coordinator int32, ts int64) view.View {
	v := view.View{Timestamp: ts, LeaderID: 1}
	v.Nodes = append(v.Nodes, view.Node{ID: 1, Kind: view.KindController, State: view.StateRunning})
	for _, id := range []int32{101, 102, 103} {
		v.Nodes = append(v.Nodes, view.Node{ID: id, Kind: view.KindBroker, State: view.StateRunning, Broker: &view.Broker{Registered: true}})
	}
	offsets := view.Topic{Name: view.OffsetsTopic}
	for p := range int32(3) {
		offsets.Partitions = append(offsets.Partitions, view.Partition{Partition: p, Leader: 101 + p})
	}
	offsets.Partitions[1].Leader = coordinator
	orders := view.Topic{Name: "orders", Partitions: []view.Partition{{Partition: 0, Leader: 101, HighWatermark: 20}, {Partition: 1, Leader: 102, HighWatermark: 25}}}
	v.Topics = []view.Topic{offsets, orders}
	for i := range v.Nodes {
		n := &v.Nodes[i]
		for _, p := range offsets.Partitions {
			if n.Broker != nil && p.Leader == n.ID {
				n.Broker.Coordinating = append(n.Broker.Coordinating, view.CoordinatorShard{Partition: p.Partition, Groups: btoi(p.Partition == 1)})
			}
		}
	}
	v.Groups = []view.Group{{
		ID: "billing", Coordinator: coordinator, OffsetsPartition: 1, State: view.GroupStable, ProtocolType: "consumer", Protocol: "range",
		Generation: 3, Leader: "billing-1-abc",
		Members: []view.GroupMember{{MemberID: "billing-1-abc", ClientID: "billing-1", ClientHost: "/127.0.0.1",
			Assigned: []view.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}}},
		Offsets: []view.GroupOffset{
			{Topic: "orders", Partition: 0, Committed: 20, HighWatermark: 20, Lag: 0},
			{Topic: "orders", Partition: 1, Committed: 20, HighWatermark: 25, Lag: 5},
		},
	}}
	return v
}

// groupsScreen is a w×h screen showing the groups pane, fed views.
func groupsScreen(w, h int, views ...view.View) *Model {
	m := New(context.Background(), nil, Options{})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, v := range views {
		m.pollSeq++
		m.Update(snapshotMsg{seq: m.pollSeq, view: v})
	}
	m.pane = paneGroups
	return m
}

// The groups pane shows a group's state, its coordinator with the
// partition of __consumer_offsets that makes it one, its generation and
// assignor, its members with their partitions, and per partition the
// committed offset, the high watermark and the lag.
func TestGroupsPaneShowsCoordinatorMembersOffsetsAndLag(t *testing.T) {
	m := groupsScreen(160, 48, groupsView(102, 1000))
	out := strings.Join(m.groups.view(m.st, &m.view, 78, 20), "\n")
	for _, want := range []string{
		"Groups: coordinator, members, committed offsets, lag (b: messages)",
		"billing Stable · coordinator 102 (__consumer_offsets-1)",
		"  gen 3 range · 1 member · lag 5",
		"  member billing-1 127.0.0.1 leader: orders-0 orders-1",
		"  PARTITION      COMMITTED       HWM       LAG",
		"  orders-0              20        20         0",
		"  orders-1              20        25         5",
		"offsets partitions served: 101: 0 · 102: 1 · 103: 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("groups pane lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "↻") {
		t.Errorf("a coordinator that never moved is marked:\n%s", out)
	}
}

// When the broker coordinating a group dies, the pane keeps the group in
// sight and says why no broker serves it, then that the new leader of
// its __consumer_offsets partition loads it; once the group is back, its
// new coordinator is marked with the one it moved from, for a while.
func TestGroupsPaneFollowsACoordinatorThatMoves(t *testing.T) {
	before := groupsView(102, 1000)
	down := groupsView(102, 2000)
	down.Nodes[2].State = view.StateKilled
	down.Nodes[2].Broker.Coordinating = nil
	down.Groups = nil
	m := groupsScreen(160, 48, before, down)
	pane := func() string { return strings.Join(m.groups.view(m.st, &m.view, 78, 20), "\n") }
	for _, want := range []string{"billing coordinator 102 killed (__consumer_offsets-1)",
		"another replica leads __consumer_offsets-1 once the controller fences 102"} {
		if !strings.Contains(pane(), want) {
			t.Errorf("with its coordinator killed, the pane lacks %q:\n%s", want, pane())
		}
	}

	loading := groupsView(103, 3000)
	loading.Nodes[2].State = view.StateKilled
	loading.Groups = nil
	for i := range loading.Nodes[3].Broker.Coordinating {
		if s := &loading.Nodes[3].Broker.Coordinating[i]; s.Partition == 1 {
			s.Loading = true
		}
	}
	m.pollSeq++
	m.Update(snapshotMsg{seq: m.pollSeq, view: loading})
	for _, want := range []string{"billing coordinator 103 (__consumer_offsets-1) loading", "103: 1 loading,2"} {
		if !strings.Contains(pane(), want) {
			t.Errorf("while 103 loads the partition, the pane lacks %q:\n%s", want, pane())
		}
	}

	moved := groupsView(103, 4000)
	m.pollSeq++
	m.Update(snapshotMsg{seq: m.pollSeq, view: moved})
	if want := "billing Stable · coordinator 103 (__consumer_offsets-1) ↻ was 102"; !strings.Contains(pane(), want) {
		t.Errorf("the moved coordinator is not marked %q:\n%s", want, pane())
	}
	later := groupsView(103, 4000+movedShown+1)
	m.pollSeq++
	m.Update(snapshotMsg{seq: m.pollSeq, view: later})
	if strings.Contains(pane(), "↻") {
		t.Errorf("the mark outlived %dms:\n%s", movedShown, pane())
	}
}

// A group that a loaded coordinator no longer has (it expired, or was
// deleted) leaves the pane; the pane says how to make one.
func TestGroupsPaneForgetsAGroupItsCoordinatorDropped(t *testing.T) {
	gone := groupsView(102, 2000)
	gone.Groups = nil
	m := groupsScreen(160, 48, groupsView(102, 1000), gone)
	out := strings.Join(m.groups.view(m.st, &m.view, 78, 20), "\n")
	if strings.Contains(out, "billing") || !strings.Contains(out, "no consumer groups yet: kraftlab consume --group G TOPIC makes one") {
		t.Errorf("a dropped group stays, or the pane does not say how to make one:\n%s", out)
	}
}

// Short of room, each group keeps its head line with its coordinator and
// lag; the last line counts the groups left out.
func TestGroupsPaneDegradesToAHeadPerGroup(t *testing.T) {
	v := groupsView(102, 1000)
	for _, id := range []string{"audit", "shipping", "zeta"} {
		g := v.Groups[0]
		g.ID = id
		v.Groups = append(v.Groups, g)
	}
	m := groupsScreen(160, 48, v)
	out := m.groups.view(m.st, &m.view, 78, 4)
	want := []string{
		"audit Stable · coordinator 102 (__consumer_offsets-1) · lag 5",
		"billing Stable · coordinator 102 (__consumer_offsets-1) · lag 5",
		"… 2 more groups (a taller window shows them)",
	}
	if len(out) != 4 || strings.Join(out[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("4 groups in 4 lines:\n%s", strings.Join(out, "\n"))
	}
	if got := m.groups.view(m.st, &m.view, 78, 10); len(got) > 10 || !strings.Contains(got[1], "audit") || !strings.Contains(got[2], "gen 3") {
		t.Errorf("4 groups in 10 lines: the first with its summary:\n%s", strings.Join(got, "\n"))
	}
}

// o shows the groups pane and again goes back to the pane it took the
// place of; on a screen that shows one panel at a time it brings the
// data pane to the front.
func TestGroupsKey(t *testing.T) {
	m := groupsScreen(160, 48, groupsView(102, 1000))
	m.pane = panePartitions
	key := func(r rune) string {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		return m.View()
	}
	if s := key('o'); m.pane != paneGroups || !strings.Contains(s, "billing Stable · coordinator 102") {
		t.Fatalf("after o, pane %v:\n%s", m.pane, s)
	}
	if key('o'); m.pane != panePartitions {
		t.Fatalf("o again: pane %v, want the partitions", m.pane)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.tab = 0
	if s := key('o'); m.tab != dataTab || m.pane != paneGroups || !strings.Contains(s, "[Groups]") {
		t.Fatalf("o on a tabbed screen: tab %d, pane %v\n%s", m.tab, m.pane, s)
	}
	press(t, m, "?")
	if s := m.View(); !strings.Contains(s, "o consumer groups") {
		t.Errorf("the full help lacks o:\n%s", s)
	}
}

// The groups pane, at every size, fills the terminal exactly, no line
// wider than it, and reads the same without colour.
func TestGroupsPaneFitsEverySizeWithoutColour(t *testing.T) {
	r := loadRecording(t, "groups")
	r.Frames = append(r.Frames, loadRecording(t, "groups-moved").Frames...)
	m := replay(r, 80, 24)
	m.pane = paneGroups
	for _, size := range [][2]int{{20, 6}, {40, 12}, {60, 20}, {80, 24}, {100, 30}, {119, 40}, {120, 30}, {160, 48}, {200, 60}, {80, 60}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m.tab = dataTab
		lines := screenLines(m)
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > size[0] {
				t.Errorf("%dx%d: line %d is %d wide: %q", size[0], size[1], i, w, l)
			}
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	plain := m.View()
	lipgloss.SetColorProfile(termenv.TrueColor)
	coloured := m.View()
	lipgloss.SetColorProfile(termenv.Ascii)
	if !strings.Contains(coloured, "\x1b[") {
		t.Fatal("the TrueColor screen has no colour")
	}
	if got := ansi.Strip(coloured); got != plain {
		t.Fatalf("colour changed the text:\nplain:\n%s\ncoloured, stripped:\n%s", plain, got)
	}
}
