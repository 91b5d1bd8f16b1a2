package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Layout thresholds. From wideWidth columns on, the commit picture spans
// the screen under the quorum table and the message flow sits beside the
// links; below it they share one place and tab switches between them,
// unless the screen is tall enough to stack them all.
const (
	wideWidth = 120
	// minEvents is the fewest lines the event log keeps (title included)
	// before it becomes one of the tabs.
	minEvents = 4
)

// frame is a composed screen: its lines, and which line shows which node
// of the quorum table, for the mouse.
type frame struct {
	lines  block
	nodeAt map[int]int32
	// tabbed says the panels share one place and tab switches them.
	tabbed bool
	// tabs counts the tabs when tabbed.
	tabs int
	// band is the lesson band's height, 0 without one.
	band int
	// shown are the places on screen, each with its first line and how
	// many lines it has; whole says which of them show every row.
	shown map[focus][2]int
	whole map[focus]bool
}

// String joins the lines.
func (f frame) String() string { return strings.Join(f.lines, "\n") }

// panel is one of the panels below the quorum table.
type panel struct {
	name   string
	render func(w, h int) block
}

// compose lays the whole screen out for the current size. It only reads
// the model: View and the mouse handler both call it.
func (m *Model) compose() frame {
	w, h := m.width, m.height
	f := frame{nodeAt: map[int]int32{}, shown: map[focus][2]int{}, whole: map[focus]bool{}}
	if w <= 0 || h <= 0 {
		f.lines = block{"kraftlab: starting…"}
		return f
	}
	st := m.st
	footer := m.footer(w, h)
	if m.opts.Lesson != nil && !(m.showAll && m.mode == modeNormal) {
		// The lesson's band sits right above the status line; the panels
		// lay themselves out in what is left. The full help takes its
		// place while it shows.
		f.band = min(lessonHeight(h), max(h-len(footer)-1, 0))
		footer = append(m.lesson.view(st, w, f.band), footer...)
	}
	var top block
	if m.hasView {
		top = m.header.view(st, &m.view, m.paused, w)
	} else {
		what := "the playground"
		if m.opts.ReadOnly {
			what = "the cluster"
		}
		top = block{st.Title.Render("kraftlab") + "  waiting for the first snapshot of " + what + "…"}
	}
	avail := h - len(top) - len(footer)
	if !m.hasView || avail < 2 {
		f.lines = m.finish(top, nil, footer, w, h)
		return f
	}
	v := &m.view

	tableH := min(1+len(v.Nodes), max(avail/2, min(3, avail)))
	if len(v.Nodes)+1 > tableH {
		tableH = max(tableH, min(avail-minEvents, 1+voters(v)+2)) // keep every voter if it can
	}
	peer := int32(-1)
	if m.mode == modePick {
		peer = m.pick.peer()
	}
	if m.showAll && m.mode == modeNormal {
		// The keys over the panels, where they have the room.
		f.lines = m.finish(top, m.keysOverlay(w), footer, w, h)
		return f
	}
	wide := w >= wideWidth && avail-tableH >= minEvents+8+1
	if !wide && (m.opts.Lesson != nil || m.output.open()) {
		f.lines = m.finish(top, m.pointed(v, w, avail, peer, &f, len(top)), footer, w, h)
		return f
	}
	table := m.quorum.view(st, v, w, max(tableH, 2), peer)
	body := block{}
	for i, id := range table.nodeAt {
		f.nodeAt[len(top)+i] = id
	}
	body = append(body, table.lines...)
	rest := avail - len(body)
	// The selected node's detail line, unless on a small screen it would
	// leave the commit picture too short for every voter.
	if rest >= minEvents+4 && (w >= wideWidth || rest-1-1-minEvents >= 1+voters(v)) {
		body = append(body, m.quorum.detail(st, v, w))
		rest--
	}

	panels := m.panels(v)
	events := panel{"Events", func(pw, ph int) block { return m.events.view(st, pw, ph) }}
	const tall = 200 // a height no panel fills: renders a panel whole, to measure it

	switch {
	case rest <= 0:
	case w >= wideWidth && rest >= minEvents+8:
		// The commit picture across the screen, so its bars are long;
		// under it the flow beside the links.
		commit := panels[0].render(w, min(len(panels[0].render(w, tall)), rest-minEvents-4))
		body = append(body, commit...)
		rest -= len(commit)
		fw := w / 2
		lw := w - fw - 2
		right := func(ph int) block {
			b := panels[2].render(lw, ph)
			if len(panels) > 3 && ph-len(b) >= 3 {
				b = append(b, "")
				b = append(b, panels[3].render(lw, ph-len(b))...)
			}
			return b
		}
		natural := max(len(panels[1].render(fw, tall)), len(right(tall)))
		midH := min(natural, rest-minEvents)
		mid := besides(2, []int{fw, lw}, panels[1].render(fw, midH), right(midH))
		body = append(body, mid...)
		rest -= len(mid)
		if m.output.open() {
			out := m.output.view(st, w, min(m.output.height(w), max(rest-minEvents, 3)))
			body = append(body, out...)
			rest -= len(out)
		}
		body = append(body, events.render(w, rest)...)
	default:
		natural := make([]int, len(panels))
		sum := 0
		for i, p := range panels {
			natural[i] = len(p.render(w, tall))
			sum += natural[i]
		}
		if rest >= sum+minEvents+2 {
			// Tall enough to stack them all.
			for _, p := range panels {
				body = append(body, p.render(w, rest)...)
			}
			body = append(body, events.render(w, rest-sum)...)
			break
		}
		tabs := panels
		tabH := 0
		for _, n := range natural {
			tabH = max(tabH, n)
		}
		if rest-1-tabH < minEvents {
			tabH = rest - 1 - minEvents
		}
		if tabH < 2 {
			// Too short for a panel and the log: the log is one of the tabs.
			tabs = append(append([]panel{}, panels...), events)
			tabH = rest - 1
		}
		f.tabbed, f.tabs = true, len(tabs)
		cur := tabs[m.tab%len(tabs)]
		body = append(body, m.tabBar(tabs, cur.name, w))
		body = append(body, cur.render(w, tabH)...)
		if cur.name != "Events" && tabs[len(tabs)-1].name != "Events" {
			body = append(body, events.render(w, avail-len(body))...)
		}
	}
	f.lines = m.finish(top, body, footer, w, h)
	return f
}

