package raft

import (
	"fmt"
	"time"
)

// EventKind names one kind of change the node reports.
type EventKind uint8

// The kinds of Event. Each names the fields of Event it sets beside Kind,
// Time and Epoch (the node's epoch once the change is made).
const (
	// EventRoleChanged: a change of role, epoch, leader or vote. From,
	// FromEpoch, FromLeader and FromVoted are the old state; To, Epoch,
	// Leader and Voted the new.
	EventRoleChanged EventKind = iota + 1
	// EventVoteGranted: this node granted Candidate a vote (PreVote: a
	// pre-vote, which changes no state) in Epoch, the vote's epoch.
	EventVoteGranted
	// EventElectionWon: this node won the election of Epoch; LogEndOffset is
	// the epoch's start offset, where its LeaderChange record goes.
	EventElectionWon
	// EventBeginQuorumEpochReceived: this voter accepted Leader's
	// BeginQuorumEpoch for Epoch.
	EventBeginQuorumEpochReceived
	// EventEndQuorumEpochSent: this resigned leader sent its first
	// EndQuorumEpoch of Epoch, naming Successors (most caught up first).
	EventEndQuorumEpochSent
	// EventEndQuorumEpochReceived: Leader resigned Epoch, naming Successors.
	EventEndQuorumEpochReceived
	// EventTruncated: the log diverged from Leader's; records from ToOffset
	// to FromOffset (the old log end offset) were removed.
	EventTruncated
	// EventSnapshotFetched: the log restarted at the end of Snapshot,
	// downloaded from Leader.
	EventSnapshotFetched
	// EventSnapshotLoaded: the listener was given Snapshot.
	EventSnapshotLoaded
	// EventSnapshotTaken: CreateSnapshot wrote Snapshot.
	EventSnapshotTaken
	// EventLogStartAdvanced: the log start moved from FromOffset to ToOffset
	// after a snapshot.
	EventLogStartAdvanced
	// EventHighWatermarkKnown: the first high watermark this node learned
	// (or, as leader, set) in Epoch. Later moves are not reported.
	EventHighWatermarkKnown
	// EventElectionLost: this node's election (PreVote: its pre-vote) in
	// Epoch ended without a majority: Granted voted for it (itself
	// included), Rejected refused, the rest of the Voters never answered;
	// Majority is how many it needed. After a lost vote the node is
	// Prospective and asks for pre-votes at once, and NextTry is when that
	// round times out; after a lost pre-vote NextTry is when it may ask
	// again (at once when its election timeout has run out), zero when it
	// follows Leader again (a Prospective that knew a leader goes back to
	// it, KIP-996) until its fetch timeout.
	EventElectionLost
	// EventUnsafe: news refused because it would break Raft's safety or
	// overflow a counter; Refused says what and why. KafkaStops reports
	// that Kafka's KafkaRaftClient would throw and stop on the same news,
	// where kraftlab ignores it and goes on.
	EventUnsafe
)

