package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// headerModel is the top of the screen: which cluster, who leads, how far
// it has committed, and how many nodes are up.
type headerModel struct {
	// started is when the playground started; zero if unknown.
	started time.Time
}

// nodeCounts counts nodes by what the playground did to them.
type nodeCounts struct{ live, killed, stopped, isolated, failed int }

func countNodes(v *view.View) nodeCounts {
	var c nodeCounts
	for _, n := range v.Nodes {
		switch n.State {
		case view.StateRunning:
			c.live++
		case view.StateIsolated:
			c.live++
			c.isolated++
		case view.StateKilled:
			c.killed++
		case view.StateStopped:
			c.stopped++
		case view.StateFailed:
			c.failed++
		}
	}
	return c
}

// view renders the header, its items flowed onto as many lines as width
// needs, never cut in the middle of an item.
func (h headerModel) view(st *Styles, v *view.View, paused bool, w int) block {
	item := func(label, value string) string {
		return st.Label.Render(label+" ") + value
	}
	var items []string
	items = append(items, st.Title.Render("kraftlab"))
	if paused {
		items = append(items, st.Paused.Render(" PAUSED: the cluster runs on, the screen is frozen "))
	}
	items = append(items, item("cluster", st.Value.Render(v.ClusterID)))
	if v.LeaderID == view.NoLeader {
		items = append(items, item("leader", st.Err.Render("none (election?)")))
	} else {
		items = append(items, item("leader", st.Role(view.RoleLeader).Render(fmt.Sprint(v.LeaderID))))
	}
	items = append(items, item("epoch", st.Value.Render(fmt.Sprint(maxEpoch(v)))))
	hwm := "-"
	if v.HighWatermark >= 0 {
		hwm = fmt.Sprint(v.HighWatermark)
	}
	items = append(items, item("HWM", st.Value.Render(hwm)))
	if v.Profile != "" {
		items = append(items, item("profile", st.Value.Render(v.Profile)))
	}
	if !h.started.IsZero() && v.Timestamp > 0 {
		items = append(items, item("up", st.Value.Render(uptime(time.UnixMilli(v.Timestamp).Sub(h.started)))))
	}
	c := countNodes(v)
	counts := []string{st.OK.Render(fmt.Sprintf("%d live", c.live))}
	if c.killed > 0 {
		counts = append(counts, st.State(view.StateKilled).Render(fmt.Sprintf("%d killed", c.killed)))
	} else {
		counts = append(counts, "0 killed")
	}
	if c.stopped > 0 {
		counts = append(counts, st.State(view.StateStopped).Render(fmt.Sprintf("%d stopped", c.stopped)))
	}
	if c.failed > 0 {
		counts = append(counts, st.State(view.StateFailed).Render(fmt.Sprintf("%d failed", c.failed)))
	}
	if c.isolated > 0 {
		counts = append(counts, st.State(view.StateIsolated).Render(fmt.Sprintf("%d isolated", c.isolated)))
	} else {
		counts = append(counts, "0 isolated")
	}
	items = append(items, item("nodes", strings.Join(counts, ", ")))
	items = append(items, item("load", loadValue(st, &v.Load)))
	return flow(items, w, 3)
}

// loadValue says whether the background load runs: its rate, and why it
// is paused.
func loadValue(st *Styles, l *view.Load) string {
	if !l.On() {
		return st.Dim.Render("off")
	}
	s := st.Value.Render(fmt.Sprintf("%d/s", l.RecordsPerSec))
	if l.NodeID == view.NoLeader {
		s += " " + st.Warn.Render("paused: no leader")
	}
	return s
}

// maxEpoch is the leader's epoch, or with no leader the highest epoch any
// live node is in, so the header shows elections counting up.
func maxEpoch(v *view.View) int32 {
	if v.LeaderID != view.NoLeader {
		return v.LeaderEpoch
	}
	e := int32(0)
	for _, n := range v.Nodes {
		if n.Live() {
			e = max(e, n.Epoch)
		}
	}
	return e
}

// flow puts items on lines of at most w cells, gap spaces apart; an item
// wider than a line is cut.
func flow(items []string, w, gap int) block {
	var out block
	line, lw := "", 0
	for _, it := range items {
		iw := lipgloss.Width(it)
		if lw > 0 && lw+gap+iw > w {
			out = append(out, line)
			line, lw = "", 0
		}
		if lw > 0 {
			line += strings.Repeat(" ", gap)
			lw += gap
		}
		line += it
		lw += iw
	}
	if lw > 0 {
		out = append(out, line)
	}
	for i := range out {
		out[i] = clip(out[i], w)
	}
	return out
}
