package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
	ipoll "github.com/kraftlab/kraftlab/internal/poll"
)

// TestRecordHeld records a paused cluster with messages held at its
// links, from a real fast-profile cluster: steady state, the clock
// paused, moved on past the parked fetches' wait so that their answers
// wait at the links, and two of them delivered, so that the followers'
// next Fetch requests wait too. KRAFTLAB_TUI_RECORD=1 go test -run
// TestRecordHeld ./tui
func TestRecordHeld(t *testing.T) {
	ctx := context.Background()
	rec := newRecorder(t, "testdata/held.json", "the real engine, 3 controllers and 3 brokers, profile fast")
	pg := rec.pg
	rec.until("a leader with every voter caught up and the brokers unfenced", 30*time.Second, func(v *view.View) bool {
		return v.LeaderID != view.NoLeader && v.HighWatermark > 0 && v.MaxFollowerLag == 0 && unfencedBrokers(v) == 3
	})
	rec.frames(time.Second)
	do := func(a cluster.Action) {
		t.Helper()
		if _, err := pg.Do(ctx, a); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	do(cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	rec.until("the clock paused", 10*time.Second, func(v *view.View) bool { return v.Clock.Paused })
	// Paused, the leader holds every follower's Fetch parked until its
	// wait (kraftlab.quorum.fetch.max.wait.ms, 50ms here) passes on the
	// cluster clock: moving the clock past it makes the answers go out,
	// to wait at the links.
	do(cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 60})
	rec.until("Fetch answers held at the links", 10*time.Second, func(v *view.View) bool { return len(v.Messages) >= 4 })
	do(cluster.Action{Kind: cluster.ActStep, API: "Fetch"})
	do(cluster.Action{Kind: cluster.ActStep, API: "Fetch"})
	rec.until("a follower's next Fetch request held", 10*time.Second, func(v *view.View) bool {
		for _, m := range v.Messages {
			if m.API == "Fetch" && m.Direction == view.MessageRequest {
				return true
			}
		}
		return false
	})
	rec.frames(500 * time.Millisecond)
	paused := rec.cut()
	paused.Select = paused.Frames[len(paused.Frames)-1].View.LeaderID
	rec.save("held", paused)
}

// TestGoldenQueue compares the paused screen, its queue in the message
// flow's place, with testdata/TestGoldenQueue/*.golden: as the pause
// leaves it (at 80x24 the queue's tab in front), and with the focus in
// the queue and its second message chosen (go test ./tui -run
// TestGoldenQueue -update rewrites them).
func TestGoldenQueue(t *testing.T) {
	r := loadRecording(t, "held")
	for _, focused := range []bool{false, true} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			name := "paused"
			if focused {
				name = "chosen"
			}
			t.Run(fmt.Sprintf("%s/%dx%d", name, size[0], size[1]), func(t *testing.T) {
				m := replay(r, size[0], size[1])
				screen := m.View()
				if !strings.Contains(screen, "Held messages: ") {
					t.Fatalf("the paused screen shows no queue:\n%s", screen)
				}
				if focused {
					press(t, m, "c", "down")
					screen = m.View()
					if !strings.Contains(screen, fmt.Sprintf("▶ #%d ", m.view.Messages[1].ID)) {
						t.Fatalf("c, ↓ did not choose the second message:\n%s", screen)
					}
				}
				golden.RequireEqual(t, []byte(screen+"\n"))
			})
		}
	}
}