var eventKindNames = [...]string{
	EventRoleChanged:              "RoleChanged",
	EventVoteGranted:              "VoteGranted",
	EventElectionWon:              "ElectionWon",
	EventBeginQuorumEpochReceived: "BeginQuorumEpochReceived",
	EventEndQuorumEpochSent:       "EndQuorumEpochSent",
	EventEndQuorumEpochReceived:   "EndQuorumEpochReceived",
	EventTruncated:                "Truncated",
	EventSnapshotFetched:          "SnapshotFetched",
	EventSnapshotLoaded:           "SnapshotLoaded",
	EventSnapshotTaken:            "SnapshotTaken",
	EventLogStartAdvanced:         "LogStartAdvanced",
	EventHighWatermarkKnown:       "HighWatermarkKnown",
	EventElectionLost:             "ElectionLost",
	EventUnsafe:                   "Unsafe",
}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one change the node made, reported as data. The node queues
// events in the order the changes happen, before the outbox messages that
// reveal them; the driver drains them with TakeEvents, like the outbox.
// Fields a kind does not use are zero, except the offsets and ids that use
// -1 for none as noted.
type Event struct {
	Kind  EventKind
	Time  time.Time
	Epoch int32

	// EventRoleChanged: the old and the new state.
	From, To                         Role
	FromEpoch, FromLeader, FromVoted int32
	// Leader is the new leader (EventRoleChanged, -1 for none), the leader
	// that sent the news (BeginQuorumEpochReceived, EndQuorumEpochReceived,
	// Truncated, SnapshotFetched), the leader it follows again
	// (ElectionLost, -1 for none) or this node (EndQuorumEpochSent). Voted
	// is the new vote (RoleChanged).
	Leader, Voted int32

	// EventVoteGranted: the candidate, the epoch its request carried, and
	// whether it was a pre-vote. A vote is for that epoch; a pre-vote
	// carries the candidate's current epoch and asks about standing in the
	// next one (Prospective does not raise the epoch).
	Candidate      int32
	CandidateEpoch int32
	PreVote        bool

	// EventEndQuorumEpochSent and EventEndQuorumEpochReceived.
	Successors []int32

	// EventTruncated (FromOffset the old log end, ToOffset the new) and
	// EventLogStartAdvanced (the old and the new log start).
	FromOffset, ToOffset int64

	// EventSnapshotFetched, EventSnapshotLoaded, EventSnapshotTaken.
	Snapshot SnapshotID

	// EventHighWatermarkKnown.
	HighWatermark int64

	// EventUnsafe.
	Refused    string
	KafkaStops bool

	// EventElectionWon: the log end offset when the epoch started.
	LogEndOffset int64

	// EventElectionLost: who granted and refused, the number of voters,
	// the majority needed, and when the next try may start.
	Granted, Rejected []int32
	Voters, Majority  int
	NextTry           time.Time
}

// TakeEvents returns the events queued since the last call, oldest first,
// and clears them; nil when there are none.
func (n *Node) TakeEvents() []Event {
	out := n.events
	n.events = nil
	return out
}

func (n *Node) emit(e Event) {
	e.Time, e.Epoch = n.now, n.epoch
	n.events = append(n.events, e)
}

// roleState is what EventRoleChanged compares.
type roleState struct {
	role                 Role
	epoch, leader, voted int32
}

// reportRole queues EventRoleChanged if the role, epoch, leader or vote
// differs from what was last reported. Transitions call it once their
// fields are set.
func (n *Node) reportRole() {
	cur := roleState{n.role, n.epoch, n.leader, n.voted}
	old := n.reported
	if cur == old {
		return
	}
	n.reported = cur
	n.emit(Event{
		Kind: EventRoleChanged,
		From: old.role, FromEpoch: old.epoch, FromLeader: old.leader, FromVoted: old.voted,
		To: cur.role, Leader: cur.leader, Voted: cur.voted,
	})
}

// noteHighWatermark queues EventHighWatermarkKnown the first time the node
// publishes a high watermark in its epoch. It allocates nothing otherwise,
// so the commit path may call it freely.
func (n *Node) noteHighWatermark() {
	if n.hwmEpoch == n.epoch {
		return
	}
	if hw := n.highWatermark(); hw >= 0 {
		n.hwmEpoch = n.epoch
		n.emit(Event{Kind: EventHighWatermarkKnown, HighWatermark: hw})
	}
}

// unsafe builds the ErrUnsafe error for refused news and queues the
// matching EventUnsafe. kafkaStops says whether Kafka would stop on it.
func (n *Node) unsafe(kafkaStops bool, format string, args ...any) error {
	err := fmt.Errorf(format+": %w", append(args, ErrUnsafe)...)
	n.emit(Event{Kind: EventUnsafe, Refused: fmt.Sprintf(format, args...), KafkaStops: kafkaStops})
	return err
}

// emitBefore queues e ahead of the events queued since mark, so that news
// a node received reads before the transitions it caused.
func (n *Node) emitBefore(mark int, e Event) {
	n.emit(e)
	last := n.events[len(n.events)-1]
	copy(n.events[mark+1:], n.events[mark:len(n.events)-1])
	n.events[mark] = last
}
