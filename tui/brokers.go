package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// brokersModel is the brokers table: each broker's lifecycle state, what
// the committed metadata says of its fencing, how far it is behind the
// committed metadata log (LAG*, kraftlab's own measure, which the title
// and the help's legend label so: Kafka fences on missed heartbeats,
// never on lag), when the active controller last heard its
// heartbeat, how many partitions it leads, and whether (and how soon
// after the controller appended it) it applied the latest metadata
// change; under it, the topics and which brokers have applied them.
type brokersModel struct{}

// view renders the table in w cells and at most h lines.
func (brokersModel) view(st *Styles, v *view.View, w, h int) block {
	title := "Brokers: lifecycle, fencing, LAG* (kraftlab's own)"
	if v.Attached != nil {
		title = "Brokers: fencing, LAG* (fetched, not applied)"
	}
	out := block{paneSection(st, title, paneBrokers, w)}
	if h < 2 {
		return out
	}
	var brokers []*view.Node
	for i := range v.Nodes {
		if v.Nodes[i].IsBroker() {
			brokers = append(brokers, &v.Nodes[i])
		}
	}
	if len(brokers) == 0 && v.Attached != nil {
		return append(out, st.Dim.Render(clip("no brokers read", w)))
	}
	if len(brokers) == 0 {
		return append(out, st.Dim.Render(clip("no brokers in this playground", w)))
	}
	change := latestChange(v)
	// The change line goes where the brokers and a topic line still show
	// under it: in six lines, or fewer when the brokers are few.
	if change != nil && h >= min(6, 4+len(brokers)) {
		out = append(out, clip(st.Dim.Render("last change: ")+change.What+st.Dim.Render(fmt.Sprintf(" (offset %d)", change.Offset)), w))
	}
	out = append(out, st.Label.Render(clip(fmt.Sprintf("%4s  %-9s %-8s %6s  %-10s %5s  %s", "ID", "STATE", "FENCED", "LAG*", "HEARTBEAT", "LEADS", "APPLIED LAST CHANGE"), w)))
	room := h - len(out)
	topics := topicLines(st, v, w)
	if room-len(brokers) >= 1+len(topics) || len(topics) > 0 && room-len(brokers) >= 2 {
		room -= min(len(topics), room-len(brokers)) // keep a line or more for the topics
	}
	for i, n := range brokers {
		if i == room-1 && len(brokers) > room {
			out = append(out, st.Dim.Render(clip(fmt.Sprintf("… %d more brokers", len(brokers)-i), w)))
			break
		}
		if i >= room {
			break
		}
		out = append(out, clip(brokerLine(st, v, n, change), w))
	}
	for _, l := range topics {
		if len(out) >= h {
			break
		}
		out = append(out, l)
	}
	return out
}

// latestChange is the newest metadata change any running node applied:
// the one the brokers' APPLIED LAST CHANGE column follows.
func latestChange(v *view.View) *view.MetadataChange {
	var last *view.MetadataChange
	for _, n := range v.Nodes {
		if md := n.Metadata; md != nil && md.LastChange != nil && (last == nil || md.LastChange.Offset > last.Offset) {
			last = md.LastChange
		}
	}
	return last
}

// appliedIt says whether broker n applied change, and how long after the
// controller appended it.
func appliedIt(st *Styles, n *view.Node, change *view.MetadataChange) string {
	if change == nil || n.Metadata == nil {
		return st.Dim.Render("-")
	}
	switch mine := n.Metadata.LastChange; {
	case mine != nil && mine.Offset == change.Offset:
		return st.OK.Render("after " + propagation(time.Duration(mine.AppliedAfterUs)*time.Microsecond))
	case n.Metadata.LastAppliedRecordOffset >= change.Offset:
		return st.OK.Render("yes")
	}
	return st.Warn.Render("not yet")
}

// propagation spells a propagation time, below a millisecond too.
func propagation(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	}
	return shortDuration(d)
}

