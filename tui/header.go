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
type nodeCounts struct{ live, killed, stopped, isolated, failed, unreachable, unknown int }

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
		case view.StateUnreachable:
			c.unreachable++
		case view.StateUnknown:
			c.unknown++
		}
	}
	return c
}

// headerItem is one item of the header; items with a lower rank give way
// first when a line is short.
type headerItem struct {
	text string
	rank int
}

// view renders the header. With a leader its items flow onto as many
// lines as the width needs, never cut in the middle of an item. Without
// one a line says why and what happens next, and the items keep to one
// line above it, the least needed left out: the header stays at two
// lines on an 80-column screen.
func (h headerModel) view(st *Styles, v *view.View, paused bool, w int) block {
	item := func(label, value string) string {
		return st.Label.Render(label+" ") + value
	}
	var items []headerItem
	add := func(rank int, text string) { items = append(items, headerItem{text, rank}) }
	add(9, st.Title.Render("kraftlab"))
	if paused {
		add(9, st.Paused.Render(" PAUSED: the cluster runs on, the screen is frozen "))
	}
	switch {
	case v.Sim != nil && v.Clock.Paused:
		add(9, st.Paused.Render(fmt.Sprintf(" SIMULATED seed %d: time waits; space runs it, , . step ", v.Sim.Seed)))
		add(8, item("run", simSlider(v.Sim)))
	case v.Sim != nil:
		add(9, st.Paused.Render(fmt.Sprintf(" SIMULATED seed %d: time runs ", v.Sim.Seed)))
		add(8, item("run", simSlider(v.Sim)))
	case v.Clock.Paused:
		add(9, st.Paused.Render(" CLOCK PAUSED: no timer fires, messages wait at the links "))
	case v.Clock.Slow > 1:
		add(9, st.Paused.Render(fmt.Sprintf(" CLOCK SLOW ×%d ", v.Clock.Slow)))
	}
	if v.Attached != nil {
		add(9, st.Paused.Render(" ATTACHED, READ-ONLY "))
	}
	add(1, item("cluster", st.Value.Render(v.ClusterID)))
	if z := v.ZooKeeper; z != nil {
		// The ZooKeeper era: no quorum, a controller among the brokers.
		add(8, item("mode", st.Value.Render("zk")))
		if z.ControllerID == view.NoLeader {
			add(8, item("controller", st.Err.Render("none")))
		} else {
			add(8, item("controller", st.Role(view.RoleZkController).Render(fmt.Sprint(z.ControllerID))))
		}
		add(7, item("controller epoch", st.Value.Render(fmt.Sprint(z.ControllerEpoch))))
		if v.Profile != "" {
			add(3, item("profile", st.Value.Render(v.Profile)))
		}
		add(6, item("nodes", nodeCountText(st, countNodes(v))))
		return flow(itemTexts(items), w, 3)
	}
	if v.LeaderID == view.NoLeader {
		add(8, item("leader", st.Err.Render("none")))
	} else {
		add(8, item("leader", st.Role(view.RoleLeader).Render(fmt.Sprint(v.LeaderID))))
	}
	add(7, item("epoch", st.Value.Render(fmt.Sprint(maxEpoch(v)))))
	hwm := "-"
	if v.HighWatermark >= 0 {
		hwm = fmt.Sprint(v.HighWatermark)
	}
	add(5, item("HWM", st.Value.Render(hwm)))
	if v.Profile != "" {
		add(3, item("profile", st.Value.Render(v.Profile)))
	}
	push := -1
	if v.Push() {
		// Only push says so: pull is Kafka's way and the default.
		push = len(items)
		add(quorumRank, item("quorum", st.Value.Render("push")))
	}
	if !h.started.IsZero() && v.Timestamp > 0 && v.Attached == nil {
		add(2, item("up", st.Value.Render(uptime(time.UnixMilli(v.Timestamp).Sub(h.started)))))
	}
	if v.Attached != nil {
		add(6, item("nodes", attachedCountText(st, countNodes(v))))
		add(4, item("poll", st.Value.Render(fmt.Sprintf("%dms", v.Attached.PollMs))))
	} else {
		add(6, item("nodes", nodeCountText(st, countNodes(v))))
		add(4, item("load", loadValue(st, v)))
	}

	whys, level := noLeaderWhy(v)
	if len(whys) == 0 {
		if push >= 0 {
			items = pushRoom(items, push, w)
		}
		return flow(itemTexts(items), w, 3)
	}
	// One line of items: leave out the lowest ranks until it fits.
	for len(items) > 1 && len(flow(itemTexts(items), w, 3)) > 1 {
		low := 0
		for i, it := range items {
			if it.rank < items[low].rank {
				low = i
			}
		}
		items = append(items[:low], items[low+1:]...)
	}
	style := st.Warn
	if level == levelErr {
		style = st.Err
	}
	why := whys[len(whys)-1]
	for _, s := range whys {
		if cellWidth(s) <= w {
			why = s
			break
		}
	}
	line := flow(itemTexts(items), w, 3)[0]
	return block{line, clip(style.Render(why), w)}
}

