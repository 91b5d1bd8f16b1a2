package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// statePartitioned styles a running node some of whose links are down.
const statePartitioned view.State = "partitioned"

// quorumModel is the quorum table: one row per voter and observer, and
// the selection the node actions act on.
type quorumModel struct {
	// selected is the selected node's ID, kept across views; -1 before the
	// first view.
	selected int32
}

// quorumRow is one node as the table shows it, every cell already text.
type quorumRow struct {
	id                                 int32
	role                               string
	roleStyle                          view.Role
	epoch, follows, leo, saw, lag, hwm string
	lastFetch                          string
	snapshot, logStart                 string
	state                              string
	// stateBrief is state in a word ("partitioned"), for a table too
	// narrow for the peers; the detail line names them.
	stateBrief string
	stateStyle view.State
	// brokerEpoch is a ZooKeeper-era broker's epoch (its registration's
	// czxid), "-" when it has none.
	brokerEpoch string
}

// quorumColumn is a column of the table; columns with a lower drop rank
// go first when the screen is narrow.
type quorumColumn struct {
	title string
	right bool
	drop  int // 0: never dropped
	cell  func(r *quorumRow) string
	// brief, if set, is the cell in fewer words, shown where the full
	// one does not fit; the table makes room for the brief one only.
	brief func(r *quorumRow) string
}

var quorumColumns = []quorumColumn{
	{"NODE", true, 0, func(r *quorumRow) string { return fmt.Sprint(r.id) }, nil},
	{"ROLE", false, 0, func(r *quorumRow) string { return r.role }, nil},
	{"EPOCH", true, 0, func(r *quorumRow) string { return r.epoch }, nil},
	{"FOLLOWS", true, 5, func(r *quorumRow) string { return r.follows }, nil},
	{"LEO", true, 0, func(r *quorumRow) string { return r.leo }, nil},
	{"LEADER-SAW", true, 3, func(r *quorumRow) string { return r.saw }, nil},
	{"LAG", true, 0, func(r *quorumRow) string { return r.lag }, nil},
	{"HWM", true, 0, func(r *quorumRow) string { return r.hwm }, nil},
	{"LAST-FETCH", true, 4, func(r *quorumRow) string { return r.lastFetch }, nil},
	{"SNAPSHOT", true, 2, func(r *quorumRow) string { return r.snapshot }, nil},
	{"LOG-START", true, 1, func(r *quorumRow) string { return r.logStart }, nil},
	{"STATE", false, 0, func(r *quorumRow) string { return r.state }, func(r *quorumRow) string { return r.stateBrief }},
}

// zkNodeColumns are the table's columns in zk mode, which has no
// metadata quorum: each broker's role (the one holding /controller) and
// its session's broker epoch.
var zkNodeColumns = []quorumColumn{
	quorumColumns[0],
	quorumColumns[1],
	{"BROKER-EPOCH", true, 0, func(r *quorumRow) string { return r.brokerEpoch }, nil},
	quorumColumns[len(quorumColumns)-1],
}

// quorumRows turns the view into table rows.
func quorumRows(v *view.View) []quorumRow {
	rows := make([]quorumRow, 0, len(v.Nodes))
	for i := range v.Nodes {
		n := &v.Nodes[i]
		r := quorumRow{
			id:       n.ID,
			role:     string(n.Role),
			epoch:    epochCell(v, n),
			leo:      offset(n.LogEndOffset),
			hwm:      offset(n.HighWatermark),
			logStart: offset(n.LogStartOffset),
			saw:      "-", lag: "-", lastFetch: "-", snapshot: "-",
			follows:     follows(v, n),
			brokerEpoch: "-",
		}
		if n.Broker != nil && n.Broker.BrokerEpoch >= 0 {
			r.brokerEpoch = fmt.Sprint(n.Broker.BrokerEpoch)
		}
		r.roleStyle = n.Role
		if n.Role == "" {
			r.role = "-"
		}
		if n.LatestSnapshot != nil {
			r.snapshot = fmt.Sprintf("%d@%d", n.LatestSnapshot.EndOffset, n.LatestSnapshot.Epoch)
		}
		if rs, ok := v.Replica(n.ID); ok {
			r.lag = lagCell(v, n, rs)
			if n.ID != v.LeaderID {
				r.saw = offset(rs.LogEndOffset)
				if rs.LogEndOffset < 0 {
					r.saw = "never"
				}
				r.lastFetch = since(rs.LastFetchTimestamp, v.Timestamp)
			}
		}
		r.state, r.stateStyle = nodeState(v, n)
		r.stateBrief = r.state
		if r.stateStyle == statePartitioned {
			r.stateBrief = string(statePartitioned)
		}
		if n.DiskDelayMs > 0 {
			// A slow disk leaves the node's state as it is; the cell says
			// what makes it lag.
			r.state += fmt.Sprintf(", disk +%dms", n.DiskDelayMs)
			r.stateBrief += ", slow disk"
		}
		rows = append(rows, r)
	}
	return rows
}