// brokerLine is one broker's row.
func brokerLine(st *Styles, v *view.View, n *view.Node, change *view.MetadataChange) string {
	b := n.Broker
	if b == nil {
		b = &view.Broker{BrokerEpoch: -1, MetadataLag: -1, LastHeartbeatTimestamp: -1}
	}
	state := string(b.State)
	if state == "" {
		state = string(n.State)
	}
	fenced := st.Dim.Render(fit("-", 8))
	switch {
	case !b.Registered:
	case b.Fenced:
		fenced = st.Err.Render(fit("yes", 8))
	case b.InControlledShutdown:
		fenced = st.Warn.Render(fit("leaving", 8))
	default:
		fenced = st.OK.Render(fit("no", 8))
	}
	lag := "-"
	if b.MetadataLag >= 0 {
		lag = fmt.Sprint(b.MetadataLag)
	}
	hb := since(b.LastHeartbeatTimestamp, v.Timestamp)
	switch {
	case b.LastHeartbeatTimestamp >= 0:
		hb += " ago"
	case v.Attached != nil:
		hb = "-" // only the active controller knows
	}
	return fmt.Sprintf("%4d  %s %s %6s  %-10s %5d  %s", n.ID, st.State(n.State).Render(fit(state, 9)), fenced, lag, hb, b.PartitionsLed, appliedIt(st, n, change))
}

// topicLines says, per topic, how many partitions it has and which running
// brokers have not applied it yet.
func topicLines(st *Styles, v *view.View, w int) block {
	if len(v.Topics) == 0 && v.Attached != nil {
		return block{st.Dim.Render(clip("no topics", w))}
	}
	if len(v.Topics) == 0 {
		return block{st.Dim.Render(clip("no topics yet: press T to create one", w))}
	}
	var out block
	running := map[int32]bool{}
	for _, n := range v.Nodes {
		if n.Kind == view.KindBroker && n.State == view.StateRunning {
			running[n.ID] = true
		}
	}
	for _, t := range v.Topics {
		var missing []string
		for _, n := range v.Nodes {
			if running[n.ID] && !slices.Contains(t.OnBrokers, n.ID) {
				missing = append(missing, fmt.Sprint(n.ID))
			}
		}
		where := st.OK.Render("on every running broker")
		if v.Attached != nil {
			// Which brokers applied it is not on the wire.
			where = fmt.Sprintf("leaders %s", topicLeaders(&t))
		} else if len(missing) > 0 {
			where = st.Warn.Render("not yet on " + strings.Join(missing, ","))
		}
		out = append(out, clip(fmt.Sprintf("topic %s: %d %s, %s", t.Name, len(t.Partitions), plural(int64(len(t.Partitions)), "partition", "partitions"), where), w))
	}
	return out
}

// The topic the topic key creates: the next free name topic-N, with
// topicPartitions partitions and as many replicas as there are unfenced
// brokers, up to topicReplicas.
const (
	topicPartitions = 3
	topicReplicas   = 3
)

func newTopicAction(v *view.View) cluster.Action {
	name := ""
	for i := len(v.Topics) + 1; ; i++ {
		name = fmt.Sprintf("topic-%d", i)
		if _, taken := v.Topic(name); !taken {
			break
		}
	}
	rf := 0
	for _, n := range v.Nodes {
		if b := n.Broker; b != nil && b.Registered && !b.Fenced {
			rf++
		}
	}
	return cluster.Action{Kind: cluster.ActCreateTopic, Topic: name, Partitions: topicPartitions, ReplicationFactor: int16(min(max(rf, 1), topicReplicas))}
}

// topicLeaders lists a topic's partition leaders, none as -.
func topicLeaders(t *view.Topic) string {
	var out []string
	for _, p := range t.Partitions {
		if p.Leader < 0 {
			out = append(out, "-")
		} else {
			out = append(out, fmt.Sprint(p.Leader))
		}
	}
	return strings.Join(out, ",")
}
