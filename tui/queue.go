package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The queue pane lists the messages the links hold while the cluster
// clock is paused, oldest first, and lets the user deliver or drop them
// one at a time: n delivers the oldest; c moves the focus into the pane,
// where ↑/↓ choose a message, enter delivers it and D drops it.
//
// It takes the message flow's place (the Flow tab on a small screen,
// beside the links on a wide one) while the clock is paused, and on a
// small screen comes to the front when the clock pauses. Paused, the flow
// says nothing: its rates fall to zero, as no request goes anywhere; the
// queue is then the only thing that moves, and a learner who pressed
// space at 80x24 should see it without hunting through the tabs.

// flowTab is the message flow's index among the tabs (see panels), which
// the queue takes while it shows.
const flowTab = 1

// queueModel is the queue pane's state: whether it has the focus, and
// the chosen message.
type queueModel struct {
	// focused says ↑/↓, enter, D and esc act on the queue, not the node
	// list.
	focused bool
	// chosen is the ID of the chosen message, at index at of the view's
	// list; it follows the message while the queue moves under it.
	chosen uint64
	at     int
	// tabBefore is the tab in front when the pause brought the queue's
	// to the front, -1 if it did not: running again, the screen goes
	// back to it.
	tabBefore int
}

// sync finds the chosen message in a new view: where it went if it is
// still held, else the one now in its place, so that after a delivery the
// cursor rests on the next message.
func (q *queueModel) sync(v *view.View) {
	ms := v.Messages
	if len(ms) == 0 {
		q.chosen, q.at = 0, 0
		return
	}
	for i, msg := range ms {
		if msg.ID == q.chosen {
			q.at = i
			return
		}
	}
	q.at = min(max(q.at, 0), len(ms)-1)
	q.chosen = ms[q.at].ID
}

// move chooses the message d places down (up when negative), staying in
// the list.
func (q *queueModel) move(v *view.View, d int) {
	if len(v.Messages) == 0 {
		return
	}
	q.sync(v)
	q.at = min(max(q.at+d, 0), len(v.Messages)-1)
	q.chosen = v.Messages[q.at].ID
}

// message returns the chosen message, if the view holds it.
func (q queueModel) message(v *view.View) (view.Message, bool) {
	for _, msg := range v.Messages {
		if msg.ID == q.chosen {
			return msg, true
		}
	}
	return view.Message{}, false
}

// queueShown reports whether the queue takes the message flow's place:
// while the clock is paused, or while the user has it focused (a running
// clock's pane then says how to pause).
func (m *Model) queueShown() bool {
	return m.hasView && (m.view.Clock.Paused || m.queue.focused)
}

// clockChanged answers a view whose clock paused or ran again since the
// last one, whoever did it (space, kraftlab clock in a shell, a lesson):
// paused, the queue comes to the front unless a lesson points at a
// panel; running again, the queue gives the focus back to the nodes and
// the tab it took the front from comes back.
func (m *Model) clockChanged(was, now bool) {
	switch {
	case !was && now:
		m.queue.tabBefore = -1
		if m.tab != flowTab && (m.opts.Lesson == nil || (m.lesson.focus != focusCommit && !m.lessonPointsAtPane())) {
			m.queue.tabBefore, m.tab = m.tab, flowTab
		}
	case was && !now:
		m.queue.focused = false
		if m.queue.tabBefore >= 0 && m.tab == flowTab {
			m.tab = m.queue.tabBefore
		}
		m.queue.tabBefore = -1
	}
}

// lessonPointsAtPane reports whether the lesson points at a data pane.
func (m *Model) lessonPointsAtPane() bool {
	_, ok := m.lesson.focus.pane()
	return ok
}

// focusQueue answers the queue key: it moves the focus into the queue
// (bringing it to the front) or back to the node list.
func (m *Model) focusQueue() {
	if m.queue.focused {
		m.queue.focused = false
		m.status.set(levelInfo, "↑/↓ select nodes again; c chooses a held message")
		return
	}
	if m.view.Clock.Slow == 0 {
		m.refuse("this playground has no cluster clock: its links hold no message to choose")
		return
	}
	m.queue.focused = true
	m.queue.sync(&m.view)
	m.tab = flowTab
	if !m.view.Clock.Paused {
		m.status.set(levelWarn, "the cluster clock runs: every message goes on its own; space pauses it and holds them")
		return
	}
	m.status.set(levelInfo, "the queue has the focus: ↑/↓ choose in it until esc gives them back to the node list")
}

