package raft

import "time"

// progressState is where a push leader stands with one replica's log
// (etcd's tracker.StateType).
type progressState int8

const (
	// probing: the leader looks for where the replica's log matches its
	// own, one AppendEntries at a time, moving back on each refusal.
	probing progressState = iota
	// replicating: the logs match up to the match offset; the leader
	// streams records from next on, up to MaxInflight requests ahead of
	// the answers.
	replicating
	// snapshotting: the replica needs records the leader's log no longer
	// holds; the leader sends its snapshot, one chunk at a time.
	snapshotting
)

var progressStateNames = [...]string{"probing", "replicating", "snapshotting"}

func (s progressState) String() string { return progressStateNames[s] }

// progress is a push leader's view of one replica's log (etcd's
// tracker.Progress). The match offset, how far the replica's log is known
// to match the leader's and be durable, is replicaState.endOffset.
type progress struct {
	state progressState
	// next is the offset the next AppendEntries starts at (Raft's
	// nextIndex).
	next int64
	// prevAt and prevEpoch remember the epoch of the record before prevAt,
	// the last offset a request ended at, so that streaming does not read
	// the log for each request's PrevEpoch.
	prevAt    int64
	prevEpoch int32
	// flights are the requests in flight, oldest first; windowed counts
	// those that carried records.
	flights  []flight
	windowed int
	// lastSend is when the leader last sent the replica a request, for
	// heartbeats; backoffUntil pauses sending after a request failed.
	lastSend     time.Time
	backoffUntil time.Time
	// commitDue: the high watermark moved since the replica was last sent
	// a request.
	commitDue bool
	// snapshot is the snapshot being sent (snapshotting), size its length
	// and position where the next chunk starts.
	snapshot SnapshotID
	size     int64
	position int64
}

// flight is one request in flight to a replica.
type flight struct {
	id uint64
	// base and end bound the records an AppendEntries carried (end ==
	// base for none).
	base, end int64
	// leo is the leader's log end offset when it was sent, for
	// lastCaughtUp.
	leo    int64
	sentAt time.Time
	// window: it carried records, so it counts against MaxInflight.
	window bool
}

func newProgress(next int64) *progress { return &progress{next: next, prevAt: -1} }

// send records a request sent.
func (p *progress) send(f flight) {
	p.flights = append(p.flights, f)
	if f.window {
		p.windowed++
	}
}

// take removes the flight with the given request id.
func (p *progress) take(id uint64) (flight, bool) {
	for i, f := range p.flights {
		if f.id == id {
			p.flights = append(p.flights[:i], p.flights[i+1:]...)
			if f.window {
				p.windowed--
			}
			return f, true
		}
	}
	return flight{}, false
}

// keep keeps the flights keep accepts and recounts the window.
func (p *progress) keep(keep func(flight) bool) {
	k, w := 0, 0
	for _, f := range p.flights {
		if keep(f) {
			p.flights[k] = f
			k++
			if f.window {
				w++
			}
		}
	}
	clear(p.flights[k:])
	p.flights, p.windowed = p.flights[:k], w
}

// acked forgets the flights whose records the replica now holds (etcd's
// Inflights.FreeLE): their answers add nothing.
func (p *progress) acked(match int64) {
	p.keep(func(f flight) bool { return f.end > match || !f.window })
}

// expire drops the flights sent before deadline, lost on the way or
// unanswered, and reports whether one of them carried records: an empty
// one was only a heartbeat.
func (p *progress) expire(deadline time.Time) bool {
	if len(p.flights) == 0 || p.flights[0].sentAt.After(deadline) {
		return false
	}
	lost := false
	p.keep(func(f flight) bool {
		if f.sentAt.After(deadline) {
			return true
		}
		lost = lost || f.window
		return false
	})
	return lost
}

// becomeProbe starts looking for the match from next. Answers to the
// requests in flight still count when they accept, never when they refuse.
func (p *progress) becomeProbe(next int64) {
	p.state, p.next = probing, max(next, 0)
	p.forget()
}

// becomeReplicate streams from the match offset on.
func (p *progress) becomeReplicate(match int64) {
	p.state, p.next = replicating, match
	p.forget()
}

// becomeSnapshot sends the snapshot id from its start.
func (p *progress) becomeSnapshot(id SnapshotID) {
	p.state, p.snapshot, p.size, p.position = snapshotting, id, 0, 0
	p.forget()
}

// forget drops every flight: their answers are no longer awaited.
func (p *progress) forget() {
	clear(p.flights)
	p.flights, p.windowed = p.flights[:0], 0
}