// The cursor follows its message as the queue moves under it; once the
// message is gone (delivered, dropped) it rests on the one in its place.
func TestQueueCursorFollowsItsMessage(t *testing.T) {
	msgs := func(ids ...uint64) *view.View {
		v := &view.View{Clock: view.Clock{Paused: true, Slow: 1}}
		for _, id := range ids {
			v.Messages = append(v.Messages, view.Message{ID: id, API: "Fetch", Direction: view.MessageResponse})
		}
		v.HeldMessages = len(v.Messages)
		return v
	}
	var q queueModel
	q.sync(msgs(3, 4, 5))
	if q.chosen != 3 {
		t.Fatalf("first choice %d, want the oldest, 3", q.chosen)
	}
	q.move(msgs(3, 4, 5), 1)
	q.move(msgs(3, 4, 5), 1)
	if q.chosen != 5 || q.at != 2 {
		t.Fatalf("after ↓↓: chosen %d at %d, want 5 at 2", q.chosen, q.at)
	}
	q.move(msgs(3, 4, 5), 1)
	if q.chosen != 5 {
		t.Fatalf("↓ past the end moved to %d", q.chosen)
	}
	q.sync(msgs(4, 5, 6, 7))
	if q.chosen != 5 || q.at != 1 {
		t.Fatalf("3 delivered, 6 and 7 held: chosen %d at %d, want 5 at 1", q.chosen, q.at)
	}
	q.sync(msgs(4, 6, 7))
	if q.chosen != 6 {
		t.Fatalf("5 delivered: chosen %d, want the one in its place, 6", q.chosen)
	}
	q.sync(msgs(4))
	if q.chosen != 4 {
		t.Fatalf("6 and 7 delivered: chosen %d, want the last left, 4", q.chosen)
	}
	q.sync(msgs())
	q.sync(msgs(9))
	if q.chosen != 9 {
		t.Fatalf("an emptied queue filling again: chosen %d, want 9", q.chosen)
	}
}

// openPaused starts a real playground of three controllers, shows it on
// a screen of w×h, pauses its clock with space and moves the clock past
// the parked fetches' wait until n messages are held.
func openPaused(t *testing.T, w, h, n int) (*cluster.Playground, *Model) {
	t.Helper()
	cfg, err := cluster.NewConfig(3, 0, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	m := newModel(t, pg, w, h)
	ipoll.Until(t, 30*time.Second, "a leader", func() bool {
		pull(t, m)
		return m.view.LeaderID != view.NoLeader && m.view.HighWatermark > 0
	})
	press(t, m, " ")
	ipoll.Until(t, 10*time.Second, "the clock paused", func() bool {
		pull(t, m)
		return m.view.Clock.Paused
	})
	advanceUntilHeld(t, pg, m, n)
	return pg, m
}

// advanceUntilHeld moves the paused clock on until n messages are held:
// the leader answers a parked Fetch once its wait passes.
func advanceUntilHeld(t *testing.T, pg *cluster.Playground, m *Model, n int) {
	t.Helper()
	ipoll.Until(t, 20*time.Second, fmt.Sprintf("%d messages held", n), func() bool {
		pull(t, m)
		if len(m.view.Messages) >= n {
			return true
		}
		if _, err := pg.Do(context.Background(), cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 60}); err != nil {
			t.Fatal(err)
		}
		return false
	})
}

