package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// actionTimeout bounds one action; starting a node replays its log.
const actionTimeout = 30 * time.Second

// actionMsg is an action's answer.
type actionMsg struct {
	label string
	res   cluster.Result
	err   error
}

// pickState is the second node being picked for a link action.
type pickState struct {
	kind  cluster.ActionKind
	from  int32
	peers []int32
	i     int
}

func (p pickState) peer() int32 {
	if len(p.peers) == 0 {
		return -1
	}
	return p.peers[p.i]
}

// act sends an action to the playground on its own goroutine; the answer
// comes back as an actionMsg.
func (m *Model) act(a cluster.Action) tea.Cmd {
	label := a.String()
	if a.Kind == cluster.ActLink {
		label = fmt.Sprintf("link %s %s", a.Node, a.Peer)
	}
	m.status.start(label)
	ctx, ctrl := m.ctx, m.ctrl
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, actionTimeout)
		defer cancel()
		res, err := ctrl.Do(ctx, a)
		return actionMsg{label: label, res: res, err: err}
	}
}

// onAction shows an action's answer. The playground publishes every
// action's result and error to the event stream, which the log shows;
// an error that never reached it (a shut playground, a broken control
// socket, a timeout) is written to the log here.
func (m *Model) onAction(msg actionMsg) {
	m.status.done(msg.label)
	if msg.err == nil {
		// A step that delivered several messages (those held before the
		// chosen one on its connection) says so a line each: the status
		// is one line.
		text := strings.ReplaceAll(msg.res.Message, "\n", "; ")
		if text == "" {
			text = msg.label + ": done"
		}
		m.status.set(levelOK, text)
		return
	}
	m.status.set(levelErr, fmt.Sprintf("%s: %v", msg.label, msg.err))
	if !m.published(msg.err) {
		m.logUI("%s failed before the playground could log it: %v", msg.label, msg.err)
	}
}

