package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func TestOnePullChain(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := New(context.Background(), pg, Options{})
	m.Init()
	if m.pollSeq != 1 {
		t.Fatalf("Init: pull %d in flight, want 1", m.pollSeq)
	}
	msg := poll(m.ctx, pg, 1, 0, 0)().(snapshotMsg)
	_, next := m.Update(msg)
	if next == nil || m.pollSeq != 2 {
		t.Fatalf("the answer to pull 1 must schedule pull 2 (got cmd %v, seq %d)", next != nil, m.pollSeq)
	}
	// The same answer again, an older one, or one from a pull never made
	// must not start a second chain.
	for _, seq := range []uint64{1, 0, 7} {
		msg.seq = seq
		if _, cmd := m.Update(msg); cmd != nil {
			t.Fatalf("a stale answer (pull %d) scheduled another pull", seq)
		}
	}
	// Keys and resizes never start pulls either.
	for _, msg := range []tea.Msg{keyMsg("j"), keyMsg("space"), keyMsg("space"), tea.WindowSizeMsg{Width: 90, Height: 30}} {
		if _, cmd := m.Update(msg); cmd != nil {
			if _, ok := cmd().(snapshotMsg); ok {
				t.Fatalf("%T started a pull", msg)
			}
		}
	}
	if m.pollSeq != 2 {
		t.Fatalf("pull %d in flight, want 2", m.pollSeq)
	}
}

func TestNextDelayKeepsTheRate(t *testing.T) {
	start := time.Unix(100, 0)
	if d := nextDelay(100*time.Millisecond, start, start.Add(30*time.Millisecond)); d != 70*time.Millisecond {
		t.Errorf("a 30ms pull: next in %v, want 70ms", d)
	}
	if d := nextDelay(100*time.Millisecond, start, start.Add(time.Second)); d != 10*time.Millisecond {
		t.Errorf("a pull slower than the interval: next in %v, want the 10ms floor", d)
	}
}

func TestFirstViewSelectsTheLeader(t *testing.T) {
	pg, _ := openPlayground(t, 3, 2, clustertest.Options{})
	m := newModel(t, pg, 120, 40)
	if m.quorum.selected != m.view.LeaderID || m.view.LeaderID == view.NoLeader {
		t.Fatalf("selected %d, leader %d", m.quorum.selected, m.view.LeaderID)
	}
}

