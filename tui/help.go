package tui

import "strings"

// roleLegend says how the screen's role names map onto the current-state
// values of Kafka's raft-metrics (kafka.server:type=raft-metrics), which
// `kraftlab metrics` prints. Kafka names no resigned state: a resigned
// leader reports unattached.
const roleLegend = "Roles as Kafka's raft-metrics current-state (kraftlab metrics): " +
	"Leader = leader; Follower = follower; Observer (a broker following the leader) = observer; " +
	"Candidate = candidate; Prospective = prospective, prospective-voted once it voted; " +
	"Unattached = unattached, unattached-voted once it voted; Resigned = unattached."

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