// published reports whether the playground logged the error itself. It
// logs every error of an action it ran: in this process that is all but
// a shut playground's and a timed-out call's. Behind a control socket a
// transport error cannot be told from an engine error, so only the
// errors of the playground's own checks count as logged there.
func (m *Model) published(err error) bool {
	if errors.Is(err, cluster.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if _, local := m.ctrl.(*cluster.Playground); local {
		return true
	}
	for _, kind := range []error{condition.ErrUnknownNode, cluster.ErrBadAction, cluster.ErrNodeState, condition.ErrNoLeader, condition.ErrNoBaseline} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// refuse tells why a key did nothing, in the status line and the log.
func (m *Model) refuse(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	m.status.set(levelWarn, msg)
	m.logUI("%s", msg)
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	// A terminal hands over the keys of one read (fast typing, a slow ssh
	// link, tmux send-keys) as one message; but for text typed into the
	// link form, each is a key of its own.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && m.mode != modeLink && m.mode != modeTopic && m.mode != modeCommand {
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	switch m.mode {
	case modeConfirm:
		return m.onConfirmKey(msg)
	case modePick:
		return m.onPickKey(msg)
	case modeLink:
		return m.onLinkKey(msg)
	case modeAsk:
		return m.onAskKey(msg)
	case modeTopic:
		return m.onTopicKey(msg)
	case modeCommand:
		return m.onCommandKey(msg)
	}
	if m.queue.focused {
		// The focused queue takes ↑/↓, enter and esc before the node list
		// and the lesson do.
		if cmd, ok := m.onQueueKey(msg); ok {
			return cmd
		}
	}
	if m.opts.Lesson != nil && m.onLessonKey(msg) {
		return nil
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		m.mode = modeConfirm
		return nil
	case key.Matches(msg, k.Help):
		m.showAll = !m.showAll
		return nil
	case key.Matches(msg, k.Pause):
		return m.pauseKey()
	case key.Matches(msg, k.Back):
		return m.simStepKey(-1)
	case key.Matches(msg, k.Forward):
		return m.simStepKey(+1)
	case key.Matches(msg, k.Step):
		return m.stepKey()
	case key.Matches(msg, k.Messages):
		m.focusQueue()
		return nil
	case key.Matches(msg, k.Drop):
		m.status.set(levelInfo, "D drops the message chosen in the queue: c moves into it to choose one")
		return nil
	case key.Matches(msg, k.Tab):
		if !m.tabbed() {
			m.status.set(levelInfo, "every panel is on screen: tab switches panels only when the window is too small for all")
			return nil
		}
		m.tab = (m.tab + 1) % m.tabCount()
		m.queue.focused = false // the queue is no longer in sight
		return nil
	case key.Matches(msg, k.BackTab):
		if !m.tabbed() {
			m.status.set(levelInfo, "every panel is on screen: shift+tab switches panels only when the window is too small for all")
			return nil
		}
		n := m.tabCount()
		m.tab = (m.tab%n + n - 1) % n
		m.queue.focused = false
		return nil
	case key.Matches(msg, k.Pane):
		m.showPane()
		return nil
	case key.Matches(msg, k.Diagram):
		m.toggleDiagram()
		return nil
	case key.Matches(msg, k.Groups):
		m.toggleGroups()
		return nil
	case key.Matches(msg, k.ScrollUp):
		m.events.scrollBy(max(m.height/4, 1))
		return nil
	case key.Matches(msg, k.ScrollDown):
		m.events.scrollBy(-max(m.height/4, 1))
		return nil
	case key.Matches(msg, k.Follow):
		m.events.scroll = 0
		return nil
	case key.Matches(msg, k.Command):
		m.startCommand()
		return nil
	case key.Matches(msg, k.Election):
		m.showText("the last election", electionStory(m.events.entries, &m.view, voters(&m.view)))
		return nil
	case key.Matches(msg, k.OutScroll), key.Matches(msg, k.OutSideways):
		m.scrollOutput(msg.String())
		return nil
	case key.Matches(msg, k.CloseOut):
		m.closeOutput()
		return nil
	case key.Matches(msg, k.Load):
		if m.hasView && m.view.Load.On() {
			return m.act(cluster.Action{Kind: cluster.ActLoad, StartedBy: view.OriginScreen})
		}
		return m.act(cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: loadRate, RecordBytes: loadBytes, StartedBy: view.OriginScreen})
	case key.Matches(msg, k.TopicLoad):
		if !m.hasView {
			return nil
		}
		m.startTopicLoad()
		return nil
	case key.Matches(msg, k.Elect):
		return m.act(cluster.Action{Kind: cluster.ActElectLeaders})
	case key.Matches(msg, k.Topic):
		if !m.hasView {
			return nil
		}
		m.startTopic(newTopicAction(&m.view))
		return nil
	case key.Matches(msg, k.HealAll):
		return m.act(cluster.Action{Kind: cluster.ActHeal})
	case key.Matches(msg, k.Resign):
		return m.act(cluster.Action{Kind: cluster.ActResign, Node: condition.LeaderRef()})
	case key.Matches(msg, k.AddVoter):
		// A static quorum refuses; its error says how to start a dynamic one.
		return m.act(cluster.Action{Kind: cluster.ActAddController})
	}
	if !m.hasView {
		return nil
	}
	v := &m.view
	sel := m.quorum.selected
	node := condition.NodeID(sel)
	switch {
	case key.Matches(msg, k.Up):
		m.quorum.move(v, -1)
	case key.Matches(msg, k.Down):
		m.quorum.move(v, 1)
	case key.Matches(msg, k.Leader):
		if v.LeaderID == view.NoLeader {
			m.status.set(levelWarn, "there is no leader right now (an election may be in progress)")
			return nil
		}
		m.quorum.selected = v.LeaderID
	case key.Matches(msg, k.Kill):
		return m.act(cluster.Action{Kind: cluster.ActKill, Node: node})
	case key.Matches(msg, k.Start):
		return m.act(cluster.Action{Kind: cluster.ActStart, Node: node})
	case key.Matches(msg, k.Stop):
		return m.act(cluster.Action{Kind: cluster.ActStop, Node: node})
	case key.Matches(msg, k.Snapshot):
		return m.act(cluster.Action{Kind: cluster.ActSnapshot, Node: node})
	case key.Matches(msg, k.SlowDisk):
		delay := slowDisk.Milliseconds()
		if n, ok := v.Node(sel); ok && n.DiskDelayMs > 0 {
			delay = 0
		}
		return m.act(cluster.Action{Kind: cluster.ActDisk, Node: node, DelayMs: delay})
	case key.Matches(msg, k.Wipe):
		m.mode = modeAsk
		m.ask = askState{
			question: fmt.Sprintf("Wipe node %d's disk (its log, snapshots and vote), then start it empty? y wipes, any other key keeps it", sel),
			action:   cluster.Action{Kind: cluster.ActWipe, Node: node},
		}
	case key.Matches(msg, k.Isolate):
		return m.act(cluster.Action{Kind: cluster.ActIsolate, Node: node})
	case key.Matches(msg, k.RemoveVoter):
		// The other keys undo what they did; a removed voter comes back
		// only as a new controller, so this one asks first.
		m.mode = modeAsk
		m.ask = askState{
			question: fmt.Sprintf("Remove node %d from the voters (RemoveRaftVoter)? y removes, any other key keeps it", sel),
			action:   cluster.Action{Kind: cluster.ActRemoveController, Node: node},
		}
	case key.Matches(msg, k.Partition):
		m.startPick(cluster.ActPartition, m.otherNodes(sel))
	case key.Matches(msg, k.Link):
		m.startPick(cluster.ActLink, m.otherNodes(sel))
	case key.Matches(msg, k.Heal):
		peers := m.faultyPeers(sel)
		if len(peers) == 0 {
			m.refuse("heal: node %d has no faulty link to or from another node (H heals every link)", sel)
			return nil
		}
		m.startPick(cluster.ActHeal, peers)
	}
	return nil
}

// otherNodes lists every node but id, the leader first when id is not it:
// the usual second end of a partition.
func (m *Model) otherNodes(id int32) []int32 {
	var out []int32
	for _, n := range m.view.Nodes {
		if n.ID != id {
			out = append(out, n.ID)
		}
	}
	if l := m.view.LeaderID; l != view.NoLeader && l != id {
		i := slices.Index(out, l)
		out = append([]int32{l}, slices.Delete(out, i, i+1)...)
	}
	return out
}

// faultyPeers lists the nodes with a faulty link to or from id.
func (m *Model) faultyPeers(id int32) []int32 {
	var out []int32
	for _, n := range m.view.Nodes {
		if n.ID == id {
			continue
		}
		if m.view.Link(id, n.ID).Fault() != (view.LinkFault{}) || m.view.Link(n.ID, id).Fault() != (view.LinkFault{}) {
			out = append(out, n.ID)
		}
	}
	return out
}

func (m *Model) startPick(kind cluster.ActionKind, peers []int32) {
	if len(peers) == 0 {
		m.refuse("%s: there is no other node", kind)
		return
	}
	m.mode = modePick
	m.pick = pickState{kind: kind, from: m.quorum.selected, peers: peers}
}

func (m *Model) onPickKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Cancel), msg.Type == tea.KeyCtrlC:
		m.mode = modeNormal
		m.status.set(levelInfo, string(m.pick.kind)+": cancelled")
	case key.Matches(msg, k.PickPrev):
		m.pick.i = (m.pick.i + len(m.pick.peers) - 1) % len(m.pick.peers)
	case key.Matches(msg, k.PickNext):
		m.pick.i = (m.pick.i + 1) % len(m.pick.peers)
	case key.Matches(msg, k.Confirm):
		return m.picked()
	default:
		// Typing a node ID picks it.
		if id, err := strconv.Atoi(msg.String()); err == nil {
			for i, p := range m.pick.peers {
				if strings.HasPrefix(strconv.Itoa(int(p)), strconv.Itoa(id)) {
					m.pick.i = i
					break
				}
			}
		}
	}
	return nil
}