// On a paused playground the queue lists the held messages; n delivers
// the oldest, c then ↓ and enter the chosen one, D drops the chosen one,
// and the status line says what went; running, n says how to pause.
func TestQueueDeliversAndDrops(t *testing.T) {
	pg, m := openPaused(t, 80, 24, 2)
	screen := m.View()
	if bar := lineWith(t, screen, "(tab: next panel"); !strings.Contains(bar, "[Queue]") {
		t.Fatalf("the pause did not bring the queue to the front: %q\n%s", bar, screen)
	}
	oldest := m.view.Messages[0]
	lineWith(t, screen, fmt.Sprintf("#%d %s", oldest.ID, messageLink(oldest)))

	// n: the oldest.
	press(t, m, "n")
	if want := fmt.Sprintf("delivered #%d ", oldest.ID); !strings.HasPrefix(m.status.text, want) {
		t.Fatalf("n: status %q, want %q…", m.status.text, want)
	}
	held := func(id uint64) bool {
		for _, msg := range pg.View().Messages {
			if msg.ID == id {
				return true
			}
		}
		return false
	}
	if held(oldest.ID) {
		t.Fatalf("n: #%d still held", oldest.ID)
	}

	// c, ↓, enter: the second one.
	advanceUntilHeld(t, pg, m, 2)
	press(t, m, "c")
	if !m.queue.focused {
		t.Fatal("c did not focus the queue")
	}
	selected := m.quorum.selected
	press(t, m, "down")
	if m.quorum.selected != selected {
		t.Fatal("↓ in the focused queue moved the node list's selection")
	}
	chosen := m.view.Messages[1]
	if m.queue.chosen != chosen.ID {
		t.Fatalf("↓ chose #%d, want the second, #%d", m.queue.chosen, chosen.ID)
	}
	lineWith(t, m.View(), fmt.Sprintf("▶ #%d %s", chosen.ID, messageLink(chosen)))
	first := m.view.Messages[0]
	press(t, m, "enter")
	// A connection delivers in order: one held before the chosen one on
	// its connection goes first, and the status names both.
	want := fmt.Sprintf("delivered #%d ", chosen.ID)
	inOrder := first.Conn == chosen.Conn && strings.HasPrefix(m.status.text, fmt.Sprintf("delivered #%d ", first.ID)) && strings.Contains(m.status.text, "; "+want)
	if !strings.HasPrefix(m.status.text, want) && !inOrder {
		t.Fatalf("enter: status %q, want %q…", m.status.text, want)
	}
	if held(chosen.ID) {
		t.Fatalf("enter: #%d still held", chosen.ID)
	}
	if first.Conn != chosen.Conn && !held(first.ID) {
		t.Fatalf("enter delivered #%d too, held before it on another connection", first.ID)
	}

	// D: drop the one the cursor rests on.
	advanceUntilHeld(t, pg, m, 1)
	if !m.queue.focused {
		t.Fatal("the focus left the queue")
	}
	doomed, ok := m.queue.message(&m.view)
	if !ok {
		t.Fatalf("no message chosen in %v", m.view.Messages)
	}
	press(t, m, "D")
	if want := fmt.Sprintf("dropped #%d ", doomed.ID); !strings.HasPrefix(m.status.text, want) {
		t.Fatalf("D: status %q, want %q…", m.status.text, want)
	}
	if held(doomed.ID) {
		t.Fatalf("D: #%d still held", doomed.ID)
	}
	// The links pane counts it lost, and does not blame a fault: no link
	// was ever faulty.
	ipoll.Until(t, 10*time.Second, "the drop counted on its link", func() bool {
		pull(t, m)
		return m.view.Link(doomed.From, doomed.To).Dropped > 0
	})
	links := strings.Join(m.links.view(m.st, &m.view, 100, 10), "\n")
	if !strings.Contains(links, "healthy links lost 1 message (to a fault since healed, or to drop)") {
		t.Fatalf("the links pane does not count the dropped message:\n%s", links)
	}

	// esc gives ↑/↓ back to the node list.
	press(t, m, "esc")
	if m.queue.focused {
		t.Fatal("esc left the focus in the queue")
	}
	press(t, m, "down")
	if m.quorum.selected == selected {
		t.Fatal("↓ after esc did not move the node list's selection")
	}
	// D outside the queue drops nothing and says how to choose.
	advanceUntilHeld(t, pg, m, 1)
	before := len(pg.View().Messages)
	press(t, m, "D")
	if !strings.Contains(m.status.text, "c moves into it") {
		t.Fatalf("D outside the queue: status %q", m.status.text)
	}
	if n := len(pg.View().Messages); n < before {
		t.Fatalf("D outside the queue dropped a message: %d held, %d before", n, before)
	}

	// Running, n says how to pause, and the flow is back.
	press(t, m, " ")
	ipoll.Until(t, 10*time.Second, "the clock running", func() bool {
		pull(t, m)
		return !m.view.Clock.Paused
	})
	press(t, m, "n")
	if !strings.Contains(m.status.text, "the clock runs") || !strings.Contains(m.status.text, "space pauses it") {
		t.Fatalf("n while running: status %q", m.status.text)
	}
	if bar := lineWith(t, m.View(), "(tab: next panel"); !strings.Contains(bar, "[Commit]  Flow ") || strings.Contains(bar, "Queue") {
		t.Fatalf("running, the flow did not come back, or the Commit tab the pause took the front from: %q", bar)
	}
	// c while running: the pane says the clock runs and how to pause.
	press(t, m, "c")
	screen = m.View()
	lineWith(t, screen, "the cluster clock runs: every message goes on its own")
	lineWith(t, screen, "space pauses it")
}

