package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The Groups pane shows the consumer groups as their coordinators hold
// them. A group's coordinator is the broker leading the group's partition
// of __consumer_offsets, so killing it moves the group: the pane keeps
// the group in sight while no running broker serves it (the old
// coordinator down, the new leader still loading the partition) and
// marks the coordinator that took over.

// toggleGroups answers the groups key: it shows the Groups pane, or the
// pane it took the place of when it shows already.
func (m *Model) toggleGroups() {
	if m.togglePane(paneGroups) {
		m.status.set(levelInfo, fmt.Sprintf("showing %s; o shows the consumer groups", lowerFirst(m.pane.String())))
		return
	}
	hint := "showing the consumer groups; kill a coordinator to watch its groups move; "
	if m.opts.ReadOnly {
		hint = "showing the consumer groups; "
	}
	m.status.set(levelInfo, hint+"o goes back to "+lowerFirst(m.paneBefore.String()))
}

// movedShown is how long, in view time, a group whose coordinator moved
// keeps its mark: as long as a replica's truncation keeps its.
const movedShown = wentBackShown

// groupMemory is what the pane remembers of a group across views: the
// group as a coordinator last served it, and when its coordinator last
// changed and from which broker.
type groupMemory struct {
	last      view.Group
	moved     bool
	movedFrom int32
	movedAt   int64 // the view's timestamp, Unix milliseconds
}

// groupsModel is the groups pane: each group's state, generation,
// assignor and coordinator, its members with their partitions, and per
// partition the committed offset, the high watermark and the lag.
type groupsModel struct {
	groups map[string]groupMemory
}

// add remembers the groups of view v. A group no running broker serves
// now is kept while its partition of __consumer_offsets waits for a
// leader that serves it; it is forgotten once a loaded coordinator
// does not have it (it expired or was deleted).
func (m *groupsModel) add(v *view.View) {
	seen := make(map[string]groupMemory, len(v.Groups))
	for _, g := range v.Groups {
		mem, known := m.groups[g.ID]
		if known && mem.last.Coordinator != g.Coordinator {
			mem.moved, mem.movedFrom, mem.movedAt = true, mem.last.Coordinator, v.Timestamp
		}
		mem.last = g
		seen[g.ID] = mem
	}
	for id, mem := range m.groups {
		if _, ok := seen[id]; ok {
			continue
		}
		if _, wait := coordinatorGone(v, &mem.last); wait {
			seen[id] = mem
		}
	}
	m.groups = seen
}

// movedFrom says which broker group id's coordinator moved from, if it
// moved within movedShown before now.
func (m *groupsModel) movedFrom(id string, now int64) (int32, bool) {
	mem, ok := m.groups[id]
	if !ok || !mem.moved || now-mem.movedAt > movedShown {
		return 0, false
	}
	return mem.movedFrom, true
}

// goneCoordinator is why no running broker serves a group the pane
// remembers: a head line and a line that says what comes next.
type goneCoordinator struct {
	head, next string
	// loading says the group's new coordinator is on its way, not gone.
	loading bool
}

// coordinatorGone says why no running broker serves group g in view v,
// and whether that is a wait (the pane keeps the group) rather than the
// group's end: the partition of __consumer_offsets without a leader, its
// leader down and not yet fenced, or a new leader that does not serve it
// yet.
func coordinatorGone(v *view.View, g *view.Group) (gone goneCoordinator, wait bool) {
	p, ok := v.Partition(view.OffsetsTopic, g.OffsetsPartition)
	if !ok {
		return gone, false
	}
	part := offsetsPartitionName(g.OffsetsPartition)
	if p.Leader == view.NoLeader {
		return goneCoordinator{head: "no coordinator: " + part + " has no leader",
			next: "a broker coordinates the group again once one of its replicas leads"}, true
	}
	n, ok := v.Node(p.Leader)
	if !ok || n.State != view.StateRunning {
		state := "down"
		if ok {
			state = strings.ToLower(string(n.State))
		}
		return goneCoordinator{head: fmt.Sprintf("coordinator %d %s (%s)", p.Leader, state, part),
			next: fmt.Sprintf("another replica leads %s once the controller fences %d", part, p.Leader)}, true
	}
	shard, ok := coordinatorShard(v, p.Leader, g.OffsetsPartition)
	switch {
	case !ok:
		return goneCoordinator{head: fmt.Sprintf("coordinator %d (%s) not serving it yet", p.Leader, part),
			next: fmt.Sprintf("%d leads %s but has not taken it up", p.Leader, part), loading: true}, true
	case shard.Loading:
		return goneCoordinator{head: fmt.Sprintf("coordinator %d (%s) loading", p.Leader, part),
			next: fmt.Sprintf("the group shows once %d has read %s", p.Leader, part), loading: true}, true
	}
	return gone, false
}

