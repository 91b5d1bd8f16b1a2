package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// EventKind says what happened.
type EventKind string

// Event kinds. The engine publishes the quorum's own changes; the
// Playground publishes the actions.
const (
	// EventElection: a node won an election and became leader.
	EventElection EventKind = "election"
	// EventRoleChange: a node moved between quorum roles.
	EventRoleChange EventKind = "role-change"
	// EventBeginQuorumEpoch: a new leader's BeginQuorumEpoch reached a voter.
	EventBeginQuorumEpoch EventKind = "begin-quorum-epoch"
	// EventEndQuorumEpoch: a resigning leader sent EndQuorumEpoch.
	EventEndQuorumEpoch EventKind = "end-quorum-epoch"
	// EventTruncation: a node cut its log back to where it diverged.
	EventTruncation EventKind = "truncation"
	// EventSnapshotTaken: a node wrote a snapshot.
	EventSnapshotTaken EventKind = "snapshot-taken"
	// EventSnapshotLoaded: a node loaded a snapshot fetched from the leader.
	EventSnapshotLoaded EventKind = "snapshot-loaded"
	// EventHighWatermark: a leader committed the first record of its epoch.
	EventHighWatermark EventKind = "high-watermark"
	// EventVote: a voter granted a vote, or a pre-vote, to a candidate.
	EventVote EventKind = "vote"
	// EventUnsafe: a node refused news that would break Raft's safety
	// (a forged epoch, a second leader in an epoch) and went on.
	EventUnsafe EventKind = "unsafe"
	// EventRecovery: a node opened its data folder at start; the message
	// says what recovery found and repaired (a torn tail cut off, indexes
	// rebuilt) and the role the node starts in.
	EventRecovery EventKind = "recovery"
	// EventNodeFailed: a node stopped on an error it cannot go on from.
	EventNodeFailed EventKind = "node-failed"
	// EventNodeRestarted: a node that stopped on a disk fault started
	// again by itself, its folder taking writes again.
	EventNodeRestarted EventKind = "node-restarted"
	// EventSnapshotFailed: a node could not write a snapshot (a full
	// disk); it runs on from its log.
	EventSnapshotFailed EventKind = "snapshot-failed"
	// EventMetadataError: a node's metadata loader stopped at a record it
	// could not decode or replay, or a part failed on an image; the node
	// runs on.
	EventMetadataError EventKind = "metadata-error"

	EventKill       EventKind = "kill"
	EventStart      EventKind = "start"
	EventStop       EventKind = "stop"
	EventResign     EventKind = "resign"
	EventLinkChange EventKind = "link-change"
	EventHeal       EventKind = "heal"
	EventSnapshot   EventKind = "snapshot"
	// EventWipe: a node lost its disk and restarted empty.
	EventWipe EventKind = "wipe"
	// EventVoters: a controller was added to or removed from a dynamic
	// quorum's voters.
	EventVoters EventKind = "voters"
	// EventDisk: a node's disk became slow, slower, faster or normal
	// again (kraftlab disk).
	EventDisk EventKind = "disk"
	// EventLoad: the background load started, changed or stopped.
	EventLoad EventKind = "load"
	EventDown EventKind = "down"
	// EventActionError: an action was refused or failed.
	EventActionError EventKind = "action-error"
	// EventMissed is never published: a subscriber that fell behind the
	// buffer receives one in place of the events it missed.
	EventMissed EventKind = "missed"
)

// Event is one entry of the event stream.
type Event struct {
	// Seq numbers events from 1, without gaps, in the order they were
	// published, which follows cause and effect: a node reports a change
	// before any message that reveals it to another node leaves.
	Seq uint64 `json:"seq"`
	// Time is when the event was published, so times rise with Seq.
	Time time.Time `json:"time"`
	Kind EventKind `json:"kind"`
	// Node is the node concerned, or 0 for the whole playground.
	Node int32 `json:"node,omitempty"`
	// Epoch is the quorum epoch the event belongs to, when it has one.
	Epoch   int32  `json:"epoch,omitempty"`
	Message string `json:"message"`
	// Missed is the number of events an EventMissed stands for.
	Missed uint64 `json:"missed,omitempty"`
	// Inferred marks an event nobody reported: kraftlab saw the change
	// between two polls of a real cluster it is attached to.
	Inferred bool `json:"inferred,omitempty"`
}

