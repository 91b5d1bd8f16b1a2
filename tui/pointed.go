package tui

import "github.com/kraftlab/kraftlab/cluster/view"

// The pointed layout: on a screen too narrow for the wide layout while a
// lesson or the output pane is open, the place the lesson (or the user)
// points at is shown whole, however short the screen: a lesson that says
// "on screen: the Commit panel" must show every voter's bar, not one of
// them and a note that a taller window would show the rest. The other
// places share what is left, in order: the panel the lesson points at,
// the output pane, the quorum table, the tabbed panel, the events.

// minWhole is the fewest lines a place pointed at gets: a title and two
// rows, even where it would show more.
const minWhole = 3

// part is one place of the pointed layout.
type part struct {
	place focus
	// natural is the lines it shows whole; least the fewest it is drawn
	// in at all.
	natural, least int
	h              int
	render         func(w, h int) block
}

// pointed lays out the body (avail lines under the header) of the
// pointed layout, noting in f which places show and which show whole.
func (m *Model) pointed(v *view.View, w, avail int, peer int32, f *frame, topLen int) block {
	st := m.st
	const tall = 200
	panels := m.panels(v)
	events := panel{"Events", func(pw, ph int) block { return m.events.view(st, pw, ph) }}
	tabs := append(append([]panel{}, panels...), events)
	cur := m.tab % len(tabs)
	tabPanel := tabs[cur]
	tabPlace := tabFocus(cur, m.pane, m.queueShown())

	table := &part{place: focusQuorum, natural: 1 + len(v.Nodes), least: 3,
		render: func(pw, ph int) block { return m.quorum.view(st, v, pw, ph, peer).lines }}
	bar := true
	tab := &part{place: tabPlace, natural: 1 + len(tabPanel.render(w, tall)), least: 3,
		render: func(pw, ph int) block {
			if !bar {
				return tabPanel.render(pw, ph)
			}
			return append(block{m.tabBar(tabs, tabPanel.name, pw)}, tabPanel.render(pw, ph-1)...)
		}}
	// Whole is every row: the commit picture's HWM marker line and the
	// partitions' legend are niceties, drawn where there is room.
	whole := tab.natural
	switch {
	case tabPlace == focusCommit && v.ZooKeeper != nil:
		// The ZooKeeper panel in the commit picture's place: a few
		// lines, every one of them wanted.
	case tabPlace == focusCommit:
		whole = min(tab.natural, 1+1+voters(v))
	case tabPlace == focusPartitions:
		whole = tab.natural - len(partitionsLegendLines(v, w))
	}
	out := &part{place: focusOutput, natural: m.output.height(w), least: min(m.output.height(w), 2),
		render: func(pw, ph int) block { return m.output.view(st, pw, ph) }}
	log := &part{place: focusEvents, natural: tall, least: minEvents,
		render: func(pw, ph int) block { return events.render(pw, ph) }}
	if tabPlace == focusEvents {
		log.natural, log.least = 0, 0 // the tab shows them
	}

	// The order they are given room in: the place pointed at first.
	order := []*part{tab, out, table, log}
	point := m.pointedAt()
	var pointed *part
	for i, p := range order {
		if p.place == point && p.natural > 0 {
			pointed = p
			order = append(append([]*part{p}, order[:i]...), order[i+1:]...)
			p.least = min(max(p.least, minWhole), p.natural)
			switch p {
			case tab:
				p.least = whole
			case log:
			default:
				p.least = p.natural
			}
			break
		}
	}
	room := avail
	for i, p := range order {
		switch {
		case i == 0:
			p.h = min(p.least, room) // the place pointed at, whatever is left out
		case p == out && p.least > room && pointed == tab && tab.h > 1:
			// The tab bar gives its line to the output: the panel's own
			// title says what it is.
			bar = false
			tab.h--
			room++
			if p.least <= room {
				p.h = p.least
			}
		case p.least > 0 && p.least <= room:
			p.h = p.least
		}
		room -= p.h
	}
	for _, p := range order {
		if p.h == 0 && p != order[0] {
			continue // it did not get its least: it stays hidden
		}
		grow := min(p.natural-p.h, room)
		switch {
		case p == log:
			grow = room
		case p == tab && p == pointed:
			grow = min(whole-p.h, room) // its niceties come last
		}
		if grow > 0 && (p.h > 0 || p.least <= grow) {
			p.h += grow
			room -= grow
		}
	}
	if pointed == tab && log.h == 0 && room > 0 {
		tab.h += min(tab.natural-tab.h, room)
	}
	var body block
	for _, p := range []*part{table, tab, out, log} {
		if p.h <= 0 {
			continue
		}
		lines := p.render(w, p.h)
		if len(lines) > p.h {
			lines = lines[:p.h]
		}
		if p == table {
			for i, id := range m.quorum.view(st, v, w, p.h, peer).nodeAt {
				f.nodeAt[topLen+len(body)+i] = id
			}
		}
		f.shown[p.place] = [2]int{topLen + len(body), len(lines)}
		f.whole[p.place] = p.h >= p.natural || (p == log && p.h >= minEvents) || (p == tab && p.h >= whole-btoi(!bar))
		body = append(body, lines...)
	}
	f.tabbed, f.tabs = true, len(tabs)
	return body
}

// panels are the panels that share one place on a small screen. The
// held messages' queue takes the flow's place while it shows.
func (m *Model) panels(v *view.View) []panel {
	st := m.st
	flow := panel{"Flow", func(pw, ph int) block { return m.flow.view(st, v, pw, ph) }}
	if m.queueShown() {
		flow = panel{"Queue", func(pw, ph int) block { return m.queueView(st, v, pw, ph) }}
	}
	commit := panel{"Commit", func(pw, ph int) block { return m.commit.view(st, v, pw, ph) }}
	if v.ZooKeeper != nil {
		// The ZooKeeper era has no metadata log to commit: its
		// controller and its pushes take the place.
		commit = panel{"ZooKeeper", func(pw, ph int) block { return zooKeeperView(st, v, pw, ph) }}
	}
	return []panel{
		commit,
		flow,
		{"Links", func(pw, ph int) block { return m.links.view(st, v, pw, ph) }},
		{m.pane.String(), func(pw, ph int) block { return m.dataView(st, v, pw, ph) }},
	}
}

// tabFocus is the place tab i shows, the data pane being p and queue
// whether the held messages' queue has the flow's place.
func tabFocus(i int, p dataPane, queue bool) focus {
	switch i {
	case 0:
		return focusCommit
	case flowTab:
		if queue {
			return focusQueue
		}
	case dataTab:
		return map[dataPane]focus{paneBrokers: focusBrokers, panePartitions: focusPartitions, paneFetchers: focusFetchers, paneGroups: focusGroups, paneMessages: focusMessages}[p]
	case dataTab + 1:
		return focusEvents
	}
	return focusNone
}

// pointedAt is the place the layout keeps whole: the output pane while
// the user looks at a command's output or an election's story, else the
// place the lesson's latest line points at.
func (m *Model) pointedAt() focus {
	if m.focus != focusNone {
		return m.focus
	}
	return m.lesson.focus
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
