package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// wentBackShown is how long, in view time, a replica whose log end went
// back keeps its mark: long enough to be seen after the truncation, short
// enough that the mark means "just now".
const wentBackShown = 10_000 // milliseconds

// replicaKey names one replica of one partition. The topic goes by its
// id: a topic deleted and created again under its name starts new logs,
// which must not read as going back.
type replicaKey struct {
	topicID   string
	partition int32
	broker    int32
}

// replicaMemory is what the screen remembers of a replica across views:
// its last known log end, and when it last went back and from where. The
// view only says where a log ends now; a truncation is a log end lower
// than a previous one.
type replicaMemory struct {
	logEnd                   int64
	wentBack                 bool
	wentBackFrom, wentBackTo int64
	wentBackAt               int64 // the view's timestamp, Unix milliseconds
}

// partitionsModel is the partitions table: each partition's leader epoch
// and high watermark, and each replica as its broker holds it (its log
// end, how far behind the leader's it is, whether it is in the ISR, and
// whether its log end just went back).
type partitionsModel struct {
	replicas map[replicaKey]replicaMemory
}

// add remembers the replicas' log ends of view v. A replica its broker
// does not host keeps its last known log end, so that one that comes
// back shorter (a wiped disk, a truncation at restart) shows as going
// back too; a replica no longer in the view (its topic deleted, the
// replica moved) is forgotten.
func (m *partitionsModel) add(v *view.View) {
	seen := make(map[replicaKey]replicaMemory, len(m.replicas))
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			for _, r := range p.ReplicaStates {
				k := replicaKey{t.ID, p.Partition, r.Broker}
				mem, known := m.replicas[k]
				if !known && (!r.Hosted || r.LogEndOffset < 0) {
					continue
				}
				if r.Hosted && r.LogEndOffset >= 0 {
					if known && r.LogEndOffset < mem.logEnd {
						mem.wentBack, mem.wentBackFrom, mem.wentBackTo, mem.wentBackAt = true, mem.logEnd, r.LogEndOffset, v.Timestamp
					}
					mem.logEnd = r.LogEndOffset
				}
				seen[k] = mem
			}
		}
	}
	m.replicas = seen
}

// wentBack says from where to where replica k's log end went back, if it
// did within wentBackShown before now.
func (m *partitionsModel) wentBack(k replicaKey, now int64) (from, to int64, ok bool) {
	mem, seen := m.replicas[k]
	if !seen || !mem.wentBack || now-mem.wentBackAt > wentBackShown {
		return 0, 0, false
	}
	return mem.wentBackFrom, mem.wentBackTo, true
}

// Column widths of the partitions table.
const (
	partNameWidth = 10
	partCellWidth = 18
)

// view renders the table in w cells and at most h lines.
func (m *partitionsModel) view(st *Styles, v *view.View, w, h int) block {
	out := block{paneSection(st, "Partitions: ISR, high watermark, each replica's log end", panePartitions, w)}
	if h < 2 {
		return out
	}
	if len(v.Topics) == 0 {
		return append(out, st.Dim.Render(clip("no topics yet — press T to create one", w)))
	}
	var rows block
	for ti, t := range v.Topics {
		if len(t.Partitions) == 0 {
			rows = append(rows, st.Dim.Render(clip(fmt.Sprintf("topic %s: no partitions", t.Name), w)))
		}
		for i := range t.Partitions {
			rows = append(rows, clip(m.partitionLine(st, v, &v.Topics[ti], &t.Partitions[i]), w))
		}
	}
	out = append(out, st.Label.Render(clip(fmt.Sprintf("%-*s %5s %7s %s", partNameWidth, "PARTITION", "EPOCH", "HWM", "REPLICAS: log end, behind the leader by"), w)))
	room := h - len(out)
	legend := partitionsLegendLines(v, w)
	if room >= len(rows)+len(legend) {
		room -= len(legend) // the legend fits under the rows
	} else {
		legend = nil
	}
	for i, r := range rows {
		if i == room-1 && len(rows) > room {
			out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more partitions (a taller window shows them)", len(rows)-i), w)))
			break
		}
		if i >= room {
			break
		}
		out = append(out, r)
	}
	for _, l := range legend {
		out = append(out, st.Dim.Render(l))
	}
	return out
}

// partitionsLegend explains every mark a replica cell may carry, an item
// at a time so that a narrow pane wraps it between items.
var partitionsLegend = []string{
	"* leader", "✗ out of the ISR", "= caught up", "-N behind", "↓A→B truncated from A to B",
}