// picked runs the link action on the picked pair, or for link asks for
// the fault first.
func (m *Model) picked() tea.Cmd {
	p := m.pick
	from, to := condition.NodeID(p.from), condition.NodeID(p.peer())
	m.mode = modeNormal
	switch p.kind {
	case cluster.ActLink:
		m.mode = modeLink
		m.form.SetValue("200ms 0ms 0%")
		m.form.CursorEnd()
		m.form.Focus()
		m.status.set(levelInfo, "type delay jitter loss, e.g. 200ms 50ms 10%; enter applies, esc cancels")
		return nil
	case cluster.ActHeal:
		return m.act(cluster.Action{Kind: cluster.ActHeal, Node: from, Peer: to})
	}
	return m.act(cluster.Action{Kind: p.kind, Node: from, Peer: to})
}

func (m *Model) onLinkKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Cancel), msg.Type == tea.KeyCtrlC:
		m.mode = modeNormal
		m.form.Blur()
		m.status.set(levelInfo, "link: cancelled")
		return nil
	case key.Matches(msg, m.keys.Confirm):
		f, err := parseFault(m.form.Value())
		if err != nil {
			m.status.set(levelErr, "link: "+err.Error())
			return nil
		}
		m.mode = modeNormal
		m.form.Blur()
		return m.act(cluster.Action{
			Kind: cluster.ActLink, Node: condition.NodeID(m.pick.from), Peer: condition.NodeID(m.pick.peer()),
			DelayMs: f.Delay.Milliseconds(), JitterMs: f.Jitter.Milliseconds(), Loss: f.Loss,
		})
	}
	var cmd tea.Cmd
	m.form, cmd = m.form.Update(msg)
	return cmd
}

