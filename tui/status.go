package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"

	"github.com/kraftlab/kraftlab/cluster"
)

// statusLevel says how a status message reads.
type statusLevel int

const (
	levelInfo statusLevel = iota
	levelOK
	levelWarn
	levelErr
	// levelSay shows a say event: words for everyone watching.
	levelSay
)

// statusModel is the status line: the last action's result or error, and
// the actions still running.
type statusModel struct {
	text  string
	level statusLevel
	// running lists the actions sent and not yet answered.
	running []string
}

func (s *statusModel) set(level statusLevel, text string) { s.level, s.text = level, text }

func (s *statusModel) start(action string) { s.running = append(s.running, action) }

func (s *statusModel) done(action string) {
	for i, a := range s.running {
		if a == action {
			s.running = append(s.running[:i], s.running[i+1:]...)
			return
		}
	}
}

// view renders the line in w cells.
func (s statusModel) view(st *Styles, w int) string {
	var b strings.Builder
	if len(s.running) > 0 {
		b.WriteString(st.Warn.Render("running: "+strings.Join(s.running, ", ")+"…") + "  ")
	}
	switch s.level {
	case levelOK:
		b.WriteString(st.OK.Render(s.text))
	case levelWarn:
		b.WriteString(st.Warn.Render(s.text))
	case levelErr:
		b.WriteString(st.Err.Render("error: " + s.text))
	case levelSay:
		b.WriteString(st.Event(cluster.EventSay).Render("» " + s.text))
	default:
		b.WriteString(s.text)
	}
	return clip(b.String(), w)
}

// helpModel is the help bar; the full help (?) is the keys overlay.
type helpModel struct {
	h help.Model
}

func newHelpModel(st *Styles) helpModel {
	h := help.New()
	h.Styles = st.Help
	return helpModel{h: h}
}

// view renders the help bar for keys in w cells.
func (m helpModel) view(keys help.KeyMap, w int) block {
	h := m.h
	h.Width = w
	return block(strings.Split(h.View(keys), "\n"))
}