// follows is the leader a node knows, "down" after it when that leader's
// process is not running (killed, stopped, failed) or it is isolated: the
// node still follows it until its fetch timeout passes.
func follows(v *view.View, n *view.Node) string {
	if !n.Live() || n.LeaderID < 0 {
		return "-"
	}
	if n.LeaderID == n.ID {
		return "self"
	}
	if l, ok := v.Node(n.LeaderID); ok && l.State != view.StateRunning {
		return fmt.Sprintf("%d down", n.LeaderID)
	}
	return fmt.Sprint(n.LeaderID)
}

// leaderLEO is the log end offset of the view's leader, -1 without one.
func leaderLEO(v *view.View) int64 {
	if l, ok := v.Leader(); ok {
		return l.LogEndOffset
	}
	return -1
}

// lagCell is a replica's lag as the leader knows it. A replica the leader
// has not heard from has no known lag (Kafka's output would print the
// leader's log end + 1): "-", and the LEADER-SAW and LAST-FETCH cells say
// never. A node whose own log runs past the leader's (an old leader cut
// off while it appended) has a tail no majority holds: "+N uncommitted".
func lagCell(v *view.View, n *view.Node, rs view.Replica) string {
	if n.ID == v.LeaderID {
		return fmt.Sprint(rs.Lag)
	}
	// A follower of this leader cannot be ahead of it: its offset past the
	// leader's is the skew of two statuses published a moment apart.
	follower := n.LeaderID == v.LeaderID && n.Epoch == v.LeaderEpoch
	if lleo := leaderLEO(v); lleo >= 0 && n.LogEndOffset > lleo && !follower {
		return fmt.Sprintf("+%d uncommitted", n.LogEndOffset-lleo)
	}
	if rs.LogEndOffset < 0 {
		return "-"
	}
	return fmt.Sprint(rs.Lag)
}

// nodeState spells out a node's state, naming the peers a running node is
// partitioned from (→N: what it sends N is dropped; ←N: what N sends it is
// dropped), and the style that goes with it.
func nodeState(v *view.View, n *view.Node) (text string, style view.State) {
	if n.State != view.StateRunning {
		return string(n.State), n.State
	}
	both, out, in := v.LinkCuts(n.ID)
	if len(both)+len(out)+len(in) == 0 {
		return string(n.State), n.State
	}
	var parts []string
	for _, id := range both {
		parts = append(parts, fmt.Sprint(id))
	}
	for _, id := range out {
		parts = append(parts, fmt.Sprintf("→%d", id))
	}
	for _, id := range in {
		parts = append(parts, fmt.Sprintf("←%d", id))
	}
	return "partitioned from " + strings.Join(parts, " "), statePartitioned
}

// selectedIndex returns the selected row, selecting the first node when
// the selected one is gone (on a copy, when called from a view).
func (q *quorumModel) selectedIndex(v *view.View) int {
	i := slices.IndexFunc(v.Nodes, func(n view.Node) bool { return n.ID == q.selected })
	if i < 0 && len(v.Nodes) > 0 {
		q.selected = v.Nodes[0].ID
		return 0
	}
	return i
}

// move moves the selection by delta rows, stopping at the ends.
func (q *quorumModel) move(v *view.View, delta int) {
	if len(v.Nodes) == 0 {
		return
	}
	i := min(max(q.selectedIndex(v)+delta, 0), len(v.Nodes)-1)
	q.selected = v.Nodes[i].ID
}

// quorumTable is the table as rendered, with which screen line holds
// which node, for the mouse.
type quorumTable struct {
	lines block
	// nodeAt maps a line of lines to the node it shows.
	nodeAt  map[int]int32
	dropped []string // the titles of the columns left out for width
}

