package tui

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// The output pane shows the whole output of the last command the screen
// ran or a lesson line ran — the very text the CLI prints, since the
// command runs through the CLI's own command tree — or the story of the
// last election. It scrolls both ways, since a table the CLI prints may
// be wider than the pane.

// maxOutputBytes bounds what the pane keeps of one output: a command such
// as events prints the whole ring; the pane keeps its start and says
// what it left out.
const maxOutputBytes = 256 << 10

// outputModel is the output pane's state.
type outputModel struct {
	// title says what the text is the output of.
	title string
	lines []string
	// failed says that the command failed; its error is in lines.
	failed bool
	// running says that the command is still running.
	running bool
	// wrap says the text is prose, wrapped to the pane's width; a
	// command's output is not: its tables would break.
	wrap bool
	// top is the first line shown; left the first column.
	top, left int
}

// open reports whether the pane has something to show.
func (o *outputModel) open() bool { return o.title != "" }

// set shows text under title, from its top.
func (o *outputModel) set(title, text string, failed bool) {
	text = strings.TrimRight(text, "\n")
	o.title, o.failed, o.running, o.wrap = title, failed, false, false
	o.lines = nil
	if text != "" {
		o.lines = strings.Split(text, "\n")
	}
	for i, l := range o.lines {
		// A terminal's styles and tabs would break the pane's columns.
		o.lines[i] = strings.ReplaceAll(ansi.Strip(l), "\t", "    ")
	}
	o.top, o.left = 0, 0
}

// close empties the pane.
func (o *outputModel) close() { *o = outputModel{} }

// shown are the lines as drawn at width w: wrapped under their own
// indentation when the text is prose.
func (o *outputModel) shown(w int) []string {
	if !o.wrap {
		return o.lines
	}
	var out []string
	for _, l := range o.lines {
		ind := len(l) - len(strings.TrimLeft(l, " "))
		out = append(out, wrapHanging(l[:ind], strings.TrimSpace(l), w)...)
	}
	return out
}

// width is the widest line, in cells.
func (o *outputModel) width() int {
	w := 0
	for _, l := range o.lines {
		w = max(w, cellWidth(l))
	}
	return w
}

// height is what the pane needs at width w to show every line: its
// title and lines.
func (o *outputModel) height(w int) int {
	if !o.open() {
		return 0
	}
	return 1 + max(len(o.shown(w)), 1)
}

// scrollBy moves the window n lines down (negative: up) within the text
// shown in h lines at width w.
func (o *outputModel) scrollBy(n, w, h int) {
	o.top = min(max(o.top+n, 0), max(len(o.shown(w))-max(h-1, 1), 0))
}

// scrollSideways moves the window n columns right (negative: left),
// within the text at width w.
func (o *outputModel) scrollSideways(n, w int) {
	o.left = min(max(o.left+n, 0), max(o.width()-w+1, 0))
}

// view renders the pane in w cells and at most h lines: the title with
// where the window stands, then the text from the window's corner.
func (o outputModel) view(st *Styles, w, h int) block {
	if h <= 0 || !o.open() {
		return nil
	}
	lines := o.shown(w)
	rows := h - 1
	top := min(o.top, max(len(lines)-max(rows, 1), 0))
	title := "Output · " + o.title
	switch {
	case o.running:
		title += " (running… esc stops it)"
	case len(lines) > rows && rows > 0:
		title += fmt.Sprintf(" · lines %d-%d of %d", top+1, min(top+rows, len(lines)), len(lines))
	}
	wide := !o.wrap && o.width() > w
	switch more := len(lines) > rows; {
	case more && wide:
		title += " · ( ) < > scroll"
	case more:
		title += " · ( ) scroll"
	case wide:
		title += " · < > scroll"
	}
	out := block{section(st, title, w)}
	if len(lines) == 0 && rows > 0 {
		if o.running {
			return out
		}
		return append(out, st.Dim.Render(clip("(printed nothing)", w)))
	}
	style := st.Value
	if o.failed {
		style = st.Err
	}
	for _, l := range lines[top:min(top+rows, len(lines))] {
		l = sideways(l, o.left)
		out = append(out, style.Render(clip(l, w)))
	}
	return out
}

// sideways drops the first n cells of s.
func sideways(s string, n int) string {
	if n <= 0 {
		return s
	}
	r := []rune(s)
	if n >= len(r) {
		return ""
	}
	return string(r[n:])
}

// boundedBuffer keeps the first maxOutputBytes written to it, and counts
// the rest: a command's output on its way to the pane. The command writes
// to it from its own goroutine.
type boundedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	dropped int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	n := len(p) // what is not kept counts as written: the command goes on
	b.mu.Lock()
	defer b.mu.Unlock()
	room := maxOutputBytes - b.buf.Len()
	if room < len(p) {
		b.dropped += int64(len(p) - max(room, 0))
		p = p[:max(room, 0)]
	}
	b.buf.Write(p)
	return n, nil
}

// String is what was kept, with a last line saying how much was not.
func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if b.dropped > 0 {
		s = strings.TrimRight(s, "\n") + fmt.Sprintf("\n… and %d bytes more: the pane keeps the first %d KiB", b.dropped, maxOutputBytes>>10)
	}
	return s
}