// dataView renders the data pane the pane key chose.
func (m *Model) dataView(st *Styles, v *view.View, w, h int) block {
	switch m.pane {
	case panePartitions:
		return m.partitions.view(st, v, w, h)
	case paneFetchers:
		return m.fetchers.view(st, v, w, h)
	case paneGroups:
		return m.groups.view(st, v, w, h)
	case paneMessages:
		return diagramView(st, v, w, h)
	}
	return m.brokers.view(st, v, w, h)
}

// tabbed reports whether the screen, as its panels are laid out now (the
// full help closed), shows one panel at a time, which tab switches.
func (m *Model) tabbed() bool {
	c := *m
	c.showAll = false
	return c.compose().tabbed
}

// tabCount is how many tabs the screen has now, the full help closed; 1
// when it is not tabbed.
func (m *Model) tabCount() int {
	c := *m
	c.showAll = false
	return max(c.compose().tabs, 1)
}

// keysOverlay is the full help: every key, in as many rows of columns as
// the width needs, then how the roles map onto Kafka's metrics.
func (m *Model) keysOverlay(w int) block {
	st := m.st
	keys := m.keys
	if !m.tabbed() {
		keys.Tab.SetEnabled(false) // every panel shows: tab would do nothing
	}
	out := block{section(st, "Addresses and keys (? closes)", w)}
	for _, l := range addressLines(&m.view, w) {
		out = append(out, st.Help.FullDesc.Render(l))
	}
	const gap = 2
	var row []block
	var widths []int
	used := 0
	flush := func() {
		if len(row) > 0 {
			out = append(out, besides(gap, widths, row...)...)
		}
		row, widths, used = nil, nil, 0
	}
	for _, group := range keys.FullHelp() {
		var col block
		kw := 0
		for _, b := range group {
			if b.Enabled() {
				kw = max(kw, lipgloss.Width(b.Help().Key))
			}
		}
		cw := 0
		for _, b := range group {
			if !b.Enabled() {
				continue
			}
			line := st.Help.FullKey.Render(fit(b.Help().Key, kw)) + " " + st.Help.FullDesc.Render(b.Help().Desc)
			col = append(col, line)
			cw = max(cw, lipgloss.Width(line))
		}
		cw = min(cw, w)
		if len(row) > 0 && used+gap+cw > w {
			flush()
		}
		if len(row) > 0 {
			used += gap
		}
		row, widths, used = append(row, col), append(widths, cw), used+cw
	}
	flush()
	brokers := brokersLegend
	if m.view.Attached != nil {
		brokers = attachedBrokersLegend
	}
	for _, legend := range []string{roleLegend, brokers, groupsLegend} {
		for _, l := range wrapWords(legend, w) {
			out = append(out, st.Help.FullDesc.Render(l))
		}
	}
	return out
}

