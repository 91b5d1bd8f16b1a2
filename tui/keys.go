package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"

	"github.com/kraftlab/kraftlab/cluster"
)

// KeyMap is every key the screen answers to. It implements help.KeyMap, so
// the help bar and the full help (?) list exactly these.
type KeyMap struct {
	Up, Down, Leader key.Binding

	Kill, Start, Stop, Resign, Snapshot, Wipe, SlowDisk key.Binding

	Partition, Isolate, Heal, HealAll, Link key.Binding

	// A dynamic quorum's voter set (kraft.version 1): + starts a new
	// controller and adds it, - removes the selected node.
	AddVoter, RemoveVoter key.Binding

	Load, TopicLoad, Topic, Elect, Pause, Tab, BackTab, Pane, Diagram, Groups, ScrollUp, ScrollDown, Follow key.Binding

	// The held messages' keys, while the cluster clock is paused: n
	// delivers the oldest, c moves the focus into the queue pane, where
	// ↑/↓ (QueueUp names them in its help) choose, enter delivers, D
	// drops and esc gives the focus back to the node list.
	Step, Messages, QueueUp, Deliver, Drop, LeaveQueue key.Binding

	Help, Quit key.Binding

	// The output pane's keys: : runs a command, e tells the last
	// election, ( ) and < > scroll the pane, esc closes it.
	Command, Election, OutScroll, OutSideways, CloseOut key.Binding

	// The lesson panel's keys, enabled only on a lesson's screen: Enter
	// runs the next line, a number answers the question, { and } scroll
	// the explanation. None of them means anything else on the screen.
	Next, Choose, LessonUp, LessonDown key.Binding

	// Pick mode: choosing the second node of a link action.
	PickPrev, PickNext, Confirm, Cancel key.Binding

	// A simulated run's keys (kraftlab up --sim), enabled only on one:
	// , rewinds it a step, . goes a step forward along its branch, or at
	// the branch's end runs simTick of simulated time.
	Back, Forward key.Binding
}

// simTick is how much simulated time . runs at the end of a branch: a
// few fetch rounds of the fast profile.
const simTick = 100 * time.Millisecond

// The background load the load key starts, and the topic-load key on a
// topic.
const (
	loadRate  = 100
	loadBytes = cluster.DefaultLoadRecordBytes
)

// slowDisk is the delay the disk key gives a node's writes: slower than
// a fetch round, faster than the workshop's timeouts, so the node lags
// without an election.
const slowDisk = 100 * time.Millisecond

// DefaultKeyMap returns the key bindings.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:     b("↑/k", "select", "up", "k"),
		Down:   b("↓/j", "select", "down", "j"),
		Leader: b("l", "select the leader", "l"),

		Kill:     b("x", "kill -9", "x"),
		Start:    b("s", "start", "s"),
		Stop:     b("g", "stop gracefully", "g"),
		Resign:   b("r", "resign the leader", "r"),
		Snapshot: b("S", "snapshot", "S"),
		Wipe:     b("W", "wipe its disk…", "W"),
		SlowDisk: b("w", fmt.Sprintf("disk +%v on/off", slowDisk), "w"),

		Partition: b("p", "partition…", "p"),
		Isolate:   b("i", "isolate", "i"),
		Heal:      b("h", "heal a link…", "h"),
		HealAll:   b("H", "heal all", "H"),
		Link:      b("d", "delay/loss…", "d"),

		AddVoter:    b("+", "add a new controller to the voters", "+"),
		RemoveVoter: b("-", "remove the selected node from the voters…", "-"),

		Load:       b("L", fmt.Sprintf("load %d/s on/off", loadRate), "L"),
		TopicLoad:  b("P", "produce to a topic…", "P"),
		Topic:      b("T", "create a topic…", "T"),
		Elect:      b("E", "elect preferred leaders", "E"),
		Pause:      b("space", "pause/resume time", " "),
		Tab:        b("tab", "next panel, shift+tab back", "tab"),
		BackTab:    b("shift+tab", "previous panel", "shift+tab"),
		Pane:       b("b", "brokers/partitions/fetchers", "b"),
		Diagram:    b("m", "messages diagram", "m"),
		Groups:     b("o", "consumer groups", "o"),
		ScrollUp:   b("pgup/[", "older events", "pgup", "["),
		ScrollDown: b("pgdn/]", "newer events", "pgdown", "]"),
		Follow:     b("end/G", "newest events", "end", "G"),

		Step:       b("n", "deliver the next message", "n"),
		Messages:   b("c", "choose a message…", "c"),
		QueueUp:    b("↑↓", "choose", "up", "down", "k", "j"),
		Deliver:    b("enter", "deliver", "enter"),
		Drop:       b("D", "drop", "D"),
		LeaveQueue: b("esc", "leave", "esc"),

		Help: b("?", "keys", "?"),
		Quit: b("q", "quit", "q", "ctrl+c"),

		Command:     b(":", "run a command…", ":"),
		Election:    b("e", "the last election's story", "e"),
		OutScroll:   b("( )", "output up/down", "(", ")"),
		OutSideways: b("< >", "output left/right", "<", ">"),
		CloseOut:    b("esc", "close the output", "esc"),

		Next:       b("enter", "lesson: next line", "enter"),
		Choose:     b("1-9", "lesson: predict", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
		LessonUp:   b("{", "lesson text up", "{"),
		LessonDown: b("}", "lesson text down", "}"),

		Back:    key.NewBinding(key.WithKeys(","), key.WithHelp(",", "step back (rewind)"), key.WithDisabled()),
		Forward: key.NewBinding(key.WithKeys("."), key.WithHelp(".", fmt.Sprintf("step forward, or +%v", simTick)), key.WithDisabled()),

		PickPrev: b("←/k", "previous node", "left", "up", "k", "h"),
		PickNext: b("→/j", "next node", "right", "down", "j", "l"),
		Confirm:  b("enter", "confirm", "enter"),
		Cancel:   b("esc", "cancel", "esc"),
	}
}