// parseFault reads "DELAY [JITTER] [LOSS%]", e.g. "200ms 50ms 10%": a
// duration (a bare number is milliseconds) is the delay, a second one the
// jitter, a percentage the loss.
func parseFault(s string) (view.LinkFault, error) {
	var f view.LinkFault
	durations := 0
	for _, tok := range strings.Fields(s) {
		if p, ok := strings.CutSuffix(tok, "%"); ok {
			loss, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return f, fmt.Errorf("bad loss %q: want a percentage such as 10%%", tok)
			}
			f.Loss = loss / 100
			continue
		}
		d, err := time.ParseDuration(tok)
		if n, nerr := strconv.ParseInt(tok, 10, 64); nerr == nil {
			d, err = time.Duration(n)*time.Millisecond, nil
		}
		if err != nil {
			return f, fmt.Errorf("bad %q: want a delay such as 200ms, then a jitter, then a loss such as 10%%", tok)
		}
		switch durations {
		case 0:
			f.Delay = d
		case 1:
			f.Jitter = d
		default:
			return f, fmt.Errorf("too many durations in %q: want a delay, a jitter and a loss", s)
		}
		durations++
	}
	if err := f.Validate(); err != nil {
		return f, err
	}
	return f, nil
}

// onAskKey runs the action asked about on y, and on any other key leaves
// it: a destructive key needs a second one.
func (m *Model) onAskKey(msg tea.KeyMsg) tea.Cmd {
	m.mode = modeNormal
	if msg.String() == "y" || msg.String() == "Y" {
		return m.act(m.ask.action)
	}
	m.status.set(levelInfo, m.ask.action.String()+": not done")
	return nil
}

// startTopic asks for the name of the topic a, offering a's.
func (m *Model) startTopic(a cluster.Action) {
	m.mode = modeTopic
	m.topic = a
	m.form.CharLimit = maxTopicName
	m.fitForm()
	m.form.SetValue(a.Topic)
	m.form.CursorEnd()
	m.form.Focus()
	m.status.set(levelInfo, "type the topic's name; enter creates it, esc cancels")
}

