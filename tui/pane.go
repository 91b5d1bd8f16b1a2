package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// dataPane is what the brokers' place on the screen shows: the pane key
// cycles it, so the data plane fits without taking room from the quorum,
// the commit picture or the message flow.
type dataPane int

const (
	// paneBrokers: lifecycle, fencing and (kraftlab's) metadata lag of
	// each broker.
	paneBrokers dataPane = iota
	// panePartitions: each partition's leader, ISR, high watermark and
	// every replica's log end offset.
	panePartitions
	// paneFetchers: each broker's ReplicaFetcherThreads and their
	// partitions.
	paneFetchers
	// paneGroups: the consumer groups, their coordinators, members,
	// committed offsets and lag (groups.go).
	paneGroups
	// paneMessages: the last messages between nodes as a space-time
	// diagram (diagram.go).
	paneMessages
	numPanes
)

// String is the pane's tab name.
func (p dataPane) String() string {
	switch p {
	case panePartitions:
		return "Partitions"
	case paneFetchers:
		return "Fetchers"
	case paneGroups:
		return "Groups"
	case paneMessages:
		return "Messages"
	}
	return "Brokers"
}

// next is the pane the pane key shows after p.
func (p dataPane) next() dataPane { return (p + 1) % numPanes }

// dataTab is the data pane's index among the tabs (see compose), which
// the pane key brings to the front on a small screen.
const dataTab = 3

// paneSection is a data pane's title line: the title, what the pane key
// shows next, then a rule to width w. The hint is left out where the
// title needs the room.
func paneSection(st *Styles, title string, p dataPane, w int) string {
	hint := "(b: " + lowerFirst(p.next().String()) + ")"
	if lipgloss.Width(title)+1+lipgloss.Width(hint)+2 > w {
		return section(st, title, w)
	}
	t := st.Section.Render(title) + " " + st.Dim.Render(hint)
	return t + " " + st.Dim.Render(strings.Repeat("─", w-lipgloss.Width(t)-1))
}

// lowerFirst lowers the first letter of an ASCII name.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// togglePane answers a key that shows pane p at once: it shows p, on a
// small screen that shows another panel bringing the data pane to the
// front too; when p shows already, it goes back to the pane p took the
// place of and reports that it did.
func (m *Model) togglePane(p dataPane) (back bool) {
	switch {
	case m.tabbed() && m.tab%m.tabCount() != dataTab:
		m.tab = dataTab
		if m.pane != p {
			m.paneBefore, m.pane = m.pane, p
		}
	case m.pane != p:
		m.paneBefore, m.pane = m.pane, p
	default:
		m.pane = m.paneBefore
		return true
	}
	return false
}

// showPane answers the pane key: on a screen that shows one panel at a
// time and another one now, it brings the data pane to the front as it
// is; otherwise it shows the next data pane.
func (m *Model) showPane() {
	if m.tabbed() && m.tab%m.tabCount() != dataTab {
		m.tab = dataTab
	} else {
		m.pane = m.pane.next()
	}
	m.status.set(levelInfo, fmt.Sprintf("showing %s; b shows %s", lowerFirst(m.pane.String()), lowerFirst(m.pane.next().String())))
}
