package tui

import (
	"strings"
	"testing"
)

// e tells the last election from the real events a recording holds: the
// kill that set it off, the pre-votes, a first epoch in which two
// candidates split the vote, the next try, and the winner with its votes.
func TestElectionStory(t *testing.T) {
	r := loadRecording(t, "steady")
	r.Frames = append(r.Frames, loadRecording(t, "leader-kill").Frames...)
	m := replay(r, 80, 24)
	press(t, m, "e")
	story := strings.Join(m.output.lines, "\n")
	for _, want := range []string{
		"The last election (epochs 2 to 3), as the event log tells it; a majority is 2 of 3 voters.",
		"Why: at 13:39:16.319, killed node 1 (the leader of epoch 1).",
		"nodes 2 and 3 heard no leader for the fetch timeout and asked for pre-votes",
		"Pre-votes granted: 2 to 3, 3 to 2.",
		"Epoch 2, at 13:39:16.488: nodes 3 and 2 stood as Candidates, each voting for itself.",
		"Node 2 won with 2 votes",
		"No winner: a split vote.",
		"The next try began at 13:39:16.618, in epoch 3",
		"Epoch 3, at 13:39:16.618: node 2 stood as Candidate, voting for itself.",
		"Votes: 3 voted for 2.",
		"Node 2 won with 2 votes, of 2 (itself), 3 (a majority is 2); at 13:39:16.620 it was elected leader of epoch 3, its log ending at offset 57.",
		"Now: node 2 leads epoch 3.",
	} {
		if !strings.Contains(story, want) {
			t.Errorf("no %q in the story:\n%s", want, story)
		}
	}
	screen := m.View()
	if !strings.Contains(screen, "Output · the last election") || !strings.Contains(screen, "The last election (epochs 2 to 3)") {
		t.Errorf("the story is not on screen:\n%s", screen)
	}
	// At 80 columns its lines wrap rather than end cut.
	if !strings.Contains(screen, "\n3 voters.") {
		t.Errorf("the story's first line is not wrapped whole:\n%s", screen)
	}
	// esc closes the pane.
	press(t, m, "esc")
	if m.output.open() || strings.Contains(m.View(), "Output ·") {
		t.Errorf("esc left the pane open:\n%s", m.View())
	}

	// Without an election in the log, it says so.
	quiet := replay(loadRecording(t, "replication"), 80, 24)
	quiet.events.entries = nil
	press(t, quiet, "e")
	if got := strings.Join(quiet.output.lines, " "); !strings.Contains(got, "No election in the 0 events the screen holds") {
		t.Errorf("no election: %q", got)
	}
}

// A lost pre-vote and the tries after it: the majority is gone, the last
// voter asks and asks.
func TestElectionStoryWithoutWinner(t *testing.T) {
	m := replay(loadRecording(t, "majority-gone"), 160, 48)
	press(t, m, "e")
	story := strings.Join(m.output.lines, "\n")
	for _, want := range []string{"Why: at 13:39:22.179, killed node 3 (the leader of epoch 1).", "Then at 13:39:23.085, killed node 2 (the leader of epoch 3).", "Now: no leader.", "more asks for pre-votes"} {
		if !strings.Contains(story, want) {
			t.Errorf("no %q in the story:\n%s", want, story)
		}
	}
}
