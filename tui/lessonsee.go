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

// onScreen says where the screen shows what cmd, a scenario line,
// checked, given the first line of what it printed; "" when it is not a
// wait or expect, or the screen has no one place for it.
func onScreen(cmd, out string) string {
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
	case "topic":
		return "the topic line of the Brokers pane (b)"
	}
	return ""
}

// isPartition reports whether s reads as TOPIC-N.
func isPartition(s string) bool {
	i := strings.LastIndexByte(s, '-')
	return i > 0 && i < len(s)-1 && strings.Trim(s[i+1:], "0123456789") == ""
}