// addressLines say where the playground is, for the user's own tools:
// the brokers' bootstrap addresses (with a kcat line where it fits) and
// the data folder. up's banner says so too, but the screen hides it.
func addressLines(v *view.View, w int) []string {
	var brokers []string
	for _, n := range v.Nodes {
		if n.Kind == view.KindBroker && n.Listener != "" {
			brokers = append(brokers, n.Listener)
		}
	}
	boot := "bootstrap  none: the playground has no brokers"
	if v.Sim != nil {
		boot = "bootstrap  none: a simulated playground has no sockets for clients (up --sim)"
	}
	if len(brokers) > 0 {
		boot = "bootstrap  " + strings.Join(brokers, ",")
		if cellWidth(boot) > w && len(brokers) > 1 {
			boot = fmt.Sprintf("bootstrap  %s (and %d more brokers)", brokers[0], len(brokers)-1)
		}
		if kcat := fmt.Sprintf("   e.g. kcat -b %s -L", brokers[0]); cellWidth(boot+kcat) <= w {
			boot += kcat
		}
	}
	lines := []string{clip(boot, w)}
	if v.DataDir != "" {
		lines = append(lines, clip("data       "+v.DataDir, w))
	}
	return lines
}

// voters counts the controllers.
func voters(v *view.View) int {
	n := 0
	for _, node := range v.Nodes {
		if node.Kind == view.KindController {
			n++
		}
	}
	return n
}

// tabBar names the tabs, the shown one marked.
func (m *Model) tabBar(tabs []panel, cur string, w int) string {
	parts := make([]string, len(tabs))
	for i, t := range tabs {
		if t.name == cur {
			parts[i] = m.st.Tab.Render("[" + t.name + "]")
		} else {
			parts[i] = " " + t.name + " "
		}
	}
	bar := strings.Join(parts, " ")
	for _, hint := range []string{"  (tab: next panel; a wider window shows them all)", "  (tab: next panel)"} {
		if lipgloss.Width(bar)+lipgloss.Width(hint) <= w {
			return bar + m.st.Dim.Render(hint)
		}
	}
	return clip(bar, w)
}