// stepKey answers n: deliver the oldest held message, through the same
// step action as kraftlab step.
func (m *Model) stepKey() tea.Cmd {
	if m.view.Sim != nil {
		// A simulated run holds no message: n steps the run instead.
		return m.simStepKey(+1)
	}
	if msg, ok := m.stepRefusal(); !ok {
		m.status.set(levelWarn, msg)
		return nil
	}
	return m.act(cluster.Action{Kind: cluster.ActStep})
}

// stepRefusal says why a message cannot be stepped or dropped now, if it
// cannot. The view may be a pull old; the playground checks again.
func (m *Model) stepRefusal() (string, bool) {
	switch {
	case !m.hasView:
		return "no view of the playground yet", false
	case m.view.Clock.Slow == 0:
		return "this playground has no cluster clock: its links hold no message to deliver", false
	case !m.view.Clock.Paused:
		return "the clock runs: every message goes on its own; space pauses it, then n delivers the held messages one by one", false
	case len(m.view.Messages) == 0:
		return "the links hold no message: time stands still, so nothing is sent; " + m.advanceHint() + " lets the timers fire", false
	}
	return "", true
}

// deliverChosen answers enter in the queue: deliver the chosen message
// (and, as a TCP stream must, those held before it on its connection).
func (m *Model) deliverChosen() tea.Cmd {
	return m.actOnChosen(cluster.ActStep)
}

// dropChosen answers D in the queue: lose the chosen message.
func (m *Model) dropChosen() tea.Cmd {
	return m.actOnChosen(cluster.ActDrop)
}

func (m *Model) actOnChosen(kind cluster.ActionKind) tea.Cmd {
	if msg, ok := m.stepRefusal(); !ok {
		m.status.set(levelWarn, msg)
		return nil
	}
	chosen, ok := m.queue.message(&m.view)
	if !ok {
		m.queue.sync(&m.view)
		m.status.set(levelWarn, "the chosen message is no longer held; the cursor moved to the next")
		return nil
	}
	return m.act(cluster.Action{Kind: kind, MessageID: chosen.ID})
}

// advanceHint is how to move a paused clock on from this screen.
func (m *Model) advanceHint() string {
	if m.keys.Command.Enabled() {
		return ":clock advance 100ms"
	}
	return "kraftlab clock advance 100ms"
}

// onQueueKey takes the keys the focused queue answers; it reports false
// for the others, which act as anywhere else.
func (m *Model) onQueueKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		m.queue.move(&m.view, -1)
	case key.Matches(msg, k.Down):
		m.queue.move(&m.view, 1)
	case key.Matches(msg, k.Deliver):
		return m.deliverChosen(), true
	case key.Matches(msg, k.Drop):
		return m.dropChosen(), true
	case key.Matches(msg, k.LeaveQueue) && m.cmd == nil && !m.output.open():
		// The output pane, opened since (:clock advance), closes first.
		m.focusQueue()
	default:
		return nil, false
	}
	return nil, true
}

// pausedKeys is the help bar while the clock is paused: the keys of
// stepping time first, where an 80-column bar has room for them.
type pausedKeys struct{ k KeyMap }

func (p pausedKeys) ShortHelp() []key.Binding {
	k := p.k
	first := []key.Binding{k.Help, k.Quit, k.Next, k.Choose, k.shortStep(), k.Messages, k.resume(), k.Command}
	out := append([]key.Binding{}, first...)
	for _, b := range k.ShortHelp() {
		if !slices.ContainsFunc(first, func(f key.Binding) bool { return slices.Equal(f.Keys(), b.Keys()) }) {
			out = append(out, b)
		}
	}
	return out
}

func (p pausedKeys) FullHelp() [][]key.Binding { return p.k.FullHelp() }

// resume is space in the help bar of a paused clock.
func (k KeyMap) resume() key.Binding {
	return key.NewBinding(key.WithKeys(k.Pause.Keys()...), key.WithHelp(k.Pause.Help().Key, "resume"))
}

// queueKeys is the help bar while the queue has the focus.
type queueKeys struct {
	k      KeyMap
	paused bool
}

func (q queueKeys) ShortHelp() []key.Binding {
	k := q.k
	pause := k.Pause
	if q.paused {
		pause = k.resume()
	}
	return []key.Binding{k.QueueUp, k.Deliver, k.Drop, k.LeaveQueue, k.shortStep(), pause, k.Command, k.Help}
}

func (q queueKeys) FullHelp() [][]key.Binding { return [][]key.Binding{q.ShortHelp()} }

