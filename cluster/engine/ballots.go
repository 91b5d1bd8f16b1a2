package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// maxBallotEpochs bounds the epochs whose votes the engine remembers.
const maxBallotEpochs = 16

// ballots remembers who voted for whom in the latest epochs, from the
// voters' own VoteGranted events, so that a lost election can be told
// whole: who stood, who voted for whom, why no majority.
type ballots struct {
	mu    sync.Mutex
	votes map[int32]map[int32]int32 // epoch → voter → candidate
}

// cast records voter's vote for candidate in epoch.
func (b *ballots) cast(epoch, voter, candidate int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.votes == nil {
		b.votes = map[int32]map[int32]int32{}
	}
	if b.votes[epoch] == nil {
		b.votes[epoch] = map[int32]int32{}
	}
	b.votes[epoch][voter] = candidate
	for len(b.votes) > maxBallotEpochs {
		delete(b.votes, slices.Min(slices.Collect(maps.Keys(b.votes))))
	}
}

// story tells node's lost election ev among voters: who granted, refused
// or never answered it, the votes cast in the epoch (a split vote when
// another candidate got some), and when the node asks again.
func (b *ballots) story(ev raft.Event, node int32, voters []int32) string {
	var unanswered []int32
	for _, v := range voters {
		if !slices.Contains(ev.Granted, v) && !slices.Contains(ev.Rejected, v) {
			unanswered = append(unanswered, v)
		}
	}
	var parts []string
	if len(ev.Granted) > 0 {
		parts = append(parts, "granted by "+idsWithSelf(ev.Granted, node))
	}
	if len(ev.Rejected) > 0 {
		parts = append(parts, "refused by "+idsWithSelf(ev.Rejected, node))
	}
	if len(unanswered) > 0 {
		parts = append(parts, "no answer from "+idsWithSelf(unanswered, node))
	}
	s := ": " + strings.Join(parts, ", ")
	if !ev.PreVote {
		b.mu.Lock()
		votes := b.votes[ev.Epoch]
		var cast []string
		candidates := map[int32]bool{}
		for _, v := range slices.Sorted(maps.Keys(votes)) {
			cast = append(cast, fmt.Sprintf("%d for %d", v, votes[v]))
			candidates[votes[v]] = true
		}
		b.mu.Unlock()
		if len(candidates) > 1 {
			s += fmt.Sprintf("; a split vote: in epoch %d %s, so no candidate reached a majority", ev.Epoch, strings.Join(cast, ", "))
		} else if len(cast) > 0 {
			s += fmt.Sprintf("; votes cast in epoch %d: %s", ev.Epoch, strings.Join(cast, ", "))
		}
	}
	switch {
	case !ev.PreVote:
		// A Candidate whose election timed out is Prospective at once
		// (KafkaRaftClient.pollCandidate); NextTry ends that pre-vote round.
		s += fmt.Sprintf("; it asks for pre-votes again at once, for up to %s (its randomised election timeout)", roundDuration(ev.NextTry.Sub(ev.Time)))
	case !ev.NextTry.IsZero() && !ev.NextTry.After(ev.Time):
		s += "; its election timeout has run out, so it asks for pre-votes again at once"
	case !ev.NextTry.IsZero():
		s += fmt.Sprintf("; it may stand again in %s (its randomised election timeout)", roundDuration(ev.NextTry.Sub(ev.Time)))
	case ev.Leader >= 0:
		s += fmt.Sprintf("; it follows node %d again, the leader it knew, and stands again when its fetch timeout next runs out", ev.Leader)
	}
	return s
}

func idsWithSelf(ids []int32, self int32) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprint(id)
		if id == self {
			out[i] += " (itself)"
		}
	}
	return strings.Join(out, ", ")
}
