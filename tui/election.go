package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The story of the last election, told from the event log the screen
// holds: what set it off, who asked for pre-votes, who stood in which
// epoch, who voted for whom, why an epoch found no winner (a split vote,
// the engine's own account of a lost election) and when the next try
// began, and who won with which votes. It reads the engine's own
// sentences (cluster/engine/narrate.go), which name the candidate of a
// vote and the epoch of a candidacy.

var (
	reCandidate = regexp.MustCompile(`-> Candidate \(epoch (\d+)\)$`)
	reProspect  = regexp.MustCompile(`-> Prospective\b`)
	reVote      = regexp.MustCompile(`^voted for node (\d+) in epoch (\d+)`)
	rePreVote   = regexp.MustCompile(`^granted node (\d+) a pre-vote for epoch (\d+)`)
	reWon       = regexp.MustCompile(`^elected leader of epoch (\d+)`)
	reLost      = regexp.MustCompile(`^lost the election of epoch (\d+)`)
	rePreLost   = regexp.MustCompile(`^its pre-vote for epoch (\d+) found no majority`)
)

// causes are the actions that can set an election off.
var causes = []cluster.EventKind{cluster.EventKill, cluster.EventStop, cluster.EventResign, cluster.EventLinkChange, cluster.EventWipe, cluster.EventEndQuorumEpoch}

// round is one epoch of an election.
type round struct {
	epoch      int32
	at         string // when its first candidate stood
	candidates []int32
	votes      map[int32]int32 // voter → candidate, the candidates' own left out
	won        *cluster.Event
	lost       []cluster.Event
}

// atoi32 reads a number the regexps matched.
func atoi32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}

// electionStory tells the last election in the events evs, for a quorum
// of voters voters; v is the playground now.
func electionStory(evs []cluster.Event, v *view.View, voterCount int) string {
	majority := voterCount/2 + 1
	rounds := map[int32]*round{}
	get := func(e int32) *round {
		if rounds[e] == nil {
			rounds[e] = &round{epoch: e, votes: map[int32]int32{}}
		}
		return rounds[e]
	}
	for _, ev := range evs {
		switch ev.Kind {
		case cluster.EventRoleChange:
			if m := reCandidate.FindStringSubmatch(ev.Message); m != nil {
				r := get(atoi32(m[1]))
				if r.at == "" {
					r.at = timeOf(ev)
				}
				if !slices.Contains(r.candidates, ev.Node) {
					r.candidates = append(r.candidates, ev.Node)
				}
			}
		case cluster.EventVote:
			if m := reVote.FindStringSubmatch(ev.Message); m != nil {
				get(atoi32(m[2])).votes[ev.Node] = atoi32(m[1])
			}
		case cluster.EventElection:
			if m := reWon.FindStringSubmatch(ev.Message); m != nil {
				r := get(atoi32(m[1]))
				e := ev
				r.won = &e
			} else if m := reLost.FindStringSubmatch(ev.Message); m != nil {
				r := get(atoi32(m[1]))
				r.lost = append(r.lost, ev)
			}
		}
	}
	if len(rounds) == 0 {
		return fmt.Sprintf("No election in the %d events the screen holds: %s.\n"+
			"Kill or isolate the leader (x or i on it) and press e again once the others have voted.", len(evs), now(v))
	}
	epochs := slices.Sorted(func(yield func(int32) bool) {
		for e := range rounds {
			if !yield(e) {
				return
			}
		}
	})
	// The run: the last epoch, and the epochs before it back to the one
	// after the last winner before it.
	last := len(epochs) - 1
	first := last
	for first > 0 && rounds[epochs[first-1]].won == nil {
		first--
	}
	run := epochs[first : last+1]
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("The last election (%s), as the event log tells it; a majority is %d of %d voters.", epochWord(run), majority, voterCount)

	// What set it off: the last action before its first candidacy, and
	// the nodes that then asked for pre-votes.
	start := firstSeq(evs, run[0])
	var from uint64
	if cause, ok := lastBefore(evs, start, causes); ok {
		line("Why: at %s, %s.", timeOf(cause), describe(cause))
		from = cause.Seq
	}
	var prospects []int32
	var preAt string
	var granted []string
	for _, ev := range evs {
		if ev.Seq >= start {
			break
		}
		if ev.Seq <= from {
			continue
		}
		if m := rePreVote.FindStringSubmatch(ev.Message); ev.Kind == cluster.EventVote && m != nil {
			granted = append(granted, fmt.Sprintf("%d to %s", ev.Node, m[1]))
		}
		if ev.Kind == cluster.EventRoleChange && reProspect.MatchString(ev.Message) && !slices.Contains(prospects, ev.Node) {
			prospects = append(prospects, ev.Node)
			if preAt == "" {
				preAt = timeOf(ev)
			}
		}
	}
	if len(prospects) > 0 {
		line("At %s, %s heard no leader for the fetch timeout and asked for pre-votes (Prospective), without raising the epoch.", preAt, nodes(prospects))
	}
	if len(granted) > 0 {
		line("  Pre-votes granted: %s.", strings.Join(granted, ", "))
	}
	for i, e := range run {
		r := rounds[e]
		if len(r.candidates) > 0 {
			line("Epoch %d, at %s: %s stood as %s.", e, r.at, nodes(r.candidates),
				plural(int64(len(r.candidates)), "Candidate, voting for itself", "Candidates, each voting for itself"))
		}
		var cast []string
		for _, voter := range slices.Sorted(mapKeys(r.votes)) {
			cast = append(cast, fmt.Sprintf("%d voted for %d", voter, r.votes[voter]))
		}
		if len(cast) > 0 {
			line("  Votes: %s.", strings.Join(cast, ", "))
		}
		switch {
		case r.won != nil:
			w := r.won.Node
			by := []string{fmt.Sprintf("%d (itself)", w)}
			for _, voter := range slices.Sorted(mapKeys(r.votes)) {
				if r.votes[voter] == w {
					by = append(by, strconv.Itoa(int(voter)))
				}
			}
			line("  Node %d won with %d votes, of %s (a majority is %d); at %s it was %s.", w, len(by), strings.Join(by, ", "), majority, timeOf(*r.won), r.won.Message)
		case len(r.lost) > 0:
			for _, l := range r.lost {
				line("  Node %d %s.", l.Node, l.Message)
			}
		case len(r.candidates) > 1:
			line("  No winner: a split vote. With %d candidates each voting for itself, no candidate reached %d votes.", len(r.candidates), majority)
		case i == len(run)-1:
			line("  No winner yet.")
		default:
			line("  No winner: no majority answered.")
		}
		if i+1 < len(run) {
			line("  The next try began at %s, in epoch %d, when a randomised election timeout ran out.", rounds[run[i+1]].at, run[i+1])
		}
	}
	// Pre-votes that found no majority since, and where it stands now.
	var tries int
	var tryAt string
	end := lastSeq(evs, run[len(run)-1])
	if w := rounds[run[len(run)-1]].won; w != nil {
		end = w.Seq
		for _, ev := range evs {
			if ev.Seq > end && slices.Contains(causes, ev.Kind) {
				line("Then at %s, %s.", timeOf(ev), describe(ev))
			}
		}
	}
	for _, ev := range evs {
		if ev.Seq > end && ev.Kind == cluster.EventRoleChange && reProspect.MatchString(ev.Message) {
			if tries == 0 {
				tryAt = timeOf(ev)
			}
			tries++
		}
		if ev.Seq > end && ev.Kind == cluster.EventElection && rePreLost.MatchString(ev.Message) {
			line("Then node %d: %s.", ev.Node, ev.Message)
		}
	}
	if tries > 0 {
		line("Since %s: %d more %s for pre-votes, none of them in a new epoch: no majority granted one.", tryAt, tries, plural(int64(tries), "ask", "asks"))
	}
	line("Now: %s.", now(v))
	return strings.TrimRight(b.String(), "\n")
}

