package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// A lost election is told whole: a split vote names who voted for whom.
func TestBallotsTellASplitVote(t *testing.T) {
	var b ballots
	b.cast(4, 1, 1)
	b.cast(4, 2, 3)
	b.cast(4, 3, 3)
	t0 := time.Unix(1_700_000_000, 0)
	ev := raft.Event{Kind: raft.EventElectionLost, Epoch: 4, Time: t0, Granted: []int32{1}, Rejected: []int32{2, 3}, Voters: 3, Majority: 2, NextTry: t0.Add(1500 * time.Millisecond)}
	kind, msg, ok := narrate(quorumRaftEvent(ev))
	if !ok || kind != "election" {
		t.Fatalf("narrated %q %q %v", kind, msg, ok)
	}
	msg += b.story(ev, 1, []int32{1, 2, 3})
	for _, want := range []string{"lost the election of epoch 4: no majority (2 of 3 voters needed)", "granted by 1 (itself)", "refused by 2, 3",
		"a split vote: in epoch 4 1 for 1, 2 for 3, 3 for 3", "asks for pre-votes again at once, for up to 1.5s"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	// A pre-vote that nobody answered: no votes to tell.
	pre := raft.Event{Kind: raft.EventElectionLost, PreVote: true, Epoch: 4, Time: t0, Granted: []int32{1}, Voters: 3, Majority: 2, NextTry: t0.Add(time.Second)}
	_, msg, _ = narrate(quorumRaftEvent(pre))
	msg += b.story(pre, 1, []int32{1, 2, 3})
	if !strings.Contains(msg, "pre-vote for epoch 5 found no majority") || !strings.Contains(msg, "no answer from 2, 3") || strings.Contains(msg, "split") {
		t.Errorf("pre-vote story %q", msg)
	}
}

// A Candidate whose election timed out turns Prospective and asks for
// pre-votes at once (KafkaRaftClient.pollCandidate): its NextTry is the end
// of that round, not a wait before it stands again. Only a pre-vote refused
// by a majority waits out a fresh election timeout; one whose timeout ran
// out asks again at once.
func TestLostElectionSaysWhenItAsksAgain(t *testing.T) {
	var b ballots
	t0 := time.Unix(1_700_000_000, 0)
	lost := func(ev raft.Event) string {
		_, msg, _ := narrate(quorumRaftEvent(ev))
		return msg + b.story(ev, 1, []int32{1, 2, 3})
	}
	candidate := lost(raft.Event{Kind: raft.EventElectionLost, Epoch: 4, Time: t0, Granted: []int32{1}, Voters: 3, Majority: 2, NextTry: t0.Add(1200 * time.Millisecond)})
	if !strings.Contains(candidate, "it asks for pre-votes again at once, for up to 1.2s") || strings.Contains(candidate, "may stand again") {
		t.Errorf("lost vote: %q, want it to ask for pre-votes again at once", candidate)
	}
	refused := lost(raft.Event{Kind: raft.EventElectionLost, PreVote: true, Epoch: 4, Time: t0, Granted: []int32{1}, Rejected: []int32{2, 3}, Voters: 3, Majority: 2, NextTry: t0.Add(1200 * time.Millisecond)})
	if !strings.Contains(refused, "it may stand again in 1.2s") {
		t.Errorf("refused pre-vote: %q, want it to wait its election timeout", refused)
	}
	timedOut := lost(raft.Event{Kind: raft.EventElectionLost, PreVote: true, Epoch: 4, Time: t0, Granted: []int32{1}, Voters: 3, Majority: 2, NextTry: t0})
	if !strings.Contains(timedOut, "asks for pre-votes again at once") || strings.Contains(timedOut, "may stand again") {
		t.Errorf("timed-out pre-vote: %q, want it to ask again at once", timedOut)
	}
}

// The voter count is the real one: four controllers need three votes, and
// three of four is not three of five.
func TestLostElectionCountsTheVoters(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, pre := range []bool{false, true} {
		ev := raft.Event{Kind: raft.EventElectionLost, PreVote: pre, Epoch: 4, Time: t0, Granted: []int32{1}, Voters: 4, Majority: 3, NextTry: t0.Add(time.Second)}
		_, msg, _ := narrate(quorumRaftEvent(ev))
		if !strings.Contains(msg, "(3 of 4 voters needed)") {
			t.Errorf("pre-vote %v: %q, want 3 of 4 voters needed", pre, msg)
		}
	}
}

// One pre-vote is told with one epoch: the voter that grants it and the
// candidate that loses it both name the epoch the candidate would stand
// in, one above the epoch its request carries.
func TestPreVoteToldWithOneEpoch(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	_, granted, _ := narrate(quorumRaftEvent(raft.Event{Kind: raft.EventVoteGranted, Epoch: 4, Time: t0, Candidate: 3, CandidateEpoch: 4, PreVote: true}))
	_, lost, _ := narrate(quorumRaftEvent(raft.Event{Kind: raft.EventElectionLost, PreVote: true, Epoch: 4, Time: t0, Granted: []int32{3}, Voters: 3, Majority: 2}))
	if !strings.Contains(granted, "pre-vote for epoch 5") || !strings.Contains(lost, "pre-vote for epoch 5") {
		t.Errorf("granted %q and lost %q, want both to name epoch 5", granted, lost)
	}
	if !strings.Contains(granted, "no vote recorded") || strings.Contains(granted, "changes nothing") {
		t.Errorf("granted %q, want it to say no vote is recorded, not that nothing changes", granted)
	}
}

func quorumRaftEvent(ev raft.Event) quorum.Event {
	return quorum.Event{Kind: quorum.EventRaft, Node: 1, Raft: ev}
}