func TestSelectionKeysAndMouse(t *testing.T) {
	pg, _ := openPlayground(t, 3, 2, clustertest.Options{})
	m := newModel(t, pg, 120, 40)
	m.quorum.selected = 1
	for _, tc := range []struct {
		key  string
		want int32
	}{{"j", 2}, {"down", 3}, {"j", 101}, {"j", 102}, {"j", 102}, {"k", 101}, {"up", 3}, {"l", m.view.LeaderID}} {
		press(t, m, tc.key)
		if m.quorum.selected != tc.want {
			t.Fatalf("after %q: selected %d, want %d", tc.key, m.quorum.selected, tc.want)
		}
	}
	// A click on a row selects its node; the marker moves there.
	for y, line := range screenLines(m) {
		if strings.Contains(line, " 102 ") && strings.Contains(line, "Observer") {
			m.Update(tea.MouseMsg{X: 5, Y: y, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
			if m.quorum.selected != 102 {
				t.Fatalf("click on line %d (%q): selected %d", y, line, m.quorum.selected)
			}
			if !strings.HasPrefix(screenLines(m)[y], "▶") {
				t.Fatalf("the selected row is not marked: %q", screenLines(m)[y])
			}
			return
		}
	}
	t.Fatal("no row for node 102 on screen")
}

func TestKillShowsResultInStatusAndLog(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	leader := m.view.LeaderID
	press(t, m, "l", "x")
	pull(t, m)
	screen := m.View()
	want := fmt.Sprintf("killed node %d (the leader of epoch 1)", leader)
	if got := strings.Count(screen, want); got != 2 {
		t.Fatalf("%q shows %d times, want twice (status line and event log):\n%s", want, got, screen)
	}
	if m.view.LeaderID == leader || m.view.LeaderID == view.NoLeader {
		t.Fatalf("leader %d after killing %d", m.view.LeaderID, leader)
	}
	if !strings.Contains(screen, "elected leader in epoch 2") {
		t.Fatalf("the new election is not in the log:\n%s", screen)
	}
	// The killed node's row says so in words.
	row := lineWith(t, screen, fmt.Sprintf("▶ %4d ", leader))
	if !strings.Contains(row, "killed") {
		t.Fatalf("the killed node's row does not say killed: %q", row)
	}
}

// Keys that arrive in one read, as tmux send-keys or a fast typist over
// ssh deliver them, act one by one.
func TestKeysOfOneReadActOneByOne(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	if m.quorum.selected != 1 {
		t.Fatalf("selected %d, want the leader 1", m.quorum.selected)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jx")})
	runCmd(m, cmd)
	pull(t, m)
	if !strings.Contains(m.View(), "killed node 2 (Follower in epoch 1)") {
		t.Fatalf("j then x did not kill node 2:\n%s", m.View())
	}
}

func TestActionErrorShownInStatusAndLog(t *testing.T) {
	pg, eng := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	eng.FailNextAction(errors.New("disk on fire"))
	press(t, m, "S")
	pull(t, m)
	screen := m.View()
	if !strings.Contains(lastLine(t, screen, 2), "error: snapshot 1: snapshot node 1: disk on fire") {
		t.Fatalf("status line: %q", lastLine(t, screen, 2))
	}
	if !strings.Contains(lineWith(t, screen, "action-error"), "disk on fire") {
		t.Fatal("the error is not in the event log")
	}
	// A node in the wrong state: the playground refuses, and says why.
	press(t, m, "s")
	pull(t, m)
	if !strings.Contains(m.View(), "node 1 is already running") {
		t.Fatalf("no refusal shown:\n%s", m.View())
	}
}

func TestPartitionPicksTheSecondNode(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	m.quorum.selected = 2
	press(t, m, "p")
	if m.mode != modePick {
		t.Fatal("p did not ask for the second node")
	}
	// The leader is offered first; j moves to the next node.
	if !strings.Contains(lastLine(t, m.View(), 2), "partition node 2 from: [1] 3 ") {
		t.Fatalf("prompt: %q", lastLine(t, m.View(), 2))
	}
	press(t, m, "j", "enter")
	pull(t, m)
	if !m.view.Link(2, 3).Down || !m.view.Link(3, 2).Down || m.view.Link(1, 2).Down {
		t.Fatalf("links after partition 2 3: %+v", m.view.Links)
	}
	screen := m.View()
	if !strings.Contains(lineWith(t, screen, "▶    2 "), "partitioned from 3") {
		t.Fatalf("node 2's row:\n%s", screen)
	}
	if !strings.Contains(screen, "2 ↔ 3    DOWN") {
		t.Fatalf("the link table does not show 2 ↔ 3 down:\n%s", screen)
	}
	// Esc cancels a pick; heal then offers only the nodes with faulty links.
	press(t, m, "p", "esc")
	if m.mode != modeNormal {
		t.Fatal("esc did not cancel")
	}
	press(t, m, "h")
	if got := m.pick.peers; len(got) != 1 || got[0] != 3 {
		t.Fatalf("heal offers %v, want [3]", got)
	}
	press(t, m, "enter")
	pull(t, m)
	if m.view.Link(2, 3).Down {
		t.Fatal("heal 2 3 left the link down")
	}
	press(t, m, "h")
	if !strings.Contains(m.View(), "node 2 has no faulty link") {
		t.Fatal("heal with no faulty link did not say so")
	}
}

func TestLinkFaultForm(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	m.quorum.selected = 1
	press(t, m, "d", "enter")
	if m.mode != modeLink {
		t.Fatal("no delay/loss form after picking the node")
	}
	for range len(m.form.Value()) {
		press(t, m, "backspace")
	}
	press(t, m, "soon", "enter")
	if m.mode != modeLink || !strings.Contains(m.status.text, `bad "soon"`) {
		t.Fatalf("a bad fault was not refused in place: mode %d, status %q", m.mode, m.status.text)
	}
	for range len(m.form.Value()) {
		press(t, m, "backspace")
	}
	press(t, m, "150ms 20ms 5%", "enter")
	pull(t, m)
	l := m.view.Link(1, 2)
	if l.DelayMs != 150 || l.JitterMs != 20 || l.Loss != 0.05 {
		t.Fatalf("link 1→2: %+v", l)
	}
	if !strings.Contains(m.View(), "1 ↔ 2    delay 150ms +0..20ms, loss 5%") {
		t.Fatalf("link table:\n%s", m.View())
	}
}

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want view.LinkFault
		err  string
	}{
		{"200ms", view.LinkFault{Delay: 200 * time.Millisecond}, ""},
		{"250", view.LinkFault{Delay: 250 * time.Millisecond}, ""},
		{"1s 100ms 12.5%", view.LinkFault{Delay: time.Second, Jitter: 100 * time.Millisecond, Loss: 0.125}, ""},
		{"30%", view.LinkFault{Loss: 0.3}, ""},
		{"", view.LinkFault{}, ""},
		{"1ms 2ms 3ms", view.LinkFault{}, "too many durations"},
		{"x%", view.LinkFault{}, "bad loss"},
		{"150%", view.LinkFault{}, "between 0 and 1"},
		{"2m", view.LinkFault{}, "must be between"},
		{"1.5ms", view.LinkFault{}, "whole milliseconds"},
	} {
		got, err := parseFault(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseFault(%q) = %v, want error with %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("parseFault(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestLoadKeyToggles(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	if !strings.Contains(m.View(), "load off") {
		t.Fatalf("the header does not say the load is off:\n%s", m.View())
	}
	press(t, m, "L")
	pull(t, m)
	screen := m.View()
	if !strings.Contains(lastLine(t, screen, 2), "load started: 100 rec/s of 100 B") {
		t.Fatalf("status: %q", lastLine(t, screen, 2))
	}
	if !strings.Contains(screen, "load 100/s") || !strings.Contains(lineWith(t, screen, " load  "), "load started") {
		t.Fatalf("no load in the header or the log:\n%s", screen)
	}
	if l := pg.View().Load; l.RecordsPerSec != 100 || l.RecordBytes != 100 {
		t.Fatalf("load %+v", l)
	}
	// Without a majority there is no leader to append on.
	press(t, m, "j", "x", "j", "x")
	pull(t, m)
	if screen = m.View(); !strings.Contains(screen, "load 100/s paused: no leader") {
		t.Fatalf("the header does not say the load is paused:\n%s", screen)
	}
	press(t, m, "L")
	pull(t, m)
	screen = m.View()
	if !strings.Contains(lastLine(t, screen, 2), "load stopped") || !strings.Contains(screen, "load off") {
		t.Fatalf("L did not stop the load:\n%s", screen)
	}
}

func TestQuitAsksFirst(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 100, 30)
	m.opts.OwnsCluster = true
	_, cmd := m.Update(keyMsg("q"))
	if cmd != nil || m.mode != modeConfirm {
		t.Fatal("q quit without asking")
	}
	if !strings.Contains(m.View(), "Quit and stop the playground?") {
		t.Fatal("no question on screen")
	}
	m.Update(keyMsg("n"))
	if m.mode != modeNormal || m.Quitting() {
		t.Fatal("n did not cancel")
	}
	m.Update(keyMsg("ctrl+c"))
	_, cmd = m.Update(keyMsg("y"))
	if cmd == nil || !m.Quitting() {
		t.Fatal("y did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("y did not send tea.Quit")
	}
}

func TestPauseFreezesTheScreen(t *testing.T) {
	clk := newClock()
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{Now: clk.Now})
	m := newModel(t, pg, 100, 30)
	press(t, m, "space")
	frozen := m.view.Timestamp
	leo := m.view.Nodes[0].LogEndOffset
	clk.advance(time.Second)
	pull(t, m)
	if m.view.Timestamp != frozen || !strings.Contains(m.View(), "PAUSED") {
		t.Fatal("a paused screen moved")
	}
	press(t, m, "space")
	if m.view.Timestamp == frozen || m.view.Nodes[0].LogEndOffset <= leo {
		t.Fatal("resume did not show the latest state")
	}
	if strings.Contains(m.View(), "PAUSED") {
		t.Fatal("still says paused")
	}
}

func TestClosedPlaygroundEndsTheScreen(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 100, 30)
	pg.Close()
	msg := poll(m.ctx, pg, m.pollSeq, m.after, 0)()
	_, cmd := m.Update(msg)
	if cmd == nil {
		t.Fatal("no quit after the playground shut down")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("no quit after the playground shut down")
	}
}

func TestEventLogScrolls(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 100, 30)
	for i := range 50 {
		m.events.add(cluster.Event{Seq: uint64(1000 + i), Kind: cluster.EventHeal, Message: fmt.Sprintf("entry %d", i)})
	}
	if !strings.Contains(m.View(), "entry 49") {
		t.Fatal("the newest entry is not shown")
	}
	press(t, m, "pgup")
	if strings.Contains(m.View(), "entry 49") || !strings.Contains(m.View(), "newer below") {
		t.Fatalf("pgup did not scroll back:\n%s", m.View())
	}
	// New entries keep a scrolled log where it is.
	before := m.events.view(m.st, 100, 5)
	m.events.add(cluster.Event{Kind: cluster.EventHeal, Message: "entry 50"})
	if after := m.events.view(m.st, 100, 5); strings.Join(after[1:], "\n") != strings.Join(before[1:], "\n") {
		t.Fatalf("the scrolled log moved:\n%v\n%v", before, after)
	}
	press(t, m, "end")
	if !strings.Contains(m.View(), "entry 50") {
		t.Fatal("end did not follow the newest again")
	}
}