// queueView renders the pane in w cells and at most h lines: a title, a
// line that says what the keys do, then one line a message.
func (m *Model) queueView(st *Styles, v *view.View, w, h int) block {
	if v.Sim != nil {
		return historyView(st, v.Sim, w, h)
	}
	q := m.queue
	ms := v.Messages
	title := fmt.Sprintf("Held messages: %d, oldest first", v.HeldMessages)
	if !v.Clock.Paused {
		title = "Held messages"
	}
	out := block{section(st, title, w)}
	if h < 2 {
		return out
	}
	var hint string
	switch {
	case !v.Clock.Paused:
		hint = "the cluster clock runs: every message goes on its own, after its link's delay; space pauses it and holds them here"
	case len(ms) == 0:
		hint = "the links hold no message: time stands still and nothing is sent; " + m.advanceHint() + " lets the timers fire (a parked Fetch is answered, a request times out)"
	case q.focused:
		hint = "↑/↓ choose · enter delivers it · D drops it · esc: back to the nodes"
	default:
		hint = "n delivers the oldest · c chooses one · " + m.advanceHint() + " moves time on"
	}
	if len(ms) == 0 {
		// Nothing to list: the hint has the room to say it whole.
		for _, l := range wrapWords(hint, w) {
			out = append(out, st.Dim.Render(l))
		}
		return out
	}
	out = append(out, st.Dim.Render(clip(hint, w)))
	rows := h - len(out)
	more := len(ms) > rows || v.HeldMessages > len(ms)
	if more {
		rows--
	}
	if rows <= 0 {
		return out
	}
	first := 0
	if q.focused && q.at >= rows {
		first = q.at - rows + 1 // keep the chosen message in sight
	}
	idW, linkW, apiW := 0, 0, 0
	for _, msg := range ms {
		idW = max(idW, len(fmt.Sprint(msg.ID))+1)
		linkW = max(linkW, cellWidth(messageLink(msg)))
		apiW = max(apiW, len(msg.API)+1+len(msg.Direction))
	}
	for i := first; i < len(ms) && i < first+rows; i++ {
		msg := ms[i]
		mark := "  "
		chosen := q.focused && msg.ID == q.chosen
		if chosen {
			mark = "▶ "
		}
		line := mark + fitLeft(fmt.Sprintf("#%d", msg.ID), idW) + " " + fit(messageLink(msg), linkW) + " " +
			fit(msg.API+" "+string(msg.Direction), apiW) + " held " + fit(shortDuration(msgHeld(msg)), 5) + " " + messageFields(msg)
		if chosen {
			line = st.Selected.Render(fit(line, w))
		}
		out = append(out, clip(line, w))
	}
	if more {
		hidden := len(ms) - min(rows, len(ms)-first)
		text := fmt.Sprintf("… %d more: c, then ↓ reaches them", hidden)
		switch {
		case q.focused && first > 0:
			text = fmt.Sprintf("… %d more out of sight: ↑/↓ reach them", hidden)
		case q.focused:
			text = fmt.Sprintf("… %d more: ↓ reaches them", hidden)
		}
		if unlisted := v.HeldMessages - len(ms); unlisted > 0 {
			text = fmt.Sprintf("… %d more; kraftlab messages lists every one", hidden+unlisted)
		}
		out = append(out, st.Dim.Render(clip(text, w)))
	}
	return out
}

// messageLink is a held message's link, sender → receiver.
func messageLink(msg view.Message) string { return fmt.Sprintf("%d→%d", msg.From, msg.To) }

// msgHeld is how long, in cluster time, a message has been held.
func msgHeld(msg view.Message) time.Duration { return time.Duration(msg.HeldMs) * time.Millisecond }

// messageFields is a held message's decoded fields in a line. A field of
// one partition among several is named after it ("orders-0 high
// watermark"). The high watermark is HWM, as everywhere on the screen,
// and the records' bytes are left out: the count says what a learner
// needs, and the line has no room to spare; the status line and kraftlab
// messages name every field in full.
func messageFields(msg view.Message) string {
	var parts []string
	for _, f := range msg.Fields {
		name := f.Name
		if strings.HasSuffix(name, "record bytes") {
			continue
		}
		if p, ok := strings.CutSuffix(name, "high watermark"); ok {
			name = p + "HWM"
		}
		parts = append(parts, name+" "+f.Value)
	}
	if msg.DecodeError != "" {
		parts = append(parts, "undecodable: "+msg.DecodeError)
	}
	return strings.Join(parts, ", ")
}
