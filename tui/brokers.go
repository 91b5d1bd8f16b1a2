package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster"
)

// brokersModel is the brokers' panel: each broker's metadata offset and
// lag as its heartbeats report them, its fenced state, and its replica
// fetcher threads. It shows only once the engine reports brokers (the
// view's Brokers or Fetchers are not nil).
type brokersModel struct{}

// has reports whether the view carries broker state to show.
func (brokersModel) has(v *cluster.View) bool { return v.Brokers != nil || v.Fetchers != nil }

// view renders the panel in w cells and at most h lines.
func (brokersModel) view(st *Styles, v *cluster.View, w, h int) block {
	out := block{section(st, "Brokers: metadata offset and lag, fencing, fetcher threads (#thread→leader:partitions)", w)}
	if h < 2 {
		return out
	}
	fetchers := map[int32][]cluster.FetcherView{}
	var brokerIDs []int32
	for _, b := range v.Brokers {
		brokerIDs = append(brokerIDs, b.NodeID)
	}
	for _, f := range v.Fetchers {
		fetchers[f.NodeID] = append(fetchers[f.NodeID], f)
		if !slices.Contains(brokerIDs, f.NodeID) {
			brokerIDs = append(brokerIDs, f.NodeID)
		}
	}
	slices.Sort(brokerIDs)
	if len(brokerIDs) == 0 {
		return append(out, st.Dim.Render(clip("no broker has registered yet", w)))
	}
	room := h - 1
	if len(brokerIDs) > room {
		room = max(room-1, 0)
	}
	for _, id := range brokerIDs[:min(room, len(brokerIDs))] {
		line := fmt.Sprintf("%4d ", id)
		i := slices.IndexFunc(v.Brokers, func(b cluster.BrokerView) bool { return b.NodeID == id })
		if i >= 0 {
			b := v.Brokers[i]
			fenced := st.OK.Render("unfenced")
			if b.Fenced {
				fenced = st.Err.Render("FENCED  ")
			}
			line += fmt.Sprintf("%s epoch %-4d metadata %-6d lag %-4d", fenced, b.BrokerEpoch, b.MetadataOffset, b.MetadataLag)
		} else {
			line += st.Dim.Render("not registered                                ")
		}
		fs := fetchers[id]
		if len(fs) > 0 {
			var parts []string
			for _, f := range fs {
				parts = append(parts, fmt.Sprintf("#%d→%d:%d", f.FetcherID, f.LeaderID, len(f.Partitions)))
			}
			line += fmt.Sprintf(" fetchers %s", strings.Join(parts, " "))
		}
		out = append(out, clip(line, w))
	}
	if hidden := len(brokerIDs) - room; hidden > 0 {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more brokers", hidden), w)))
	}
	return out
}
