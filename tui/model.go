// Package tui is kraftlab's live screen: the quorum, the commit picture,
// the message flow, the links and the event log of a running playground,
// and keys that break and mend it.
//
// The screen shows exactly what the control API shows: it pulls a
// view.View and the new events from a cluster.Operator on a tick, and
// sends cluster.Actions. The engine never calls into the screen, so a slow
// screen cannot slow the cluster down.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Options tune the screen.
type Options struct {
	// Started is when the playground started, for the uptime in the
	// header; zero leaves the uptime out.
	Started time.Time
	// Interval is the time between pulls; 0 means DefaultInterval.
	Interval time.Duration
	// OwnsCluster says that quitting stops the playground, as it does for
	// kraftlab up; the quit prompt says so.
	OwnsCluster bool
	// Styles are the screen's styles; nil means DefaultStyles().
	Styles *Styles
	// Lesson, when set, shows the lesson panel, fed by a lesson's run
	// (see Lesson); nil shows none.
	Lesson *Lesson
	// Command, when set, runs a command line typed after : (without
	// "kraftlab") against the playground the screen shows, as a scenario
	// line runs, writing what it prints to out; the output pane shows
	// it. nil leaves : out.
	Command func(ctx context.Context, line string, out io.Writer) error
	// ReadOnly leaves out every key that acts, for a real cluster the
	// screen only reads.
	ReadOnly bool
}

// mode is what the keys do now.
type mode int

const (
	modeNormal  mode = iota
	modePick         // picking the second node of a link action
	modeLink         // typing a link's delay, jitter and loss
	modeConfirm      // asking before quitting
	modeAsk          // asking before a destructive action (ask)
	modeTopic        // typing a new topic's name
	modeCommand      // typing a command line after :
)

// askState is a destructive action waiting for its y.
type askState struct {
	question string
	action   cluster.Action
}

// linkCharLimit bounds what the delay/loss input takes.
const linkCharLimit = 40

// linkPromptWidth is room for the delay/loss input's prompt, "link N ↔ M: ",
// and its cursor.
const linkPromptWidth = 20

// Model is the screen's state. It implements tea.Model.
type Model struct {
	ctx  context.Context
	ctrl cluster.Operator
	opts Options
	st   *Styles
	keys KeyMap

	width, height int
	view          view.View
	hasView       bool
	// after is the sequence number of the last event pulled.
	after uint64
	// pollSeq names the pull in flight; see snapshotMsg.
	pollSeq uint64
	// pullErr is the last pull's error, shown until a pull succeeds.
	pullErr error

	paused     bool
	heldView   *view.View      // the latest view while paused
	heldEvents []cluster.Event // the events pulled while paused

	header  headerModel
	quorum  quorumModel
	commit  commitModel
	flow    flowModel
	links   linksModel
	brokers brokersModel
	// pane is what the brokers' place shows: brokers, partitions,
	// fetcher threads or messages.
	pane       dataPane
	paneBefore dataPane // the pane the diagram key took the place from
	partitions partitionsModel
	fetchers   fetchersModel
	groups     groupsModel
	events     eventsModel
	status     statusModel
	help       helpModel
	// lesson is the lesson panel, when opts.Lesson is set.
	lesson  lessonModel
	showAll bool
	// tab is the panel shown where the screen is too small for all.
	tab int

	mode mode
	pick pickState
	ask  askState
	// topic is the topic the topic form creates, its name typed in form.
	topic cluster.Action
	form  textinput.Model
	// quit is set once the user confirmed quitting.
	quit bool

	// output is the output pane; focus the place the user pointed at
	// (the output pane, once a command ran or e told an election), over
	// the lesson's.
	output outputModel
	focus  focus
	// outputSeq counts the texts the pane has shown, so that a command's
	// late end never overwrites a newer text.
	outputSeq int
	// lessonOut and lessonFocus are what of the lesson's output and
	// focus the screen shows already.
	lessonOut   int
	lessonFocus focus
	// cmd is the command typed after : that runs, if any.
	cmd *runningCommand

	// queue is the held messages' pane, in the flow's place while the
	// clock is paused.
	queue queueModel
}

// New returns the screen for ctrl. ctx bounds its pulls and actions.
func New(ctx context.Context, ctrl cluster.Operator, opts Options) *Model {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	st := opts.Styles
	if st == nil {
		st = DefaultStyles()
	}
	form := textinput.New()
	form.Prompt = ""
	form.CharLimit = linkCharLimit
	// A steady cursor: a blinking one would redraw the screen twice a
	// second for nothing.
	form.Cursor.SetMode(cursor.CursorStatic)
	m := &Model{
		ctx: ctx, ctrl: ctrl, opts: opts, st: st, keys: DefaultKeyMap(),
		header: headerModel{started: opts.Started},
		quorum: quorumModel{selected: -1},
		queue:  queueModel{tabBefore: -1},
		help:   newHelpModel(st),
		form:   form,
	}
	if opts.Lesson != nil {
		m.lesson = newLessonModel(opts.Lesson)
	} else {
		m.keys = m.keys.withoutLesson()
	}
	if opts.ReadOnly {
		m.keys = m.keys.withoutActions()
	}
	if opts.Command == nil {
		m.keys = m.keys.withoutCommand()
	}
	return m
}

