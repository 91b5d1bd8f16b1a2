package raft

import (
	"cmp"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// The leader's side of a voter set change: its replica states follow the
// set, and what it serves waits for a VotersRecord to be durable.

// updateVoters moves the leader's replica states to the new voter set: a
// new voter keeps what it fetched as an observer, a removed one becomes an
// observer (Kafka's updateVoterAndObserverStates). The high watermark is
// then counted over the new set; it never goes back.
func (ls *leaderState) updateVoters(n *Node) {
	if len(ls.voters) <= 1 {
		// A leader alone heard from nobody and needed to: its check-quorum
		// timeout starts when it first has voters to hear from, as Kafka's
		// LeaderState resets the timer while it is the only voter.
		// Otherwise a leader that led alone longer than the timeout would
		// resign the moment it added a voter.
		ls.fetchedVoters = ls.fetchedVoters[:0]
		ls.checkQuorumDeadline = n.now.Add(time.Duration(float64(n.cfg.FetchTimeout) * checkQuorumFactor))
	}
	var voters []*replicaState
	for _, id := range n.voterIDs {
		var r *replicaState
		if i := slices.IndexFunc(ls.voters, func(r *replicaState) bool { return r.id == id }); i >= 0 {
			r = ls.voters[i]
		} else if i := ls.observerFor(n, id); i >= 0 {
			r = ls.observers[i]
			ls.observers = slices.Delete(ls.observers, i, i+1)
		} else {
			r = &replicaState{id: id, endOffset: -1, acked: id == n.id}
		}
		r.voter = true
		if n.cfg.Replication == Push && id != n.id && r.push == nil {
			r.push = newProgress(n.log.LogEndOffset())
		}
		voters = append(voters, r)
	}
	for _, r := range ls.voters {
		if !n.isVoter(r.id) && r.id != n.id {
			r.voter = false
			ls.observers = append(ls.observers, r)
		}
	}
	slices.SortFunc(ls.observers, func(a, b *replicaState) int { return cmp.Compare(a.id, b.id) })
	ls.voters = voters
	ls.fetchedVoters = slices.DeleteFunc(ls.fetchedVoters, func(id int32) bool { return !n.isVoter(id) })
	ls.updateLocal(n)
}

// observerFor is the index of the observer that becomes voter id: the
// one fetching with the directory id the voter set names, else one with
// no directory id; -1 if none.
func (ls *leaderState) observerFor(n *Node, id int32) int {
	v, _ := n.history.last().Voter(id)
	if i := slices.IndexFunc(ls.observers, func(r *replicaState) bool { return r.id == id && r.dir == v.DirectoryID }); i >= 0 {
		return i
	}
	return slices.IndexFunc(ls.observers, func(r *replicaState) bool { return r.id == id && v.matches(r.id, r.dir) })
}

// servableEnd is where a leader's answers to fetches stop: its log end,
// or the offset of a VotersRecord it has not flushed yet. Kafka's leader
// flushes what it appends before any fetch can read it; kraftlab's lets
// followers read records while its own flush runs, which Raft allows
// since the leader counts only what it flushed. A voter set is the
// exception: it is in force wherever it is appended, so a leader that
// crashed and lost an unflushed VotersRecord its followers hold would
// disagree with them on who votes, and the followers it removed would
// never campaign while it could never win their votes (their logs are
// longer). Holding the record back until it is durable keeps the leader's
// log a superset of what it served.
func (n *Node) servableEnd() int64 {
	end := n.log.LogEndOffset()
	if off := n.history.lastOffset(); off >= n.log.LastFlushedOffset() && off < end {
		return off
	}
	return end
}

// batchesBefore keeps the whole batches of data that start before end.
func batchesBefore(data []byte, end int64) []byte {
	pos := 0
	for pos < len(data) {
		base, _, _, size, err := storage.PeekBatch(data[pos:])
		if err != nil || base >= end {
			break
		}
		pos += size
	}
	return data[:pos]
}