// TestEverySizeFits renders many sizes and checks that the screen is
// exactly the terminal's height and no line is wider than it, so nothing
// wraps.
func TestEverySizeFits(t *testing.T) {
	for _, shape := range [][2]int{{3, 3}, {5, 10}, {1, 0}} {
		pg, _ := openPlayground(t, shape[0], shape[1], clustertest.Options{})
		m := newModel(t, pg, 80, 24)
		press(t, m, "p", "j", "enter", "?")
		pull(t, m)
		for _, size := range [][2]int{{20, 6}, {40, 12}, {80, 24}, {100, 30}, {119, 40}, {120, 30}, {160, 48}, {200, 60}, {250, 80}, {80, 60}} {
			for _, help := range []bool{false, true} {
				m.showAll = help
				m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				lines := screenLines(m)
				if len(lines) != size[1] {
					t.Errorf("%v nodes at %dx%d (full help %v): %d lines", shape, size[0], size[1], help, len(lines))
				}
				for i, l := range lines {
					if w := lipgloss.Width(l); w > size[0] {
						t.Errorf("%v nodes at %dx%d: line %d is %d wide: %q", shape, size[0], size[1], i, w, l)
					}
				}
			}
		}
	}
}

func TestNarrowScreenTabsThroughPanels(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 80, 24)
	seen := map[string]bool{}
	for range 3 {
		for _, title := range []string{"Commit: HWM", "Message flow:", "Links: faults"} {
			if strings.Contains(m.View(), title) {
				seen[title] = true
			}
		}
		press(t, m, "tab")
	}
	if len(seen) != 3 {
		t.Fatalf("tab showed %v, want all three panels", seen)
	}
	if !strings.Contains(m.View(), "Events") {
		t.Fatal("the event log is gone at 80x24")
	}
}