// elrLegend explains the eligible leader replicas' marks (KIP-966), shown
// once some partition has them.
var elrLegend = []string{"◇ eligible leader (ELR)", "^ last known leader"}

// partitionsLegendLines is the legend under the partitions at width w: the
// ELR marks join it once some partition has them, which may take it to a
// second line. The layout leaves it out where room is short.
func partitionsLegendLines(v *view.View, w int) []string {
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if len(p.Elr) > 0 || len(p.LastKnownElr) > 0 {
				return flow(append(slices.Clone(partitionsLegend), elrLegend...), w, 2)
			}
		}
	}
	return flow(partitionsLegend, w, 2)
}

// partitionLine is one partition's row: its name, leader epoch, high
// watermark, then a cell per replica in the order of its replicas.
func (m *partitionsModel) partitionLine(st *Styles, v *view.View, t *view.Topic, p *view.Partition) string {
	name := fit(fmt.Sprintf("%s-%d", t.Name, p.Partition), partNameWidth)
	hwm := offset(p.HighWatermark)
	if p.Leader == view.NoLeader {
		hwm = st.Err.Render("offline")
	}
	// Lags are against the leader's log end as the leader's broker holds
	// it; unknown while the leader replica is not hosted.
	leaderEnd := int64(-1)
	for _, r := range p.ReplicaStates {
		if r.Broker == p.Leader && r.Hosted {
			leaderEnd = r.LogEndOffset
		}
	}
	// The cells follow the registration's replicas; a replica the view
	// has no state for (a view from before the data plane) shows as
	// unknown rather than down.
	cells := make([]string, 0, len(p.Replicas))
	for _, id := range p.Replicas {
		i := slices.IndexFunc(p.ReplicaStates, func(r view.PartitionReplica) bool { return r.Broker == id })
		if i < 0 {
			cells = append(cells, fit(replicaMark(st, p, id)+" "+st.Dim.Render("?"), partCellWidth))
			continue
		}
		cells = append(cells, m.replicaCell(st, v, t.ID, p, p.ReplicaStates[i], leaderEnd))
	}
	return strings.TrimRight(fmt.Sprintf("%s %5d %7s %s", name, p.LeaderEpoch, fitLeft(hwm, 7), strings.Join(cells, "")), " ")
}

// replicaCell is one replica: its broker, marked as the leader or as out
// of the ISR; its log end or why it has none; how far behind the
// leader's it is, or that it just went back.
func (m *partitionsModel) replicaCell(st *Styles, v *view.View, topicID string, p *view.Partition, r view.PartitionReplica, leaderEnd int64) string {
	id := replicaMark(st, p, r.Broker)
	if !r.Hosted {
		return fit(id+" "+st.Err.Render("down"), partCellWidth)
	}
	end := fmt.Sprintf("%d", r.LogEndOffset)
	tail := ""
	if from, to, ok := m.wentBack(replicaKey{topicID, p.Partition, r.Broker}, v.Timestamp); ok {
		tail = st.Err.Render(fmt.Sprintf("↓%d→%d", from, to))
	} else if leaderEnd >= 0 && r.Broker != p.Leader {
		switch behind := leaderEnd - r.LogEndOffset; {
		case behind > 0:
			tail = st.Warn.Render(fmt.Sprintf("-%d", behind))
		case behind == 0:
			tail = st.OK.Render("=")
		}
	}
	return fit(id+" "+end+" "+tail, partCellWidth)
}

// replicaMark is a replica's broker id, starred if it leads, crossed if it
// is out of the ISR, a diamond instead if it is out of the ISR but an
// eligible leader replica, a caret before if it is the last known leader.
func replicaMark(st *Styles, p *view.Partition, broker int32) string {
	inIsr := slices.Contains(p.Isr, broker)
	id := strconv.Itoa(int(broker))
	last := ""
	if slices.Contains(p.LastKnownElr, broker) {
		last = st.Warn.Render("^")
	}
	switch {
	case !inIsr && slices.Contains(p.Elr, broker):
		return last + st.Warn.Render("◇"+id)
	case last != "" && !inIsr:
		return last + st.Err.Render("✗"+id)
	case broker == p.Leader && !inIsr:
		return "*" + st.Err.Render("✗"+id) // a leader outside its ISR, as a view taken mid-change may hold
	case broker == p.Leader:
		return "*" + st.OK.Render(id)
	case !inIsr:
		return st.Err.Render("✗" + id)
	}
	return " " + id
}