// maxTopicName is Kafka's longest topic name (Topic.MAX_NAME_LENGTH).
const maxTopicName = 249

// leaveTopic ends the topic form, leaving the input as the link form
// wants it.
func (m *Model) leaveTopic() {
	m.mode = modeNormal
	m.form.Blur()
	m.form.CharLimit = linkCharLimit
	m.fitForm()
}

// onTopicKey takes the keys of the topic form: the topic key's new
// topic, or the topic-load key's topic (its action's Kind is load).
func (m *Model) onTopicKey(msg tea.KeyMsg) tea.Cmd {
	what := "create topic"
	if m.topic.Kind == cluster.ActLoad {
		what = "load a topic"
	}
	switch {
	case key.Matches(msg, m.keys.Cancel), msg.Type == tea.KeyCtrlC:
		m.leaveTopic()
		m.status.set(levelInfo, what+": cancelled")
		return nil
	case key.Matches(msg, m.keys.Confirm):
		name := strings.TrimSpace(m.form.Value())
		if name == "" {
			m.status.set(levelErr, what+": type a name, or esc to cancel")
			return nil
		}
		m.leaveTopic()
		if m.topic.Kind == cluster.ActLoad {
			return m.confirmTopicLoad(name)
		}
		a := m.topic
		a.Topic = name
		return m.act(a)
	}
	var cmd tea.Cmd
	m.form, cmd = m.form.Update(msg)
	if m.topic.Kind == cluster.ActLoad {
		m.topicLoadHint()
	}
	return cmd
}

func (m *Model) onConfirmKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "y", "Y", "ctrl+c", "q", "enter":
		m.quit = true
		return tea.Quit
	}
	m.mode = modeNormal
	m.status.set(levelInfo, "still running")
	return nil
}

// onMouse selects the node clicked in the quorum table (or picks it as a
// link's second end), and scrolls the event log with the wheel.
func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	switch {
	case msg.Button == tea.MouseButtonWheelUp:
		m.events.scrollBy(3)
	case msg.Button == tea.MouseButtonWheelDown:
		m.events.scrollBy(-3)
	case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress:
		id, ok := m.compose().nodeAt[msg.Y]
		if !ok {
			return nil
		}
		switch m.mode {
		case modeNormal:
			m.quorum.selected = id
		case modePick:
			if i := slices.Index(m.pick.peers, id); i >= 0 {
				m.pick.i = i
				return m.picked()
			}
		}
	}
	return nil
}

// pauseKey stops time where the engine has a cluster clock: no timer
// fires and every message waits at its link, so what is on the screen
// stays true while the learner reads it; space again lets time go on.
// An engine without one (Slow 0) can only have its display frozen.
func (m *Model) pauseKey() tea.Cmd {
	if m.view.Clock.Slow == 0 {
		m.togglePause()
		return nil
	}
	op := cluster.ClockPause
	if m.view.Clock.Paused {
		op = cluster.ClockResume
	}
	return m.act(cluster.Action{Kind: cluster.ActClock, Clock: op})
}

// simStepKey moves a simulated run a step back (a rewind) or forward:
// along its branch while steps follow, else by simTick of simulated time,
// a step of its own.
func (m *Model) simStepKey(dir int) tea.Cmd {
	s := m.view.Sim
	if s == nil {
		return nil
	}
	steps := 0
	for _, b := range s.Branches {
		if b.ID == s.Branch {
			steps = len(b.Steps)
		}
	}
	switch {
	case dir < 0 && s.Step == 0:
		m.refuse("the run is at its start: nothing before step 0")
		return nil
	case dir < 0 || s.Step < steps:
		// By, not a step number: keys pressed faster than the polls
		// each move one step.
		return m.act(cluster.Action{Kind: cluster.ActRewind, By: dir})
	}
	return m.act(cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: simTick.Milliseconds()})
}
