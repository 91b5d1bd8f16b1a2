package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// offset prints a log offset; negative offsets are unknown.
func offset(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// since prints how long before now (both Unix milliseconds) ts was; a
// negative ts is never.
func since(ts, now int64) string {
	if ts < 0 {
		return "never"
	}
	return shortDuration(time.Duration(max(now-ts, 0)) * time.Millisecond)
}

// shortDuration prints d in at most about six characters.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// uptime prints a whole-second duration.
func uptime(d time.Duration) string {
	d = d.Truncate(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// fit truncates s (which may hold ANSI styles) to w cells and pads it with
// spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - lipgloss.Width(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// fitLeft is fit, aligned right: numbers line up on their last digit.
func fitLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-lipgloss.Width(s)) + s
}

// clip truncates s to w cells without padding.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// section is a panel's title line: the title, then a rule to width w.
func section(st *Styles, title string, w int) string {
	t := clip(st.Section.Render(title), w)
	if rest := w - lipgloss.Width(t) - 1; rest > 0 {
		return t + " " + st.Dim.Render(strings.Repeat("─", rest))
	}
	return t
}

// block is a rectangle of text: lines of at most its width.
type block []string

// box makes b exactly w wide and h high: lines are cut or padded, and
// missing lines are blank.
func box(b block, w, h int) block {
	out := make(block, h)
	for i := range out {
		line := ""
		if i < len(b) {
			line = b[i]
		}
		out[i] = fit(line, w)
	}
	return out
}

// besides lays blocks out side by side, each in its width, gap spaces
// apart, as high as the highest.
func besides(gap int, widths []int, blocks ...block) block {
	h := 0
	for _, b := range blocks {
		h = max(h, len(b))
	}
	boxed := make([]block, len(blocks))
	for i, b := range blocks {
		boxed[i] = box(b, widths[i], h)
	}
	out := make(block, h)
	sep := strings.Repeat(" ", gap)
	for i := range out {
		parts := make([]string, len(boxed))
		for j := range boxed {
			parts[j] = boxed[j][i]
		}
		out[i] = strings.Join(parts, sep)
	}
	return out
}

// byteRate prints a rate in bytes per second, in binary units.
func byteRate(bps float64) string {
	switch {
	case bps < 1024:
		return fmt.Sprintf("%.0f B/s", bps)
	case bps < 1024*1024:
		return fmt.Sprintf("%.1f KiB/s", bps/1024)
	}
	return fmt.Sprintf("%.1f MiB/s", bps/(1024*1024))
}
