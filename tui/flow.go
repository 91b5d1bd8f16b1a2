package tui

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// Rates are measured over the views of the last rateWindow; an API that
// went quiet stays listed, with how long ago it was last seen, for
// recentWindow: a BeginQuorumEpoch happens once per election, and a
// learner should still see it a few seconds later, but idle rows then
// leave, so the event log below keeps its room.
const (
	rateWindow   = 2 * time.Second
	recentWindow = 10 * time.Second
)

// flowKey is one API on one directed link.
type flowKey struct {
	from, to int32
	api      string
}

// flowSample is the links' request counters in one view.
type flowSample struct {
	at   int64 // the view's timestamp, Unix milliseconds
	reqs map[flowKey]int64
	hwm  int64 // the view's high watermark
}

// flowModel is the message flow: the requests between nodes per API, as
// rates computed from the counters of successive views, and the Fetches
// the leader holds parked.
type flowModel struct {
	samples []flowSample
	// lastActive is when a counter was last seen growing.
	lastActive map[flowKey]int64
}

// add takes the counters of a new view.
func (f *flowModel) add(v *view.View) {
	s := flowSample{at: v.Timestamp, reqs: map[flowKey]int64{}, hwm: v.HighWatermark}
	for _, l := range v.Links {
		for api, c := range l.RPC {
			s.reqs[flowKey{l.From, l.To, api}] = c.Requests
		}
	}
	if f.lastActive == nil {
		f.lastActive = map[flowKey]int64{}
	}
	if n := len(f.samples); n > 0 {
		prev := f.samples[n-1]
		if s.at < prev.at {
			f.samples = nil // the clock went back: start over
		} else {
			for k, c := range s.reqs {
				if c != prev.reqs[k] {
					f.lastActive[k] = s.at
				}
			}
			if s.at == prev.at {
				f.samples = f.samples[:n-1]
			}
		}
	}
	f.samples = append(f.samples, s)
	win := rateWindow.Milliseconds()
	for len(f.samples) > 2 && f.samples[1].at <= s.at-win {
		f.samples = f.samples[1:]
	}
	for k, at := range f.lastActive {
		if at <= s.at-recentWindow.Milliseconds() {
			delete(f.lastActive, k)
		}
	}
}

// rate is k's requests per second over the window.
func (f *flowModel) rate(k flowKey) float64 {
	if len(f.samples) < 2 {
		return 0
	}
	old, cur := f.samples[0], f.samples[len(f.samples)-1]
	d := cur.reqs[k] - old.reqs[k]
	if d < 0 {
		d = cur.reqs[k] // the counter restarted with its node
	}
	dt := cur.at - old.at
	if dt <= 0 {
		return 0
	}
	return float64(d) * 1000 / float64(dt)
}

// apiRank orders the quorum's APIs as a learner meets them.
func apiRank(api string) int {
	switch api {
	case "Fetch", "AppendEntries":
		return 0
	case "FetchSnapshot", "InstallSnapshot":
		return 1
	case "BeginQuorumEpoch", "ObserveQuorum":
		return 2
	case "EndQuorumEpoch":
		return 3
	case "Vote":
		return 4
	}
	return 5
}

// apiLabel names an API; a pre-vote (KIP-996) is a Vote request with its
// PreVote flag set, so both count as Vote.
func apiLabel(api string) string {
	if api == "Vote" {
		return "Vote/PreVote"
	}
	return api
}

// flowRow is one line of the panel.
type flowRow struct {
	k          flowKey
	rate       float64
	lastActive int64 // 0 if not seen growing
	parked     bool
}