// footer is the status line and the help.
func (m *Model) footer(w, h int) block {
	st := m.st
	var line string
	var keys help.KeyMap = m.keys
	switch {
	case m.mode == modeConfirm && m.opts.OwnsCluster:
		line = st.Warn.Render("Quit and stop the playground? y quits, any other key stays")
	case m.mode == modeConfirm && m.opts.ReadOnly:
		line = st.Warn.Render("Quit? (the cluster keeps running: the screen only reads it) y quits, any other key stays")
	case m.mode == modeConfirm:
		line = st.Warn.Render("Quit? (the playground keeps running) y quits, any other key stays")
	case m.mode == modePick:
		line = m.pickPrompt()
		keys = pickKeys{m.keys}
	case m.mode == modeAsk:
		line = st.Warn.Render(m.ask.question)
	case m.mode == modeTopic:
		line = st.Warn.Render(topicPrompt(m.topic)) + m.form.View()
		return block{clip(line, w), m.status.view(st, w)}
	case m.mode == modeCommand:
		line = st.Warn.Render(commandPrompt) + " " + m.form.View()
		return block{clip(line, w), m.status.view(st, w)}
	case m.mode == modeLink:
		// The input first, so it shows whatever the width; what to type,
		// or why it was refused, under it.
		line = st.Warn.Render(fmt.Sprintf("link %d ↔ %d: ", m.pick.from, m.pick.peer())) + m.form.View()
		return block{clip(line, w), m.status.view(st, w)}
	case m.pullErr != nil && m.opts.ReadOnly:
		line = st.Err.Render("cannot read the cluster: " + m.pullErr.Error())
	case m.pullErr != nil:
		line = st.Err.Render("cannot read the playground: " + m.pullErr.Error())
	default:
		line = m.status.view(st, w)
	}
	switch {
	case m.mode != modeNormal:
	case m.queue.focused:
		keys = queueKeys{m.keys, m.view.Clock.Paused}
	case m.hasView && m.view.Clock.Paused:
		keys = pausedKeys{m.keys}
	}
	out := block{clip(line, w)}
	if m.showAll && m.mode == modeNormal {
		// The full help is over the panels; the bar says how to close it.
		return append(out, m.help.view(closeHelp{m.keys}, w)...)
	}
	hb := m.help.view(keys, w)
	if len(hb) > h/2 {
		hb = hb[:max(h/2, 1)]
	}
	return append(out, hb...)
}

// topicPrompt asks for the name of topic a.
func topicPrompt(a cluster.Action) string {
	if a.Kind == cluster.ActLoad {
		return loadPrompt(a)
	}
	return fmt.Sprintf("new topic, %d partitions, RF %d, name: ", a.Partitions, a.ReplicationFactor)
}

// pickPrompt shows the nodes to pick from, the current one bracketed.
func (m *Model) pickPrompt() string {
	p := m.pick
	verb := map[cluster.ActionKind]string{
		cluster.ActPartition: "partition node %d from",
		cluster.ActHeal:      "heal the links between node %d and",
		cluster.ActLink:      "set delay/loss on the link between node %d and",
	}[p.kind]
	var b strings.Builder
	b.WriteString(m.st.Warn.Render(fmt.Sprintf(verb, p.from)) + ": ")
	for i, id := range p.peers {
		if i == p.i {
			b.WriteString(m.st.Tab.Render(fmt.Sprintf("[%d]", id)))
		} else {
			fmt.Fprintf(&b, " %d ", id)
		}
	}
	return b.String()
}

// finish stacks the parts into exactly h lines of at most w cells: the
// body is cut or padded so the footer stays at the bottom.
func (m *Model) finish(top, body, footer block, w, h int) block {
	room := max(h-len(top)-len(footer), 0)
	if len(body) > room {
		body = body[:room]
	}
	out := make(block, 0, h)
	out = append(out, top...)
	out = append(out, body...)
	for len(out)+len(footer) < h {
		out = append(out, "")
	}
	out = append(out, footer...)
	if len(out) > h {
		out = out[:h]
	}
	for i, line := range out {
		if lipgloss.Width(line) > w {
			out[i] = clip(line, w)
		}
	}
	return out
}
