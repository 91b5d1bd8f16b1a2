package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// Commands typed after : run through Options.Command, the CLI's own
// command tree, and the output pane shows what they print: the screen
// has no formatter of its own for them, so what it shows is what the
// same command prints in a shell.

// commandPrompt is the command form's prompt.
const commandPrompt = ": kraftlab"

// maxCommandLine bounds the command form's input.
const maxCommandLine = 512

// runningCommand is a command typed after : that has not ended.
type runningCommand struct {
	seq    int
	line   string
	cancel context.CancelFunc
}

// commandMsg is a command's end: what it printed and its error.
type commandMsg struct {
	seq  int
	line string
	out  string
	err  error
}

// startCommand opens the command form.
func (m *Model) startCommand() {
	m.mode = modeCommand
	m.form.CharLimit = maxCommandLine
	m.fitForm()
	m.form.SetValue("")
	m.form.Focus()
	m.status.set(levelInfo, "type a command as after kraftlab in a shell, e.g. status --replication; enter runs it, esc cancels")
}

// leaveCommand ends the command form, leaving the input as the link form
// wants it.
func (m *Model) leaveCommand() {
	m.mode = modeNormal
	m.form.Blur()
	m.form.CharLimit = linkCharLimit
	m.fitForm()
}

func (m *Model) onCommandKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Cancel), msg.Type == tea.KeyCtrlC:
		m.leaveCommand()
		m.status.set(levelInfo, "command: cancelled")
		return nil
	case key.Matches(msg, m.keys.Confirm):
		line := strings.TrimSpace(m.form.Value())
		m.leaveCommand()
		if line == "" {
			m.status.set(levelInfo, "no command typed")
			return nil
		}
		return m.runCommand(line)
	}
	var cmd tea.Cmd
	m.form, cmd = m.form.Update(msg)
	return cmd
}

// runCommand runs line on its own goroutine; the pane shows it running,
// then what it printed.
func (m *Model) runCommand(line string) tea.Cmd {
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "kraftlab "))
	if m.cmd != nil {
		m.status.set(levelWarn, fmt.Sprintf("%q still runs: esc stops it", m.cmd.line))
		return nil
	}
	seq := 1
	if m.output.open() {
		seq = m.outputSeq + 1
	}
	m.outputSeq = seq
	ctx, cancel := context.WithCancel(m.ctx)
	m.cmd = &runningCommand{seq: seq, line: line, cancel: cancel}
	m.output.set("kraftlab "+line, "", false)
	m.output.running = true
	m.focus = focusOutput
	run := m.opts.Command
	return func() tea.Msg {
		defer cancel()
		var out boundedBuffer
		err := run(ctx, line, &out)
		return commandMsg{seq: seq, line: line, out: out.String(), err: err}
	}
}

// onCommand shows a command's end in the pane, unless the pane has moved
// on to another text since.
func (m *Model) onCommand(msg commandMsg) {
	if m.cmd != nil && m.cmd.seq == msg.seq {
		m.cmd = nil
	}
	if msg.seq != m.outputSeq {
		return
	}
	text := msg.out
	if msg.err != nil {
		text = strings.TrimRight(text, "\n") + "\nkraftlab: " + msg.err.Error()
		m.status.set(levelErr, "kraftlab "+msg.line+": "+msg.err.Error())
	} else {
		m.status.set(levelOK, "kraftlab "+msg.line+": done; the output pane shows what it printed")
	}
	m.output.set("kraftlab "+msg.line, strings.TrimLeft(text, "\n"), msg.err != nil)
}

// closeOutput answers esc: it stops a command that runs, or closes the
// pane.
func (m *Model) closeOutput() {
	switch {
	case m.cmd != nil:
		m.cmd.cancel()
		m.status.set(levelInfo, "stopping "+m.cmd.line)
	case m.output.open():
		m.output.close()
		m.outputSeq++
		if m.focus == focusOutput {
			m.focus = focusNone
		}
	}
}

// showText puts text, prose, in the output pane under title, as the
// place the user looks at.
func (m *Model) showText(title, text string) {
	m.outputSeq++
	m.output.set(title, text, false)
	m.output.wrap = true
	m.focus = focusOutput
}

// syncLesson shows what the lesson's latest message changed: a line's
// output in the output pane, and the panel it points at in front.
func (m *Model) syncLesson() {
	l := &m.lesson
	if l.outSeq != m.lessonOut {
		m.lessonOut = l.outSeq
		o := l.out
		text := o.output
		if !o.ok && o.err != "" && !strings.Contains(text, o.err) {
			text = strings.TrimRight(text, "\n") + "\n" + o.err
		}
		m.outputSeq++
		m.output.set(fmt.Sprintf("line %d, %s", o.line, o.text), strings.TrimLeft(text, "\n"), !o.ok)
		if m.focus == focusOutput {
			m.focus = focusNone // the lesson points again
		}
	}
	if l.focus != m.lessonFocus {
		m.lessonFocus = l.focus
		m.bringForward(l.focus)
	}
}

// bringForward shows the panel f in front where panels share a place,
// and the data pane it is.
func (m *Model) bringForward(f focus) {
	if p, ok := f.pane(); ok {
		m.pane = p
		m.tab = dataTab
		return
	}
	switch f {
	case focusCommit:
		m.tab = 0
	case focusQueue:
		m.tab = flowTab
	}
}

// scrollOutput answers ( ) < >: the pane scrolls by most of what it
// shows.
func (m *Model) scrollOutput(k string) {
	if !m.output.open() {
		m.status.set(levelInfo, "the output pane is closed: : runs a command, e tells the last election")
		return
	}
	shown, ok := m.compose().shown[focusOutput]
	if !ok {
		m.status.set(levelInfo, "the output pane has no room on screen now")
		return
	}
	page := max(shown[1]-2, 1)
	half := max(m.width/2, 1)
	switch k {
	case "(":
		m.output.scrollBy(-page, m.width, shown[1])
	case ")":
		m.output.scrollBy(page, m.width, shown[1])
	case "<":
		m.output.scrollSideways(-half, m.width)
	case ">":
		m.output.scrollSideways(half, m.width)
	}
}
