package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// : opens the command form; enter runs the line through Options.Command
// and the output pane shows all it printed, scrolled by ( and ); a
// failed command shows its error; esc closes the pane.
func TestCommandOutputPane(t *testing.T) {
	var got []string
	m := New(context.Background(), nil, Options{Command: func(_ context.Context, line string, out io.Writer) error {
		got = append(got, line)
		if line == "bad" {
			fmt.Fprintln(out, "half of it")
			return errors.New("it went wrong")
		}
		for i := range 30 {
			fmt.Fprintf(out, "row %d of %s\n", i+1, line)
		}
		return nil
	}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	r := loadRecording(t, "steady")
	for _, f := range r.Frames {
		m.pollSeq++
		m.Update(snapshotMsg{seq: m.pollSeq, view: f.View, events: f.Events})
	}
	press(t, m, ":")
	if m.mode != modeCommand || !strings.Contains(m.View(), ": kraftlab") {
		t.Fatalf("no command form:\n%s", m.View())
	}
	for _, k := range "kraftlab status --replication" {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{k}})
		runCmd(m, cmd)
	}
	_, cmd := m.Update(keyMsg("enter"))
	if msg, ok := cmd().(commandMsg); ok {
		m.Update(msg)
	} else {
		t.Fatalf("enter ran no command")
	}
	if len(got) != 1 || got[0] != "status --replication" {
		t.Fatalf("ran %q", got)
	}
	screen := m.View()
	if !strings.Contains(screen, "Output · kraftlab status --replication · lines 1-") || !strings.Contains(screen, "row 1 of status --replication") {
		t.Fatalf("the pane does not show the output:\n%s", screen)
	}
	shown := m.compose().shown[focusOutput]
	if shown[1] < 2+minWhole {
		t.Errorf("the pane has %d lines at 80x24", shown[1])
	}
	for range 20 {
		press(t, m, ")")
	}
	if screen = m.View(); !strings.Contains(screen, "row 30 of") || strings.Contains(screen, "row 1 of") {
		t.Errorf(") did not scroll to the end:\n%s", screen)
	}
	press(t, m, ":")
	for _, k := range "bad" {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{k}})
	}
	_, cmd = m.Update(keyMsg("enter"))
	m.Update(cmd())
	if screen = m.View(); !strings.Contains(screen, "half of it") || !strings.Contains(screen, "kraftlab: it went wrong") || !strings.Contains(screen, "error: kraftlab bad: it went wrong") {
		t.Errorf("the failed command:\n%s", screen)
	}
	press(t, m, "esc")
	if strings.Contains(m.View(), "Output ·") {
		t.Errorf("esc did not close the pane:\n%s", m.View())
	}
	// Without Options.Command, : is no key of the screen.
	plain := replay(r, 80, 24)
	press(t, plain, ":")
	if plain.mode != modeNormal {
		t.Error(": opened a form on a screen that cannot run commands")
	}
}

// The pane keeps the first maxOutputBytes of an output and says how much
// it left out.
func TestBoundedOutput(t *testing.T) {
	var b boundedBuffer
	line := strings.Repeat("x", 1023) + "\n"
	for range maxOutputBytes/1024 + 3 {
		if n, err := b.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if s := b.String(); len(s) > maxOutputBytes+100 || !strings.HasSuffix(s, "… and 3072 bytes more: the pane keeps the first 256 KiB") {
		t.Errorf("kept %d bytes, ending %q", len(s), s[len(s)-80:])
	}
}
