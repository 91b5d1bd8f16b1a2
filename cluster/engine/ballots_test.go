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
	ev := raft.Event{Kind: raft.EventElectionLost, Epoch: 4, Time: t0, Granted: []int32{1}, Rejected: []int32{2, 3}, Majority: 2, NextTry: t0.Add(1500 * time.Millisecond)}
	kind, msg, ok := narrate(quorumRaftEvent(ev))
	if !ok || kind != "election" {
		t.Fatalf("narrated %q %q %v", kind, msg, ok)
	}
	msg += b.story(ev, 1, []int32{1, 2, 3})
	for _, want := range []string{"lost the election of epoch 4: no majority (2 of 3 voters needed)", "granted by 1 (itself)", "refused by 2, 3",
		"a split vote: in epoch 4 1 for 1, 2 for 3, 3 for 3", "may stand again in 1.5s"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	// A pre-vote that nobody answered: no votes to tell.
	pre := raft.Event{Kind: raft.EventElectionLost, PreVote: true, Epoch: 4, Time: t0, Granted: []int32{1}, Majority: 2, NextTry: t0.Add(time.Second)}
	_, msg, _ = narrate(quorumRaftEvent(pre))
	msg += b.story(pre, 1, []int32{1, 2, 3})
	if !strings.Contains(msg, "pre-vote for epoch 5 found no majority") || !strings.Contains(msg, "no answer from 2, 3") || strings.Contains(msg, "split") {
		t.Errorf("pre-vote story %q", msg)
	}
}

func quorumRaftEvent(ev raft.Event) quorum.Event {
	return quorum.Event{Kind: quorum.EventRaft, Node: 1, Raft: ev}
}