// The queue's hint names the : command that moves the clock on, and with
// no message held says that only time makes one.
func TestQueueHintNamesTheAdvanceCommand(t *testing.T) {
	v := view.View{Clock: view.Clock{Paused: true, Slow: 1}}
	for _, command := range []bool{false, true} {
		m := New(context.Background(), nil, Options{})
		if command {
			m = New(context.Background(), nil, Options{Command: func(context.Context, string, io.Writer) error { return nil }})
		}
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		m.pollSeq++
		m.Update(snapshotMsg{seq: m.pollSeq, view: v})
		want := "kraftlab clock advance 100ms lets the timers fire"
		if command {
			want = ":clock advance 100ms lets the timers fire"
		}
		pane := strings.Join(m.queueView(m.st, &m.view, 60, 10), "\n")
		if flat := strings.Join(strings.Fields(pane), " "); !strings.Contains(flat, want) {
			t.Errorf("the empty queue does not say %q:\n%s", want, pane)
		}
		press(t, m, "n")
		if !strings.Contains(m.status.text, want) {
			t.Errorf("n on an empty queue: status %q, want %q", m.status.text, want)
		}
	}
}

// The full help lists the queue's keys and snapshot's new one, and still
// shows the role legend whole at 80x24 with the clock paused, whose
// banner makes the header a line taller.
func TestFullHelpListsTheQueueKeysAt80x24(t *testing.T) {
	_, m := openPaused(t, 80, 24, 1)
	press(t, m, "?")
	screen := m.View()
	flat := strings.Join(strings.Fields(screen), " ")
	for _, want := range []string{"CLOCK PAUSED", "space pause/resume time", "n deliver the next message", "c choose a message…", "S snapshot",
		"Resigned = unattached.", "? close the keys"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the full help at 80x24 lacks %q:\n%s", want, screen)
		}
	}
}

// A queue longer than its pane scrolls to keep the chosen message in
// sight, and says how many are out of it.
func TestQueueKeepsTheChosenMessageInSight(t *testing.T) {
	v := &view.View{Clock: view.Clock{Paused: true, Slow: 1}}
	for id := uint64(1); id <= 10; id++ {
		v.Messages = append(v.Messages, view.Message{ID: id, From: 2, To: 1, API: "Fetch", Direction: view.MessageRequest,
			Fields: []view.MessageField{{Name: "fetch offset", Value: "41"}}})
	}
	v.HeldMessages = len(v.Messages)
	m := New(context.Background(), nil, Options{})
	m.queue.focused = true
	m.queue.sync(v)
	m.queue.move(v, 8)
	pane := strings.Join(m.queueView(m.st, v, 80, 6), "\n") // title, hint, 3 messages, the rest
	for _, want := range []string{"▶  #9 2→1 Fetch request held 0ms   fetch offset 41", "   #7 2→1", "… 7 more out of sight: ↑/↓ reach them"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the pane lacks %q:\n%s", want, pane)
		}
	}
	if strings.Contains(pane, "#6 ") {
		t.Errorf("the pane shows #6, four above the chosen #9 in three rows:\n%s", pane)
	}
}
