package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// replayed is the replication recordings replayed through one screen: the
// replicas level, 103 killed, fenced, back, then a slowed link.
func replayed(t *testing.T, w, h int) *Model {
	t.Helper()
	var r recording
	for _, name := range []string{"replication", "replica-down", "replica-rejoin", "replica-slow", "replica-truncate"} {
		part := loadRecording(t, name)
		r.Started, r.Select = part.Started, part.Select
		r.Frames = append(r.Frames, part.Frames...)
	}
	return replay(r, w, h)
}

// Every data pane, at every size, fills the terminal exactly and no line
// is wider than it, so nothing wraps.
func TestEveryDataPaneFitsEverySize(t *testing.T) {
	m := replayed(t, 80, 24)
	for p := paneBrokers; p < numPanes; p++ {
		m.pane = p
		for _, size := range [][2]int{{20, 6}, {40, 12}, {60, 20}, {80, 24}, {100, 30}, {119, 40}, {120, 30}, {160, 48}, {200, 60}, {80, 60}} {
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.tab = dataTab
			lines := screenLines(m)
			if len(lines) != size[1] {
				t.Errorf("%s at %dx%d: %d lines", p, size[0], size[1], len(lines))
			}
			for i, l := range lines {
				if w := lipgloss.Width(l); w > size[0] {
					t.Errorf("%s at %dx%d: line %d is %d wide: %q", p, size[0], size[1], i, w, l)
				}
			}
		}
	}
}

// The data panes read the same without colour: every colour repeats what
// the text says, and styled cells keep their widths.
func TestDataPanesColourNeverCarriesMeaningAlone(t *testing.T) {
	m := replayed(t, 160, 48)
	for _, p := range []dataPane{panePartitions, paneFetchers} {
		m.pane = p
		plain := m.View()
		lipgloss.SetColorProfile(termenv.TrueColor)
		coloured := m.View()
		lipgloss.SetColorProfile(termenv.Ascii)
		if !strings.Contains(coloured, "\x1b[") {
			t.Fatalf("%s: the TrueColor screen has no colour", p)
		}
		if got := ansi.Strip(coloured); got != plain {
			t.Fatalf("%s: colour changed the text:\nplain:\n%s\ncoloured, stripped:\n%s", p, plain, got)
		}
	}
}