// lineWith returns the first line of screen containing s.
func lineWith(t *testing.T, screen, s string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line with %q in:\n%s", s, screen)
	return ""
}

// lastLine returns the n-th line from the bottom (1 is the last).
func lastLine(t *testing.T, screen string, n int) string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	return lines[len(lines)-n]
}

// At 80x24 the full help shows every key and the role legend, the
// delay/loss input shows what is typed, and the commit picture every one
// of five voters.
func TestSmallScreenShowsEverything(t *testing.T) {
	pg, _ := openPlayground(t, 5, 3, clustertest.Options{})
	m := newModel(t, pg, 80, 24)
	screen := m.View()
	lineWith(t, screen, "   1 Leader      █")
	for id := 2; id <= 5; id++ {
		lineWith(t, screen, fmt.Sprintf("   %d Follower    █", id))
	}
	press(t, m, "?")
	screen = m.View()
	flat := strings.Join(strings.Fields(screen), " ")
	for _, want := range []string{"space pause/resume time", "tab next panel", "L load 100/s on/off", "W wipe its disk…", "tab next panel, shift+tab back", "T create a topic…", "bootstrap 127.0.0.1:19101",
		"d delay/loss…", "end/G newest events", "q quit", "Resigned = unattached.", "? close the keys"} {
		if !strings.Contains(flat, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the full help at 80x24 lacks %q:\n%s", want, screen)
		}
	}
	if n := len(strings.Split(screen, "\n")); n != 24 {
		t.Errorf("full help screen of %d lines", n)
	}
	press(t, m, "?")

	m.quorum.selected = 1
	press(t, m, "d", "enter")
	for range len(m.form.Value()) {
		press(t, m, "backspace")
	}
	press(t, m, "150ms 20ms 5%")
	screen = m.View()
	if l := lastLine(t, screen, 2); !strings.Contains(l, "link 1 ↔ 2: 150ms 20ms 5%") {
		t.Errorf("the typed fault is not in sight: %q\n%s", l, screen)
	}
	if l := lastLine(t, screen, 1); !strings.Contains(l, "200ms 50ms 10%") || !strings.Contains(l, "esc cancels") {
		t.Errorf("no hint under the input: %q", l)
	}
	press(t, m, "esc")
}

// Where every panel shows, tab says so instead of doing nothing, and the
// full help leaves it out.
func TestTabWhereEveryPanelShows(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 120, 40)
	before := m.View()
	press(t, m, "tab")
	if m.tab != 0 || !strings.Contains(m.View(), "every panel is on screen") || m.View() == before {
		t.Fatalf("tab at 120x40:\n%s", m.View())
	}
	press(t, m, "?")
	if strings.Contains(m.View(), "next panel") {
		t.Errorf("the full help offers tab where it does nothing:\n%s", m.View())
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(strings.Join(strings.Fields(m.View()), " "), "tab next panel") {
		t.Errorf("the full help at 80x24 lacks tab:\n%s", m.View())
	}
}

// On a narrow screen the delay/loss input scrolls: the end of what is
// typed stays in sight.
func TestLinkInputScrollsOnANarrowScreen(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 40, 12)
	m.quorum.selected = 1
	press(t, m, "d", "enter")
	press(t, m, " 30ms 12.5% 99")
	if l := lastLine(t, m.View(), 2); !strings.Contains(l, "12.5% 99") || !strings.HasPrefix(l, "link 1 ↔ 2: ") {
		t.Fatalf("input line at 40 columns: %q", l)
	}
	press(t, m, "esc")
}