// String formats an event for a log line.
func (e Event) String() string {
	who := "-"
	if e.Node != 0 {
		who = fmt.Sprintf("node %d", e.Node)
	}
	// The sequence number is right-aligned in a fixed width (as on the
	// live screen), so that the columns after it stay put from #99 to #100.
	msg := e.Message
	if e.Inferred {
		msg = "(inferred) " + msg
	}
	return fmt.Sprintf("%s %6s %-18s %-8s %s", e.Time.Format("15:04:05.000"), "#"+strconv.FormatUint(e.Seq, 10), e.Kind, who, msg)
}

// DefaultEventCapacity is how many recent events a playground keeps.
const DefaultEventCapacity = 4096

// ErrEventsClosed is returned by Subscription.Next once the stream is closed
// and every event has been read.
var ErrEventsClosed = errors.New("event stream closed")

// Events is the event stream: a bounded ring of the latest events that
// readers follow by sequence number. Publish never waits for a reader; a
// reader that falls more than the ring's capacity behind learns how many
// events it missed.
type Events struct {
	mu     sync.Mutex
	ring   []Event
	next   uint64 // sequence number of the next event
	wake   chan struct{}
	closed bool
	now    func() time.Time
}

// NewEvents returns an event stream keeping the latest capacity events.
func NewEvents(capacity int) *Events {
	if capacity < 1 {
		capacity = 1
	}
	return &Events{ring: make([]Event, capacity), next: 1, wake: make(chan struct{}), now: time.Now}
}

// Publish stamps ev with the next sequence number (and the time, if ev has
// none: publishers that leave it out get times that rise with the
// sequence numbers), stores it and wakes the readers; it never blocks on them. Events
// published after Close are dropped.
func (e *Events) Publish(ev Event) Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ev
	}
	if ev.Time.IsZero() {
		ev.Time = e.now()
	}
	ev.Seq = e.next
	e.ring[ev.Seq%uint64(len(e.ring))] = ev
	e.next++
	close(e.wake)
	e.wake = make(chan struct{})
	return ev
}

// SetClock makes now stamp the events published without a time from now on.
func (e *Events) SetClock(now func() time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = now
}

// Close ends the stream: readers get what is left, then ErrEventsClosed.
func (e *Events) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		close(e.wake)
	}
}

// Last returns the sequence number of the latest event, 0 if none.
func (e *Events) Last() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.next - 1
}

// Since returns the events after sequence number after that the ring still
// holds, preceded by an EventMissed if some were already overwritten.
func (e *Events) Since(after uint64) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for {
		ev, ok := e.readLocked(after)
		if !ok {
			return out
		}
		out = append(out, ev)
		after = ev.Seq
	}
}

// readLocked returns the event after sequence number after, or an
// EventMissed standing for the ones overwritten.
func (e *Events) readLocked(after uint64) (Event, bool) {
	if after+1 >= e.next {
		return Event{}, false
	}
	oldest := uint64(1)
	if e.next > uint64(len(e.ring)) {
		oldest = e.next - uint64(len(e.ring))
	}
	if after+1 < oldest {
		n := oldest - after - 1
		return Event{
			Seq:     oldest - 1,
			Time:    e.ring[oldest%uint64(len(e.ring))].Time,
			Kind:    EventMissed,
			Missed:  n,
			Message: fmt.Sprintf("missed %d events (#%d..#%d): this reader fell more than %d events behind", n, after+1, oldest-1, len(e.ring)),
		}, true
	}
	return e.ring[(after+1)%uint64(len(e.ring))], true
}

// Subscription follows the stream from a sequence number on.
type Subscription struct {
	e     *Events
	after uint64
}

// Subscribe returns a subscription that yields the events after sequence
// number after (0: everything still held). It costs the stream nothing
// until Next is called, so it needs no unsubscribe.
func (e *Events) Subscribe(after uint64) *Subscription {
	return &Subscription{e: e, after: after}
}

// SubscribeNew returns a subscription to the events published from now on.
func (e *Events) SubscribeNew() *Subscription { return e.Subscribe(e.Last()) }

// Next waits for the next event. A subscriber that fell behind gets an
// EventMissed first. It returns ErrEventsClosed after the stream is closed
// and drained, or the context's error.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.e.mu.Lock()
		ev, ok := s.e.readLocked(s.after)
		closed, wake := s.e.closed, s.e.wake
		s.e.mu.Unlock()
		if ok {
			s.after = ev.Seq
			return ev, nil
		}
		if closed {
			return Event{}, ErrEventsClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}