// view renders the table in at most w cells and h lines (h >= 2). peer is
// the node being picked as a link's second end, or -1.
func (q quorumModel) view(st *Styles, v *view.View, w, h int, peer int32) quorumTable {
	rows := quorumRows(v)
	all := quorumColumns
	if v.ZooKeeper != nil {
		all = zkNodeColumns
	}
	cols, widths, dropped := fitColumns(all, rows, w)
	t := quorumTable{nodeAt: map[int]int32{}, dropped: dropped}

	var head strings.Builder
	head.WriteString("  ")
	for i, c := range cols {
		if i > 0 {
			head.WriteString(" ")
		}
		if c.right {
			head.WriteString(fitLeft(c.title, widths[i]))
		} else {
			head.WriteString(fit(c.title, widths[i]))
		}
	}
	t.lines = append(t.lines, st.Label.Render(clip(strings.TrimRight(head.String(), " "), w)))

	room := h - 1
	sel := max(q.selectedIndex(v), 0)
	top := 0
	if len(rows) > room {
		// The selection stays in the middle of what is shown, so the
		// rows around it show too.
		room = max(room-1, 1) // a line says how many rows are hidden
		top = min(max(sel-room/2, 0), len(rows)-room)
	}
	end := min(top+room, len(rows))
	for i := top; i < end; i++ {
		r := &rows[i]
		plain := r.id == q.selected || r.id == peer
		var b strings.Builder
		switch {
		case r.id == q.selected:
			b.WriteString("▶ ")
		case r.id == peer:
			b.WriteString("◆ ")
		default:
			b.WriteString("  ")
		}
		for j, c := range cols {
			if j > 0 {
				b.WriteString(" ")
			}
			text := c.cell(r)
			switch {
			case c.right:
				text = fitLeft(text, widths[j])
			case j == len(cols)-1:
				if c.brief != nil && cellWidth(text) > widths[j] {
					text = c.brief(r)
				}
				text = clip(text, widths[j]) // no padding after the last cell
			default:
				text = fit(text, widths[j])
			}
			if !plain {
				switch c.title {
				case "ROLE":
					text = st.Role(r.roleStyle).Render(text)
				case "STATE":
					text = st.State(r.stateStyle).Render(text)
				}
			}
			b.WriteString(text)
		}
		line := clip(strings.TrimRight(b.String(), " "), w)
		switch {
		case r.id == q.selected:
			line = st.Selected.Render(fit(line, w))
		case r.id == peer:
			line = st.Peer.Render(line)
		}
		t.nodeAt[len(t.lines)] = r.id
		t.lines = append(t.lines, line)
	}
	if hidden := len(rows) - (end - top); hidden > 0 {
		t.lines = append(t.lines, st.Dim.Render(clip(fmt.Sprintf("  … %d more nodes (%d above, %d below): j/k to scroll", hidden, top, len(rows)-end), w)))
	}
	return t
}

// fitColumns picks, of columns, those that fit in w cells, dropping the
// least needed first; the last column (STATE) takes what is left.
func fitColumns(columns []quorumColumn, rows []quorumRow, w int) ([]quorumColumn, []int, []string) {
	natural := make([]int, len(columns))
	for i, c := range columns {
		natural[i] = len(c.title)
		if c.title == "ROLE" {
			natural[i] = len(view.RoleProspective) // the longest: the column never jumps
		}
		cell := c.cell
		if c.brief != nil {
			cell = c.brief
		}
		for j := range rows {
			natural[i] = max(natural[i], cellWidth(cell(&rows[j])))
		}
	}
	keep := make([]bool, len(columns))
	for i := range keep {
		keep[i] = true
	}
	total := func() int {
		t := 2 // the selection marker
		for i := range columns {
			if keep[i] {
				t += natural[i] + 1
			}
		}
		return t - 1
	}
	for rank := 1; total() > w; rank++ {
		i := slices.IndexFunc(columns, func(c quorumColumn) bool { return c.drop == rank })
		if i < 0 {
			break
		}
		keep[i] = false
	}
	var cols []quorumColumn
	var widths []int
	var dropped []string
	for i, c := range columns {
		if !keep[i] {
			dropped = append(dropped, c.title)
			continue
		}
		cols = append(cols, c)
		widths = append(widths, natural[i])
	}
	// A column with a brief form takes what room is left for its full
	// one.
	if last := len(cols) - 1; last >= 0 && cols[last].brief != nil {
		full := 0
		for j := range rows {
			full = max(full, cellWidth(cols[last].cell(&rows[j])))
		}
		widths[last] = max(widths[last], min(full, w-total()+widths[last]))
	}
	return cols, widths, dropped
}

// cellWidth is the width of plain cell text.
func cellWidth(s string) int { return len([]rune(s)) }