// Init starts the one chain of pulls. It sets no window title: bubbletea
// v1.3.10 writes the title escape without the renderer's lock, a data race
// with the first frame that the race detector caught.
func (m *Model) Init() tea.Cmd {
	m.pollSeq = 1
	pull := poll(m.ctx, m.ctrl, m.pollSeq, m.after, 0)
	if m.opts.Lesson != nil {
		return tea.Batch(pull, m.opts.Lesson.listen())
	}
	return pull
}

// Quitting reports whether the user asked to quit.
func (m *Model) Quitting() bool { return m.quit }

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.fitForm()
		return m, nil
	case snapshotMsg:
		return m, m.onSnapshot(msg)
	case actionMsg:
		m.onAction(msg)
		return m, nil
	case lessonMsg:
		msg.apply(&m.lesson)
		m.syncLesson()
		return m, m.opts.Lesson.listen()
	case commandMsg:
		m.onCommand(msg)
		return m, nil
	case tea.KeyMsg:
		return m, m.onKey(msg)
	case tea.MouseMsg:
		return m, m.onMouse(msg)
	}
	return m, nil
}

// onSnapshot takes a pull's answer and schedules the next pull.
func (m *Model) onSnapshot(msg snapshotMsg) tea.Cmd {
	if msg.seq != m.pollSeq {
		return nil // not the chain's latest pull: never fork a second chain
	}
	if errors.Is(msg.err, cluster.ErrClosed) {
		m.status.set(levelErr, "the playground is shut down")
		return tea.Quit
	}
	if m.ctx.Err() != nil {
		return nil
	}
	m.pullErr = msg.err
	if msg.err == nil {
		if n := len(msg.events); n > 0 {
			m.after = msg.events[n-1].Seq
		}
		if m.paused {
			m.heldView = &msg.view
			m.heldEvents = append(m.heldEvents, msg.events...)
			if over := len(m.heldEvents) - maxLogEntries; over > 0 {
				m.heldEvents = m.heldEvents[over:]
			}
		} else {
			m.apply(msg.view, msg.events)
		}
	}
	m.pollSeq++
	started := msg.started
	if started.IsZero() {
		started = time.Now()
	}
	return poll(m.ctx, m.ctrl, m.pollSeq, m.after, nextDelay(m.opts.Interval, started, time.Now()))
}

// apply shows a view and its events.
func (m *Model) apply(v view.View, evs []cluster.Event) {
	first := !m.hasView
	wasPaused := m.view.Clock.Paused
	m.view, m.hasView = v, true
	m.keys.Back.SetEnabled(v.Sim != nil && v.Attached == nil)
	m.keys.Forward.SetEnabled(v.Sim != nil && v.Attached == nil)
	m.queue.sync(&m.view)
	if wasPaused != v.Clock.Paused {
		m.clockChanged(wasPaused, v.Clock.Paused)
	}
	m.flow.add(&m.view)
	m.partitions.add(&m.view)
	m.groups.add(&m.view)
	m.events.add(evs...)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == cluster.EventSay {
			m.status.set(levelSay, evs[i].Message) // the latest words stay in sight
			break
		}
	}
	if first && v.LeaderID != view.NoLeader {
		m.quorum.selected = v.LeaderID
	}
	m.quorum.selectedIndex(&m.view)
}

// togglePause freezes the screen or shows the latest state again.
func (m *Model) togglePause() {
	m.paused = !m.paused
	if m.paused {
		m.status.set(levelWarn, "display paused: the cluster runs on; space resumes")
		return
	}
	if m.heldView != nil {
		m.apply(*m.heldView, m.heldEvents)
	} else {
		m.events.add(m.heldEvents...)
	}
	m.heldView, m.heldEvents = nil, nil
	m.status.set(levelInfo, "display resumed")
}

// logUI writes an entry the event stream does not have.
func (m *Model) logUI(format string, args ...any) {
	m.events.add(cluster.Event{Time: time.Now(), Kind: eventUI, Message: fmt.Sprintf(format, args...)})
}

// View renders the screen.
func (m *Model) View() string {
	return m.compose().String()
}

// fitForm makes the text input scroll within the line, after its prompt
// ("link N ↔ M: ", or the topic form's), rather than run off the screen.
func (m *Model) fitForm() {
	prompt := linkPromptWidth
	switch m.mode {
	case modeTopic:
		prompt = cellWidth(topicPrompt(m.topic)) + 1
	case modeCommand:
		prompt = cellWidth(commandPrompt) + 1
	}
	m.form.Width = max(m.width-prompt, 4)
}