func itemTexts(items []headerItem) []string {
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.text
	}
	return texts
}

// noLeaderWhy says, when the view has no leader, why and what happens
// next, from the view alone: too few voters running for any election to
// win; voters still following a leader that is down, until their fetch
// timeout passes; an election under way; or each voter's role. It gives
// the same news in shorter and shorter words, for the width to pick; none
// while there is a leader.
func noLeaderWhy(v *view.View) ([]string, statusLevel) {
	if v.LeaderID != view.NoLeader {
		return nil, levelInfo
	}
	var all, running []*view.Node
	isolated := 0
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Kind != view.KindController {
			continue
		}
		all = append(all, n)
		switch n.State {
		case view.StateRunning:
			running = append(running, n)
		case view.StateIsolated:
			isolated++
		}
	}
	if len(all) == 0 {
		return []string{"no leader: no controllers"}, levelErr
	}
	majority := len(all)/2 + 1
	if len(running) < majority {
		count := fmt.Sprintf("%d of %d voters running", len(running), len(all))
		if isolated > 0 {
			count = fmt.Sprintf("%d of %d voters running and connected (%d isolated)", len(running), len(all), isolated)
		}
		more := majority - len(running)
		runs := "runs"
		if more > 1 {
			runs = "run"
		}
		long := fmt.Sprintf("%s, a majority needs %d: no election can succeed until %d more %s", count, majority, more, runs)
		return []string{"no leader: " + long, long,
			fmt.Sprintf("%s, a majority needs %d: no election can succeed", count, majority),
			fmt.Sprintf("%d of %d voters up, majority %d: no election can succeed", len(running), len(all), majority)}, levelErr
	}
	// Voters that still follow a leader which is down.
	byLeader := map[int32][]int32{}
	var order []int32
	var electing []string
	for _, n := range running {
		switch n.Role {
		case view.RoleFollower:
			if l, ok := v.Node(n.LeaderID); ok && l.State != view.StateRunning {
				if _, seen := byLeader[l.ID]; !seen {
					order = append(order, l.ID)
				}
				byLeader[l.ID] = append(byLeader[l.ID], n.ID)
			}
		case view.RoleProspective, view.RoleCandidate:
			electing = append(electing, fmt.Sprintf("%d %s", n.ID, n.Role))
		}
	}
	if len(electing) > 0 {
		s := fmt.Sprintf("election in epoch %d: %s", maxEpoch(v), strings.Join(electing, ", "))
		return []string{"no leader: " + s, s}, levelWarn
	}
	if len(order) > 0 {
		l, _ := v.Node(order[0])
		down := string(l.State)
		if b := v.Baseline; b != nil && b.NodeID == l.ID && v.Timestamp >= b.Timestamp {
			down += " " + since(b.Timestamp, v.Timestamp) + " ago"
		}
		who := byLeader[l.ID]
		verb, each, its := "follows", "it stands", "its"
		if len(who) > 1 {
			verb, each, its = "follow", "each stands", "their"
		}
		// The soonest fetch timer among them: the first to give up
		// starts the election.
		in, first := "", ""
		if due := soonestFetchDeadline(v, who); due > 0 {
			left := since(v.Timestamp, due)
			in, first = " in "+left, " (the first in "+left+")"
		}
		long := fmt.Sprintf("%s still %s %d (%s); %s for election when its fetch timeout passes%s", joinIDs(who), verb, l.ID, down, each, first)
		return []string{"no leader: " + long, long,
			fmt.Sprintf("%s %s %d (%s) until %s fetch timeout%s; then an election", ids(who), verb, l.ID, down, its, in),
			fmt.Sprintf("%s %s %d (%s) until %s fetch timeout%s", ids(who), verb, l.ID, down, its, in)}, levelWarn
	}
	roles := make([]string, len(running))
	for i, n := range running {
		roles[i] = fmt.Sprintf("%d %s", n.ID, n.Role)
	}
	return []string{"no leader: " + strings.Join(roles, ", ")}, levelWarn
}

