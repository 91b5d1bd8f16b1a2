package tui

import (
	"regexp"
	"strings"
)

// The lesson panel points at where the screen shows what a wait or
// expect line checked: the header's HWM, a node's column in the quorum
// table, a data pane. A lesson's evidence lines are such conditions, so
// the learner knows where to look as well as what was seen.

// conditionColumns are the quorum table's columns for a node condition's
// field (see condition.Forms).
var conditionColumns = map[string]string{
	"role":             "ROLE",
	"state":            "STATE",
	"epoch":            "EPOCH",
	"log-end":          "LEO",
	"hwm":              "HWM",
	"log-start":        "LOG-START",
	"lag":              "LAG",
	"snapshots-loaded": "SNAPSHOT",
}

// sawNode finds the node a condition's result names ("node 2 lag 5"):
// the result resolves references such as target and old-leader.
var sawNode = regexp.MustCompile(`\bnode (\d+)\b`)

// focus is a place on the screen a lesson points at: the layout keeps
// it whole when room is short.
type focus int

const (
	focusNone focus = iota
	focusQuorum
	focusCommit
	focusBrokers
	focusPartitions
	focusFetchers
	focusEvents
	focusOutput
	// focusQueue: the held messages' queue, in the flow's place while the
	// clock is paused.
	focusQueue
	// focusMessages: the space-time diagram, a data pane.
	focusMessages
	// focusGroups: the consumer groups, a data pane.
	focusGroups
)

// String names the place as the screen titles it.
func (f focus) String() string {
	switch f {
	case focusQuorum:
		return "the quorum table"
	case focusCommit:
		return "Commit"
	case focusBrokers:
		return "Brokers"
	case focusPartitions:
		return "Partitions"
	case focusFetchers:
		return "Fetchers"
	case focusEvents:
		return "Events"
	case focusOutput:
		return "Output"
	case focusQueue:
		return "Queue"
	case focusMessages:
		return "Messages"
	case focusGroups:
		return "Groups"
	}
	return ""
}

// pane is the data pane f is, if it is one.
func (f focus) pane() (dataPane, bool) {
	switch f {
	case focusBrokers:
		return paneBrokers, true
	case focusPartitions:
		return panePartitions, true
	case focusFetchers:
		return paneFetchers, true
	case focusMessages:
		return paneMessages, true
	case focusGroups:
		return paneGroups, true
	}
	return 0, false
}

// commandFocus is the panel that shows live what cmd, a scenario line,
// prints once: status --replication's voters are the Commit panel's
// bars, nodes is the quorum table, and so on; focusNone for a line whose
// output has no twin on the screen.
func commandFocus(cmd string) focus {
	w := strings.Fields(cmd)
	if len(w) == 0 {
		return focusNone
	}
	switch w[0] {
	case "status":
		return focusCommit
	case "nodes":
		return focusQuorum
	case "brokers":
		return focusBrokers
	case "fetchers":
		return focusFetchers
	case "groups":
		return focusGroups
	case "consume":
		if strings.Contains(cmd, "--group") {
			return focusGroups
		}
	case "events":
		return focusEvents
	case "messages", "step", "drop":
		return focusQueue
	case "produce", "reassign":
		return focusPartitions
	case "topics":
		if len(w) > 1 && w[1] == "describe" {
			return focusPartitions
		}
	}
	return focusNone
}

// onScreen says where the screen shows what cmd, a scenario line,
// checked, given the first line of what it printed, and the panel that
// place is in; "" when it is not a wait or expect, or the screen has no
// one place for it.
func onScreen(cmd, out string) (string, focus) {
	where := seenAt(cmd, out)
	return where, placeFocus(where)
}

// placeFocus is the panel a place onScreen names is in: the first one it
// names.
func placeFocus(where string) focus {
	best, at := focusNone, len(where)
	for _, p := range []struct {
		name string
		f    focus
	}{
		{"quorum table", focusQuorum}, {"Commit panel", focusCommit}, {"Brokers pane", focusBrokers},
		{"Partitions pane", focusPartitions}, {"Fetchers pane", focusFetchers}, {"Events", focusEvents},
		{"Queue panel", focusQueue},
	} {
		if i := strings.Index(where, p.name); i >= 0 && i < at {
			best, at = p.f, i
		}
	}
	return best
}

// seenAt is onScreen's place.
func seenAt(cmd, out string) string {
	w := strings.Fields(cmd)
	if len(w) < 2 || (w[0] != "wait" && w[0] != "expect") {
		return ""
	}
	var cond []string
	for i := 1; i < len(w); i++ {
		if strings.HasPrefix(w[i], "--") {
			if !strings.Contains(w[i], "=") {
				i++ // the flag's value
			}
			continue
		}
		cond = append(cond, w[i])
	}
	if len(cond) == 0 {
		return ""
	}
	// Operators need no spaces around them: "hwm>=5" is about hwm.
	if i := strings.IndexAny(cond[0], "=!<>"); i > 0 {
		cond[0] = cond[0][:i]
	}
	// A data-plane condition names a partition (TOPIC-N) second.
	partition := len(cond) > 1 && isPartition(cond[1])
	switch cond[0] {
	case "leader", "new-leader":
		return "the header's leader and epoch, and ROLE in the quorum table"
	case "epoch":
		return "the header's epoch"
	case "hwm":
		if partition {
			return "HWM of " + cond[1] + " in the Partitions pane (b)"
		}
		return "the header's HWM and the Commit panel"
	case "caught-up":
		return "the Commit panel: every voter's bar at the log end"
	case "node":
		if len(cond) < 3 {
			return ""
		}
		node := cond[1]
		if m := sawNode.FindStringSubmatch(out); m != nil {
			node = m[1]
		}
		if col, ok := conditionColumns[cond[2]]; ok {
			return "node " + node + "'s " + col + " in the quorum table"
		}
		if cond[2] == "truncations" {
			return "node " + node + "'s truncation in the Events"
		}
	case "fenced", "unfenced":
		return "FENCED in the Brokers pane (b)"
	case "metadata-lag":
		return "LAG* in the Brokers pane (b), kraftlab's own measure"
	case "in-sync", "isr":
		return "the ISR (✗ marks a replica out of it) in the Partitions pane (b)"
	case "partition-leader":
		return "the leader (*) in the Partitions pane (b)"
	case "truncations":
		return "↓ marks in the Partitions pane (b) and the Events"
	case "reassigned":
		return "the replicas and the ISR in the Partitions pane (b)"
	case "fetcher-lag":
		return "LAG and THROTTLED in the Fetchers pane (b)"
	case "topic":
		return "the topic line of the Brokers pane (b)"
	case "held":
		return "the Queue panel: the held messages, oldest first"
	}
	return ""
}

// isPartition reports whether s reads as TOPIC-N.
func isPartition(s string) bool {
	i := strings.LastIndexByte(s, '-')
	return i > 0 && i < len(s)-1 && strings.Trim(s[i+1:], "0123456789") == ""
}