// coordinatorShard is broker's coordinator shard for partition of
// __consumer_offsets, if it serves one.
func coordinatorShard(v *view.View, broker, partition int32) (view.CoordinatorShard, bool) {
	n, ok := v.Node(broker)
	if !ok || n.Broker == nil {
		return view.CoordinatorShard{}, false
	}
	for _, s := range n.Broker.Coordinating {
		if s.Partition == partition {
			return s, true
		}
	}
	return view.CoordinatorShard{}, false
}

// offsetsPartitionName is a partition of __consumer_offsets as Kafka
// names it.
func offsetsPartitionName(p int32) string {
	return fmt.Sprintf("%s-%d", view.OffsetsTopic, p)
}

// groupLevels are one group's lines at each level of detail the pane
// may show it at, the fullest first and a single line last.
type groupLevels [][]string

// Column widths of the committed offsets.
const (
	groupPartWidth   = 14
	groupOffsetWidth = 9
)

// view renders the pane in w cells and at most h lines. Each group, in
// order, shows at the fullest level that leaves a line for each group
// after it: with its members and committed offsets; with its members;
// its head and summary; its head alone. Where not even that fits, the
// last line says how many more groups there are. A line of which broker
// serves which partitions of __consumer_offsets follows where there is
// room.
func (m *groupsModel) view(st *Styles, v *view.View, w, h int) block {
	out := block{paneSection(st, "Groups: coordinator, members, committed offsets, lag", paneGroups, w)}
	if h < 2 {
		return out
	}
	shards := shardsLine(st, v)
	groups := m.levels(st, v)
	if len(groups) == 0 {
		why := "no consumer groups yet: kraftlab consume --group G TOPIC makes one"
		if v.Attached != nil {
			why = "no consumer groups"
		} else if len(v.Topics) == 0 || len(v.Topics) == 1 && v.Topics[0].Name == view.OffsetsTopic {
			why += " (T creates a topic)"
		}
		out = append(out, st.Dim.Render(clip(why, w)))
		if shards != "" && h > 2 {
			out = append(out, clip(shards, w))
		}
		return out
	}
	for i, levels := range groups {
		room, left := h-len(out), len(groups)-i
		if room < left && room <= 1 {
			out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more %s (a taller window shows them)", left, plural(int64(left), "group", "groups")), w)))
			return out
		}
		lines := levels[len(levels)-1]
		for _, l := range levels {
			if len(l) <= room-(left-1) {
				lines = l
				break
			}
		}
		for _, l := range lines {
			out = append(out, clip(l, w))
		}
	}
	if shards != "" && len(out) < h {
		out = append(out, clip(shards, w))
	}
	return out
}

// levels lays out every group, served or remembered, in the order of
// their ids.
func (m *groupsModel) levels(st *Styles, v *view.View) []groupLevels {
	ids := make([]string, 0, len(m.groups))
	for id := range m.groups {
		ids = append(ids, id)
	}
	for _, g := range v.Groups {
		if _, ok := m.groups[g.ID]; !ok {
			ids = append(ids, g.ID) // a view the pane did not add
		}
	}
	slices.Sort(ids)
	var out []groupLevels
	for _, id := range ids {
		if g, ok := v.Group(id); ok {
			out = append(out, m.servedLevels(st, v, g))
			continue
		}
		mem := m.groups[id]
		gone, wait := coordinatorGone(v, &mem.last)
		if !wait {
			continue
		}
		style := st.Err
		if gone.loading {
			style = st.Warn
		}
		head := st.Value.Render(id) + " " + style.Render(gone.head)
		out = append(out, groupLevels{{head, st.Dim.Render("  " + gone.next)}, {head}})
	}
	return out
}

// servedLevels are a served group's levels: its head line, its summary,
// its members and its committed offsets.
func (m *groupsModel) servedLevels(st *Styles, v *view.View, g *view.Group) groupLevels {
	head := m.groupHead(st, v, g)
	lag := groupLag(st, g)
	short := head
	if lag != "" {
		short += st.Dim.Render(" · ") + lag
	}
	var about []string
	if g.Generation >= 0 { // unknown over the wire
		about = append(about, fmt.Sprintf("gen %d", g.Generation))
	}
	if g.Protocol != "" {
		about = append(about, g.Protocol)
	}
	if len(about) > 0 {
		about = []string{strings.Join(about, " ")}
	}
	about = append(about, fmt.Sprintf("%d %s", len(g.Members), plural(int64(len(g.Members)), "member", "members")))
	summary := "  " + strings.Join(about, " · ")
	if lag != "" {
		summary += st.Dim.Render(" · ") + lag
	}
	brief := []string{head, summary}
	members := slices.Clone(brief)
	for _, mb := range g.Members {
		members = append(members, memberLine(st, g, &mb))
	}
	full := slices.Clone(members)
	if len(g.Offsets) == 0 {
		full = append(full, st.Dim.Render("  no committed offsets yet"))
	} else {
		full = append(full, st.Label.Render(fmt.Sprintf("  %-*s %*s %*s %*s", groupPartWidth, "PARTITION",
			groupOffsetWidth, "COMMITTED", groupOffsetWidth, "HWM", groupOffsetWidth, "LAG")))
		for _, o := range g.Offsets {
			full = append(full, offsetLine(st, &o))
		}
	}
	return groupLevels{full, members, brief, {short}}
}