// detail spells out the selected node in one line: what the table has no
// room for, and what it has no column for.
func (q quorumModel) detail(st *Styles, v *view.View, w int) string {
	i := q.selectedIndex(v)
	if i < 0 {
		return ""
	}
	n := &v.Nodes[i]
	parts := []string{fmt.Sprintf("node %d: %s %s", n.ID, n.Kind, n.Listener)}
	if n.State == view.StateFailed {
		parts = append(parts, "failed: "+n.Error)
	}
	// Early in the line, where a narrow screen still shows them: the
	// table's STATE may say only "partitioned". An isolated node's STATE
	// says it lost every peer.
	var both, out, in []int32
	if n.State != view.StateIsolated {
		both, out, in = v.LinkCuts(n.ID)
	}
	if len(both) > 0 {
		parts = append(parts, "cut off from "+ids(both))
	}
	if len(out) > 0 {
		parts = append(parts, "cannot send to "+ids(out))
	}
	if len(in) > 0 {
		parts = append(parts, "cannot hear "+ids(in))
	}
	if s := n.Strangers; s != nil {
		var total int64
		for _, c := range s.Unauthorized {
			total += c
		}
		parts = append(parts, fmt.Sprintf("refused strangers: %d failed logins, %d cluster requests", s.AuthFailures, total))
	}
	if r := n.Refusals; r != nil {
		s := fmt.Sprintf("refused unsafe news %d× (latest: %s)", r.Count, r.Last)
		if r.KafkaStops {
			s += "; Kafka would stop here: W wipes it"
		}
		parts = append(parts, s)
	}
	if v.ZooKeeper != nil {
		// The ZooKeeper era: a broker's session and what it was pushed.
		if b := n.Broker; b != nil && b.BrokerEpoch >= 0 {
			parts = append(parts, fmt.Sprintf("registered in ZooKeeper, broker epoch %d (its znode's czxid)", b.BrokerEpoch))
		}
		if n.Role == view.RoleZkController {
			parts = append(parts, "holds /controller: reads ZooKeeper, pushes LeaderAndIsr and UpdateMetadata")
		}
		return st.Dim.Render(clip(strings.Join(parts, " · "), w))
	}
	if v.Attached != nil {
		if s := replicaNote(v, n); s != "" {
			parts = append(parts, s)
		}
		parts = append(parts, "read over the wire: a node's own epoch, vote, log and snapshots are not")
		return st.Dim.Render(clip(strings.Join(parts, " · "), w))
	}
	if n.Live() {
		parts = append(parts, "knows leader "+idOrNone(n.LeaderID), "voted "+idOrNone(n.VotedID))
	}
	snap := "none"
	if n.LatestSnapshot != nil {
		snap = fmt.Sprintf("%d@%d", n.LatestSnapshot.EndOffset, n.LatestSnapshot.Epoch)
	}
	if s := replicaNote(v, n); s != "" {
		parts = append(parts, s)
	}
	parts = append(parts, "snapshot "+snap, fmt.Sprintf("log start %d", n.LogStartOffset))
	if n.Truncations > 0 || n.SnapshotsLoaded > 0 {
		parts = append(parts, fmt.Sprintf("truncations %d", n.Truncations), fmt.Sprintf("snapshots loaded %d", n.SnapshotsLoaded))
	}
	return st.Dim.Render(clip(strings.Join(parts, " · "), w))
}

// replicaNote says what the leader knows of a node that is not it: its
// last reported offset and when, or that it never heard from it in its
// epoch, with the node's own log end beside the leader's.
func replicaNote(v *view.View, n *view.Node) string {
	l, ok := v.Leader()
	if !ok || n.ID == l.ID {
		return ""
	}
	rs, ok := v.Replica(n.ID)
	if !ok {
		return ""
	}
	var s string
	if rs.LogEndOffset < 0 {
		s = fmt.Sprintf("leader %d has not heard from it in epoch %d", l.ID, l.Epoch)
	} else {
		s = fmt.Sprintf("last reported offset %d to leader %d, %s ago", rs.LogEndOffset, l.ID, since(rs.LastFetchTimestamp, v.Timestamp))
	}
	follower := n.LeaderID == l.ID && n.Epoch == l.Epoch
	switch own := n.LogEndOffset; {
	case own > l.LogEndOffset && !follower:
		s += fmt.Sprintf("; its log ends at %d, %d past the leader's %d: uncommitted", own, own-l.LogEndOffset, l.LogEndOffset)
	case own >= 0 && rs.LogEndOffset < 0:
		s += fmt.Sprintf("; its own log ends at %d, the leader's at %d", own, l.LogEndOffset)
	}
	return s
}

func idOrNone(id int32) string {
	if id < 0 {
		return "none"
	}
	return fmt.Sprint(id)
}

func ids(list []int32) string {
	s := make([]string, len(list))
	for i, id := range list {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// epochCell is a node's quorum epoch; a broker of the ZooKeeper era has
// none.
func epochCell(v *view.View, n *view.Node) string {
	if v.ZooKeeper != nil || n.Epoch < 0 {
		return "-"
	}
	return fmt.Sprint(n.Epoch)
}