func (f *flowModel) rows(v *view.View) []flowRow {
	byKey := map[flowKey]*flowRow{}
	add := func(k flowKey) *flowRow {
		r, ok := byKey[k]
		if !ok {
			r = &flowRow{k: k, rate: f.rate(k), lastActive: f.lastActive[k]}
			byKey[k] = r
		}
		return r
	}
	if n := len(f.samples); n > 0 {
		for k := range f.samples[n-1].reqs {
			if f.rate(k) > 0 || f.lastActive[k] > 0 {
				add(k)
			}
		}
	}
	if v.LeaderID != view.NoLeader {
		for _, list := range [][]view.Replica{v.CurrentVoters, v.CurrentObservers} {
			for _, r := range list {
				if r.ParkedFetch {
					add(flowKey{r.NodeID, v.LeaderID, "Fetch"}).parked = true
				}
			}
		}
	}
	rows := make([]flowRow, 0, len(byKey))
	for _, r := range byKey {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b flowRow) int {
		return cmp.Or(cmp.Compare(apiRank(a.k.api), apiRank(b.k.api)), cmp.Compare(a.k.api, b.k.api),
			cmp.Compare(a.k.to, b.k.to), cmp.Compare(a.k.from, b.k.from))
	})
	return rows
}

// quorumAPIs are the metadata quorum's APIs, pull's and push's.
var quorumAPIs = []string{"Fetch", "FetchSnapshot", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "AppendEntries", "InstallSnapshot", "ObserveQuorum"}

// perCommit is the metadata quorum's requests per committed record over
// the window (each has an answer, not counted), and false while the high
// watermark did not move. A request of the quorum's APIs is the quorum's
// when a controller sends or receives it: a broker's Fetch from a broker
// is the data plane's.
func (f *flowModel) perCommit(v *view.View) (float64, bool) {
	n := len(f.samples)
	if n < 2 {
		return 0, false
	}
	first, last := f.samples[0], f.samples[n-1]
	if first.hwm < 0 || last.hwm <= first.hwm {
		return 0, false
	}
	var reqs int64
	controller := func(id int32) bool {
		n, ok := v.Node(id)
		return ok && n.Kind == view.KindController
	}
	for k, c := range last.reqs {
		if slices.Contains(quorumAPIs, k.api) && (controller(k.from) || controller(k.to)) {
			reqs += max(c-first.reqs[k], 0)
		}
	}
	return float64(reqs) / float64(last.hwm-first.hwm), true
}

// starter says who starts each replication exchange in v's mode: the
// difference push and pull make on the wire.
func starter(v *view.View) string {
	if v.Push() {
		return "push: the leader sends (AppendEntries leader → follower)"
	}
	return "pull: the follower asks (Fetch follower → leader)"
}

// view renders the panel in w cells and at most h lines: who starts the
// exchanges and the quorum's requests per committed record, when there is
// room, then a line per API and link.
func (f *flowModel) view(st *Styles, v *view.View, w, h int) block {
	out := block{section(st, "Message flow: requests/s, sender → receiver", w)}
	if h < 2 {
		return out
	}
	if v.Attached != nil {
		return append(out, st.Dim.Render(clip(notOnTheWire("messages between the nodes"), w)))
	}
	if h >= 4 {
		line := starter(v)
		if r, ok := f.perCommit(v); ok {
			line += fmt.Sprintf(" · %.1f requests/record", r)
		}
		out = append(out, st.Dim.Render(clip(line, w)))
		h--
	}
	rows := f.rows(v)
	if len(rows) == 0 {
		return append(out, st.Dim.Render(clip("no requests between nodes in the last "+rateWindow.String(), w)))
	}
	apiW := 12
	for _, r := range rows {
		apiW = max(apiW, len(apiLabel(r.k.api)))
	}
	room := h - 1
	if len(rows) > room {
		room = max(room-1, 0)
	}
	for _, r := range rows[:min(room, len(rows))] {
		rate := st.Dim.Render(fitLeft("idle", 7))
		if r.rate > 0 {
			rate = fitLeft(fmt.Sprintf("%.1f/s", r.rate), 7)
		}
		var note string
		switch {
		case r.parked:
			note = st.Warn.Render("waiting: parked")
		case r.rate == 0 && r.lastActive > 0:
			note = st.Dim.Render("last " + since(r.lastActive, v.Timestamp) + " ago")
		}
		line := fmt.Sprintf("%s %4d→%-4d %s %s", fit(apiLabel(r.k.api), apiW), r.k.from, r.k.to, rate, note)
		out = append(out, clip(line, w))
	}
	if hidden := len(rows) - room; hidden > 0 {
		out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more (a taller window shows them)", hidden), w)))
	}
	return out
}