// joinIDs spells node IDs as "1", "1 and 2" or "1, 2 and 3".
func joinIDs(list []int32) string {
	s := make([]string, len(list))
	for i, id := range list {
		s[i] = fmt.Sprint(id)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// loadValue lists every load that runs: the metadata load's rate (and
// why it is paused), each topic load's rate and topic, and who started
// each when known. "off" when none runs.
func loadValue(st *Styles, v *view.View) string {
	var parts []string
	if l := v.Load; l.On() {
		s := st.Value.Render(fmt.Sprintf("%d/s", l.RecordsPerSec))
		if l.NodeID == view.NoLeader {
			s += " " + st.Warn.Render("paused: no leader")
		}
		about := "metadata"
		if l.StartedBy != "" {
			about += ", " + string(l.StartedBy)
		}
		parts = append(parts, s+" ("+about+")")
	}
	for _, l := range v.TopicLoads {
		s := st.Value.Render(fmt.Sprintf("%d/s", l.RecordsPerSec)) + " to " + st.Value.Render(l.Topic)
		if l.StartedBy != "" {
			s += " (" + string(l.StartedBy) + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return st.Dim.Render("off")
	}
	return strings.Join(parts, ", ")
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

// soonestFetchDeadline is the earliest fetch deadline of the nodes ids, 0
// when none of them reports one.
func soonestFetchDeadline(v *view.View, ids []int32) int64 {
	var due int64
	for _, id := range ids {
		if n, ok := v.Node(id); ok && n.FetchDeadlineTimestamp > 0 && (due == 0 || n.FetchDeadlineTimestamp < due) {
			due = n.FetchDeadlineTimestamp
		}
	}
	return due
}

// quorumRank is the rank of the header's "quorum push" item.
const quorumRank = 3

// pushRoom leaves out the items ranked below items[push], "quorum push",
// lowest first,
// while that item makes the header a line longer than it would be without
// it: naming the mode must not cost the node table a row.
func pushRoom(items []headerItem, push, w int) []headerItem {
	without := append(items[:push:push], items[push+1:]...)
	want := len(flow(itemTexts(without), w, 3))
	for len(flow(itemTexts(items), w, 3)) > want {
		low := -1
		for i, it := range items {
			if it.rank < quorumRank && (low < 0 || it.rank < items[low].rank) {
				low = i
			}
		}
		if low < 0 {
			break
		}
		items = append(items[:low:low], items[low+1:]...)
	}
	return items
}

// nodeCountText says how many nodes are live, killed, stopped, failed
// and isolated.
func nodeCountText(st *Styles, c nodeCounts) string {
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
	return strings.Join(counts, ", ")
}

// attachedCountText counts a real cluster's nodes by whether they answer.
func attachedCountText(st *Styles, c nodeCounts) string {
	s := st.OK.Render(fmt.Sprintf("%d answer", c.live))
	if c.unreachable > 0 {
		s += ", " + st.State(view.StateUnreachable).Render(fmt.Sprintf("%d unreachable", c.unreachable))
	}
	if c.unknown > 0 {
		s += ", " + st.State(view.StateUnknown).Render(fmt.Sprintf("%d not asked", c.unknown))
	}
	return s
}
