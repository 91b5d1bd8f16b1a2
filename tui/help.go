package tui

import "strings"

// roleLegend says how the screen's role names map onto the current-state
// values of Kafka's raft-metrics (kafka.server:type=raft-metrics), which
// `kraftlab metrics` prints. Kafka names no resigned state: a resigned
// leader reports unattached.
const roleLegend = "Roles as Kafka's raft-metrics current-state: " +
	"Leader = leader; Follower = follower; Observer (a broker or other non-voter) = observer; " +
	"Candidate = candidate; Prospective = prospective, prospective-voted once it voted; " +
	"Unattached = unattached, unattached-voted once it voted; Resigned = unattached."

// brokersLegend says what the brokers pane's columns mean in Kafka's
// terms, LAG* above all: it is kraftlab's own measure, and fencing never
// follows it.
const brokersLegend = "Brokers pane: STATE is Kafka's BrokerState: STARTING until a heartbeat answer says the broker " +
	"has applied the metadata log up to its own registration, RECOVERY caught up but still fenced, RUNNING once unfenced. " +
	"LAG* is kraftlab's own measure (committed metadata offsets not applied yet), not a Kafka metric: Kafka fences a broker " +
	"only when its heartbeats stop for broker.session.timeout.ms, never for lag, and unfences it at the first heartbeat " +
	"past its registration. Kafka's own figure is last-applied-record-lag-ms (kraftlab metrics)."

// attachedBrokersLegend is brokersLegend for a real cluster, where LAG*
// comes from DescribeQuorum: what a broker fetched, not what it applied.
const attachedBrokersLegend = "Brokers pane (a real cluster): LAG* is the committed metadata offsets the broker has not " +
	"fetched yet (the leader's high watermark minus the broker's log end in DescribeQuorum's observers); what it applied " +
	"is not visible over the wire (Kafka's last-applied-record-lag-ms is a JMX metric). Kafka fences a broker only when " +
	"its heartbeats stop for broker.session.timeout.ms, never for lag."

// groupsLegend says what makes a broker a group's coordinator, and so
// why the groups pane's coordinators move with __consumer_offsets'
// leaders.
const groupsLegend = "Groups pane (o): a group's coordinator is the broker leading the group's partition of __consumer_offsets " +
	"(the partition its id hashes to); when that broker goes, the group moves with the partition's leadership " +
	"and ↻ was N marks the new coordinator for a while. LAG is the partition's high watermark minus the committed offset, " +
	"as kafka-consumer-groups --describe computes it."

// wrapWords breaks s into lines of at most w cells at spaces; a word
// longer than w is clipped.
func wrapWords(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= w:
			line += " " + word
		default:
			lines = append(lines, clip(line, w))
			line = word
		}
	}
	if line != "" {
		lines = append(lines, clip(line, w))
	}
	return lines
}