// now says who leads.
func now(v *view.View) string {
	if v.LeaderID == view.NoLeader {
		return "no leader"
	}
	return fmt.Sprintf("node %d leads epoch %d", v.LeaderID, v.LeaderEpoch)
}

// epochWord names the epochs of a run.
func epochWord(run []int32) string {
	if len(run) == 1 {
		return fmt.Sprintf("epoch %d", run[0])
	}
	return fmt.Sprintf("epochs %d to %d", run[0], run[len(run)-1])
}

// firstSeq is the sequence number of the first event of epoch e's
// election.
func firstSeq(evs []cluster.Event, e int32) uint64 {
	for _, ev := range evs {
		if ev.Kind == cluster.EventRoleChange {
			if m := reCandidate.FindStringSubmatch(ev.Message); m != nil && atoi32(m[1]) == e {
				return ev.Seq
			}
		}
		if ev.Kind == cluster.EventElection && ev.Epoch == e {
			return ev.Seq
		}
	}
	return 0
}

// lastSeq is the sequence number of the last vote or election event of
// epoch e.
func lastSeq(evs []cluster.Event, e int32) uint64 {
	var seq uint64
	for _, ev := range evs {
		if (ev.Kind == cluster.EventElection || ev.Kind == cluster.EventVote) && ev.Epoch == e {
			seq = ev.Seq
		}
	}
	return seq
}

// lastBefore is the last event of one of kinds before seq.
func lastBefore(evs []cluster.Event, seq uint64, kinds []cluster.EventKind) (cluster.Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Seq < seq && slices.Contains(kinds, evs[i].Kind) {
			return evs[i], true
		}
	}
	return cluster.Event{}, false
}

// describe is an event as words in a sentence.
func describe(ev cluster.Event) string {
	if ev.Node != 0 && ev.Kind == cluster.EventEndQuorumEpoch {
		return fmt.Sprintf("node %d %s", ev.Node, ev.Message)
	}
	return ev.Message
}

// timeOf is an event's time of day.
func timeOf(ev cluster.Event) string { return ev.Time.Format("15:04:05.000") }

// nodes names a list of nodes.
func nodes(list []int32) string {
	s := make([]string, len(list))
	for i, id := range list {
		s[i] = strconv.Itoa(int(id))
	}
	if len(s) == 1 {
		return "node " + s[0]
	}
	return "nodes " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// mapKeys iterates over m's keys.
func mapKeys(m map[int32]int32) func(func(int32) bool) {
	return func(yield func(int32) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