// groupLag is the group's total lag behind the high watermarks, "" when
// it has committed nothing.
func groupLag(st *Styles, g *view.Group) string {
	if len(g.Offsets) == 0 {
		return ""
	}
	lag, known := g.TotalLag()
	text := "lag " + offset(lag)
	if !known {
		text += "+?" // some partition's high watermark is unknown
	}
	return lagStyle(st, lag, known).Render(text)
}

// groupHead is a group's head line: its id and state, and its
// coordinator with the partition of __consumer_offsets that makes it the
// coordinator, marked while that shard loads and just after the
// coordinator moved.
func (m *groupsModel) groupHead(st *Styles, v *view.View, g *view.Group) string {
	var b strings.Builder
	b.WriteString(st.Value.Render(g.ID) + " " + st.GroupState(g.State).Render(string(g.State)))
	fmt.Fprintf(&b, " · coordinator %d", g.Coordinator)
	if g.OffsetsPartition >= 0 {
		fmt.Fprintf(&b, " (%s)", offsetsPartitionName(g.OffsetsPartition))
	}
	if s, ok := coordinatorShard(v, g.Coordinator, g.OffsetsPartition); ok && s.Loading {
		b.WriteString(st.Warn.Render(" loading"))
	}
	if from, ok := m.movedFrom(g.ID, v.Timestamp); ok {
		b.WriteString(st.Warn.Render(fmt.Sprintf(" ↻ was %d", from)))
	}
	return b.String()
}

// memberLine is one member: its client id and host, whether it leads the
// group (it computes the assignment), and its partitions.
func memberLine(st *Styles, g *view.Group, mb *view.GroupMember) string {
	who := mb.ClientID
	if who == "" {
		who = mb.MemberID
	}
	if mb.InstanceID != "" {
		who += " (static " + mb.InstanceID + ")"
	}
	if mb.ClientHost != "" {
		who += " " + st.Dim.Render(strings.TrimPrefix(mb.ClientHost, "/"))
	}
	if mb.MemberID == g.Leader {
		who += st.Dim.Render(" leader")
	}
	parts := make([]string, 0, len(mb.Assigned))
	for _, tp := range mb.Assigned {
		parts = append(parts, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
	}
	assigned := strings.Join(parts, " ")
	if assigned == "" {
		assigned = st.Dim.Render("no partitions")
	}
	return "  member " + who + ": " + assigned
}

// offsetLine is one committed offset with the partition's high
// watermark and the lag between them.
func offsetLine(st *Styles, o *view.GroupOffset) string {
	lag := lagStyle(st, o.Lag, o.Lag >= 0).Render(offset(o.Lag))
	return fmt.Sprintf("  %s %*s %*s %s", fit(fmt.Sprintf("%s-%d", o.Topic, o.Partition), groupPartWidth),
		groupOffsetWidth, offset(o.Committed), groupOffsetWidth, offset(o.HighWatermark), fitLeft(lag, groupOffsetWidth))
}

// lagStyle colours a lag: none caught up, some behind, unknown dim.
func lagStyle(st *Styles, lag int64, known bool) lipgloss.Style {
	switch {
	case !known:
		return st.Dim
	case lag > 0:
		return st.Warn
	}
	return st.OK
}

// shardsLine says which broker serves which partitions of
// __consumer_offsets, and which of them it still loads; "" when no
// broker serves any.
func shardsLine(st *Styles, v *view.View) string {
	var parts []string
	for _, n := range v.Nodes {
		if n.Broker == nil || len(n.Broker.Coordinating) == 0 {
			continue
		}
		var ps []string
		for _, s := range n.Broker.Coordinating {
			p := fmt.Sprint(s.Partition)
			if s.Loading {
				p = st.Warn.Render(p + " loading")
			}
			ps = append(ps, p)
		}
		parts = append(parts, fmt.Sprintf("%d: %s", n.ID, strings.Join(ps, ",")))
	}
	if len(parts) == 0 {
		return ""
	}
	return st.Dim.Render("offsets partitions served: ") + strings.Join(parts, st.Dim.Render(" · "))
}