// ShortHelp is the one-line help bar.
func (k KeyMap) ShortHelp() []key.Binding {
	step := k.shortStep()
	step.SetEnabled(k.Step.Enabled())
	return []key.Binding{k.Help, k.Quit, k.Next, k.Choose, k.Command, k.Up, k.Kill, k.Start, k.Partition, k.HealAll, k.Resign, k.Pause, step, k.Isolate}
}

// shortStep is n in the help bar, its words cut short so that the bar
// keeps i at 160 columns.
func (k KeyMap) shortStep() key.Binding {
	return key.NewBinding(key.WithKeys(k.Step.Keys()...), key.WithHelp(k.Step.Help().Key, "next message"))
}

// FullHelp is the help shown by ?, in columns: two rows of three at 80
// columns, so that the keys and the role legend fit 80x24. Pairs of keys
// that mirror each other share a line. Time and its messages go with the
// node list's keys: space, n and c are what a paused screen is for; so do
// + and -, which grow and shrink the list's voters. The
// queue's own keys (choose, deliver, drop) show in the help bar while it
// has the focus, as the link keys' do while a node is picked.
func (k KeyMap) FullHelp() [][]key.Binding {
	pair := func(a, b key.Binding, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(append(a.Keys(), b.Keys()...)...), key.WithHelp(help, desc))
	}
	voters := pair(k.AddVoter, k.RemoveVoter, "+ -", "add/remove a voter…")
	voters.SetEnabled(k.AddVoter.Enabled())
	groups := [][]key.Binding{
		{pair(k.Up, k.Down, "↑↓/kj", "select"), k.Leader, voters, k.Pane, k.Pause, k.Step, k.Messages, k.Back, k.Forward},
		{k.Kill, k.Start, k.Stop, k.Resign, k.Snapshot, k.Wipe, k.SlowDisk},
		{k.Partition, k.Isolate, k.Heal, k.HealAll, k.Link, k.Diagram, k.Groups},
		{k.Load, k.TopicLoad, k.Topic, k.Elect, k.Election, k.Command},
		{k.Tab, pair(k.ScrollUp, k.ScrollDown, "[ ]", "older/newer events"), k.Follow, k.OutScroll, k.OutSideways, k.CloseOut},
		{k.Help, k.Quit},
	}
	if k.Next.Enabled() {
		groups = append(groups, []key.Binding{k.Next, k.Choose, k.LessonUp, k.LessonDown})
	}
	return groups
}

// withoutCommand disables the command key, for a screen that cannot run
// commands.
func (k KeyMap) withoutCommand() KeyMap {
	k.Command.SetEnabled(false)
	return k
}

// withoutActions disables every key that acts on the cluster or its
// clock, for a screen on a real cluster, which kraftlab only reads.
func (k KeyMap) withoutActions() KeyMap {
	for _, b := range []*key.Binding{&k.Kill, &k.Start, &k.Stop, &k.Resign, &k.Snapshot, &k.Wipe, &k.SlowDisk,
		&k.Partition, &k.Isolate, &k.Heal, &k.HealAll, &k.Link, &k.Load, &k.TopicLoad, &k.Topic, &k.Elect,
		&k.AddVoter, &k.RemoveVoter, &k.Pause, &k.Step, &k.Messages, &k.Diagram} {
		b.SetEnabled(false)
	}
	return k
}

// withoutLesson disables the lesson panel's keys, for a screen without a
// lesson.
func (k KeyMap) withoutLesson() KeyMap {
	for _, b := range []*key.Binding{&k.Next, &k.Choose, &k.LessonUp, &k.LessonDown} {
		b.SetEnabled(false)
	}
	return k
}

// pickKeys is the help shown while a second node is picked.
type pickKeys struct{ k KeyMap }

func (p pickKeys) ShortHelp() []key.Binding {
	return []key.Binding{p.k.PickPrev, p.k.PickNext, p.k.Confirm, p.k.Cancel}
}

func (p pickKeys) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// closeHelp is the help bar while the full help shows.
type closeHelp struct{ k KeyMap }

func (c closeHelp) ShortHelp() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "close the keys")), c.k.Quit}
}

func (c closeHelp) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }
