package tui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Styles holds every style the screen uses, built once. Colours are the
// terminal's 16 ANSI colours, which stay readable on a projector whatever
// the theme; every colour repeats what the text already says, so the
// screen reads the same under NO_COLOR (lipgloss then drops them all).
type Styles struct {
	Title    lipgloss.Style // the product name in the header
	Section  lipgloss.Style // panel titles
	Label    lipgloss.Style // header labels, table column names
	Value    lipgloss.Style // header values
	Dim      lipgloss.Style // secondary text
	Selected lipgloss.Style // the selected row of the quorum table
	Peer     lipgloss.Style // the node being picked as the second end of a link
	Tab      lipgloss.Style // the active tab of a collapsed panel
	OK       lipgloss.Style
	Warn     lipgloss.Style
	Err      lipgloss.Style
	Paused   lipgloss.Style
	Question lipgloss.Style // a lesson's question
	Request  lipgloss.Style // a request on the messages diagram
	Response lipgloss.Style // a response on the messages diagram

	BarFilled lipgloss.Style // a voter's log up to its position
	BarBehind lipgloss.Style // a voter's log below the high watermark's scale
	BarHWM    lipgloss.Style // the high watermark marker

	roles  map[view.Role]lipgloss.Style
	states map[view.State]lipgloss.Style
	events map[cluster.EventKind]lipgloss.Style
	fetch  map[view.FetchState]lipgloss.Style
	groups map[view.GroupState]lipgloss.Style
	// Help styles the help bar.
	Help help.Styles
}

// ANSI colour numbers.
const (
	colRed     = lipgloss.Color("9")
	colGreen   = lipgloss.Color("10")
	colYellow  = lipgloss.Color("11")
	colBlue    = lipgloss.Color("12")
	colMagenta = lipgloss.Color("13")
	colCyan    = lipgloss.Color("14")
	colGray    = lipgloss.Color("8")
	colWhite   = lipgloss.Color("15")
)

// DefaultStyles returns the styles of the screen.
func DefaultStyles() *Styles {
	fg := func(c lipgloss.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	s := &Styles{
		Title:     lipgloss.NewStyle().Bold(true).Foreground(colCyan),
		Section:   lipgloss.NewStyle().Bold(true).Foreground(colCyan),
		Label:     fg(colGray),
		Value:     lipgloss.NewStyle().Bold(true),
		Dim:       fg(colGray),
		Selected:  lipgloss.NewStyle().Reverse(true),
		Peer:      lipgloss.NewStyle().Underline(true).Bold(true),
		Tab:       lipgloss.NewStyle().Bold(true).Reverse(true),
		OK:        fg(colGreen),
		Warn:      fg(colYellow),
		Err:       lipgloss.NewStyle().Bold(true).Foreground(colRed),
		Paused:    lipgloss.NewStyle().Bold(true).Reverse(true).Foreground(colYellow),
		Question:  lipgloss.NewStyle().Bold(true).Foreground(colCyan),
		Request:   fg(colBlue),
		Response:  fg(colGreen),
		BarFilled: fg(colGreen),
		BarBehind: fg(colGray),
		BarHWM:    lipgloss.NewStyle().Bold(true).Foreground(colYellow),
		roles: map[view.Role]lipgloss.Style{
			view.RoleLeader:       lipgloss.NewStyle().Bold(true).Foreground(colGreen),
			view.RoleFollower:     fg(colBlue),
			view.RoleCandidate:    lipgloss.NewStyle().Bold(true).Foreground(colYellow),
			view.RoleProspective:  fg(colYellow),
			view.RoleUnattached:   fg(colGray),
			view.RoleResigned:     fg(colMagenta),
			view.RoleObserver:     fg(colCyan),
			view.RoleZkController: fg(colGreen),
			view.RoleBroker:       fg(colCyan),
		},
		states: map[view.State]lipgloss.Style{
			view.StateRunning:     fg(colGreen),
			view.StateKilled:      lipgloss.NewStyle().Bold(true).Foreground(colRed),
			view.StateStopped:     fg(colGray),
			view.StateIsolated:    lipgloss.NewStyle().Bold(true).Foreground(colRed),
			view.StateFailed:      lipgloss.NewStyle().Bold(true).Foreground(colRed),
			view.StateUnreachable: lipgloss.NewStyle().Bold(true).Foreground(colYellow),
			view.StateUnknown:     fg(colGray),
			statePartitioned:      fg(colYellow),
		},
		events: map[cluster.EventKind]lipgloss.Style{
			cluster.EventElection:         lipgloss.NewStyle().Bold(true).Foreground(colGreen),
			cluster.EventRoleChange:       fg(colBlue),
			cluster.EventBeginQuorumEpoch: fg(colCyan),
			cluster.EventEndQuorumEpoch:   fg(colMagenta),
			cluster.EventTruncation:       fg(colYellow),
			cluster.EventSnapshotTaken:    fg(colMagenta),
			cluster.EventSnapshotLoaded:   fg(colMagenta),
			cluster.EventHighWatermark:    fg(colGreen),
			cluster.EventVote:             fg(colBlue),
			cluster.EventUnsafe:           lipgloss.NewStyle().Bold(true).Foreground(colRed),
			cluster.EventRecovery:         fg(colGray),
			cluster.EventNodeFailed:       lipgloss.NewStyle().Bold(true).Foreground(colRed),
			cluster.EventNodeRestarted:    fg(colGreen),
			cluster.EventSnapshotFailed:   lipgloss.NewStyle().Bold(true).Foreground(colYellow),
			cluster.EventKill:             lipgloss.NewStyle().Bold(true).Foreground(colRed),
			cluster.EventStart:            fg(colGreen),
			cluster.EventStop:             fg(colYellow),
			cluster.EventResign:           fg(colMagenta),
			cluster.EventLinkChange:       fg(colYellow),
			cluster.EventDisk:             fg(colYellow),
			cluster.EventHeal:             fg(colGreen),
			cluster.EventSnapshot:         fg(colMagenta),
			cluster.EventWipe:             lipgloss.NewStyle().Bold(true).Foreground(colRed),
			cluster.EventLoad:             fg(colCyan),
			cluster.EventDown:             lipgloss.NewStyle().Bold(true).Foreground(colRed),
			cluster.EventActionError:      lipgloss.NewStyle().Bold(true).Foreground(colRed),
			cluster.EventMissed:           fg(colYellow),
			cluster.EventSay:              lipgloss.NewStyle().Bold(true).Foreground(colWhite),
			eventUI:                       fg(colWhite),
		},
	}
	s.fetch = map[view.FetchState]lipgloss.Style{
		view.FetchStateFetching:   fg(colGreen),
		view.FetchStateTruncating: lipgloss.NewStyle().Bold(true).Foreground(colYellow),
	}
	s.groups = map[view.GroupState]lipgloss.Style{
		view.GroupStable:              fg(colGreen),
		view.GroupPreparingRebalance:  fg(colYellow),
		view.GroupCompletingRebalance: fg(colYellow),
		view.GroupEmpty:               fg(colGray),
		view.GroupDead:                lipgloss.NewStyle().Bold(true).Foreground(colRed),
	}
	s.Help = help.Styles{
		ShortKey:       lipgloss.NewStyle().Bold(true),
		ShortDesc:      lipgloss.NewStyle(),
		ShortSeparator: fg(colGray),
		Ellipsis:       fg(colGray),
		FullKey:        lipgloss.NewStyle().Bold(true),
		FullDesc:       lipgloss.NewStyle(),
		FullSeparator:  fg(colGray),
	}
	return s
}

// Role styles a quorum role; an unknown one is left plain.
func (s *Styles) Role(role view.Role) lipgloss.Style { return s.roles[role] }

// State styles a node state, or "partitioned".
func (s *Styles) State(state view.State) lipgloss.Style { return s.states[state] }

// Event styles an event kind.
func (s *Styles) Event(kind cluster.EventKind) lipgloss.Style { return s.events[kind] }

// FetchState styles a partition's phase in its fetcher thread.
func (s *Styles) FetchState(state view.FetchState) lipgloss.Style { return s.fetch[state] }

// GroupState styles a consumer group's state.
func (s *Styles) GroupState(state view.GroupState) lipgloss.Style { return s.groups[state] }
