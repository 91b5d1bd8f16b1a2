package view

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

// Load is the background load: records the engine appends to the
// metadata log on the current leader at a set rate, as a producer would,
// so that offsets and the high watermark move. Its counts run from the
// playground's start, across stops and changes of rate.
type Load struct {
	// RecordsPerSec is the rate asked for; 0 while the load is off.
	RecordsPerSec int `json:"recordsPerSec"`
	// RecordBytes is the size of each record's value on the log: a framed
	// metadata ConfigRecord (of the topic resource "load!", key "seq")
	// padded to exactly this size, which every node's loader applies.
	RecordBytes int `json:"recordBytes"`
	// NodeID is the leader the load appends to, or NoLeader while it
	// waits for one (it then pauses) or is off.
	NodeID int32 `json:"nodeId"`
	// Committed counts the records the quorum committed: the leader's
	// high watermark passed them.
	Committed int64 `json:"committedRecords"`
	// Failed counts the records whose append failed: the node refused
	// them (it no longer led) or lost the leadership before they
	// committed. A record that reached the old leader's log may still be
	// committed by the next leader: its fate is unknown, as with Kafka's
	// NOT_LEADER_OR_FOLLOWER.
	Failed int64 `json:"failedRecords"`
	// Skipped counts the records the rate called for but the load did not
	// send: there was no leader, or too much was waiting to commit.
	Skipped int64 `json:"skippedRecords"`
	// InFlight counts the records appended and not yet committed or failed.
	InFlight int64 `json:"inFlightRecords"`
	// LastError is the error of the last failed append, and
	// LastErrorTimestamp when it failed (Unix milliseconds, 0 if never).
	LastError          string `json:"lastError,omitempty"`
	LastErrorTimestamp int64  `json:"lastErrorTimestamp,omitempty"`
	// StartedBy says who set the load running at its rate, "" if unknown
	// or off.
	StartedBy Origin `json:"startedBy,omitempty"`
}

// Origin says where an action came from: who started a load.
type Origin string

// Origins.
const (
	// OriginCLI: a kraftlab command typed in a shell.
	OriginCLI Origin = "cli"
	// OriginScenario: a line of a scenario or a lesson.
	OriginScenario Origin = "scenario"
	// OriginScreen: a key on the live screen.
	OriginScreen Origin = "screen"
)

// Valid reports whether o is one of the origins, or unknown ("").
func (o Origin) Valid() bool {
	switch o {
	case "", OriginCLI, OriginScenario, OriginScreen:
		return true
	}
	return false
}

// Words spells the origin in a sentence: "the screen".
func (o Origin) Words() string {
	switch o {
	case OriginCLI:
		return "the command line"
	case OriginScenario:
		return "a scenario line"
	case OriginScreen:
		return "the screen"
	}
	return "somewhere unknown"
}

// On reports whether the load runs.
func (l Load) On() bool { return l.RecordsPerSec > 0 }

// String says what the load does, in a few words.
func (l Load) String() string {
	if !l.On() {
		return "off"
	}
	s := LoadRate(l.RecordsPerSec, l.RecordBytes)
	if l.NodeID == NoLeader {
		return s + ", paused: no leader"
	}
	return fmt.Sprintf("%s on node %d", s, l.NodeID)
}

// LoadRate spells a rate as the events do: "200 rec/s of 100 B".
func LoadRate(recordsPerSec, recordBytes int) string {
	return fmt.Sprintf("%d rec/s of %s", recordsPerSec, humanize.IBytes(uint64(recordBytes)))
}

// TopicLoad is the background load of one topic: records produced through
// the data plane by a real Kafka client (franz-go) on the playground's
// brokers, so that partition offsets, high watermarks and fetchers move.
type TopicLoad struct {
	// Topic is the topic the load produces to, "" while it is off.
	Topic string `json:"topic,omitempty"`
	// RecordsPerSec and RecordBytes are the rate and each record's value
	// size.
	RecordsPerSec int `json:"recordsPerSec"`
	RecordBytes   int `json:"recordBytes"`
	// Acked counts the records the partition leaders acknowledged
	// (acks=all, idempotent), Failed those the client gave up on, Skipped
	// those the rate called for while too many waited for an answer.
	Acked   int64 `json:"ackedRecords"`
	Failed  int64 `json:"failedRecords"`
	Skipped int64 `json:"skippedRecords"`
	// InFlight counts the records sent and not yet answered.
	InFlight int64 `json:"inFlightRecords"`
	// LastError is the client's last error, and LastErrorTimestamp when it
	// came (Unix milliseconds, 0 if never).
	LastError          string `json:"lastError,omitempty"`
	LastErrorTimestamp int64  `json:"lastErrorTimestamp,omitempty"`
	// StartedBy says who set the load running at its rate, "" if unknown.
	StartedBy Origin `json:"startedBy,omitempty"`
}

// On reports whether the topic load runs.
func (l TopicLoad) On() bool { return l.Topic != "" && l.RecordsPerSec > 0 }

// String says what the topic load does, in a few words.
func (l TopicLoad) String() string {
	if !l.On() {
		return "off"
	}
	return fmt.Sprintf("%s to topic %s (%d acked, %d failed)", LoadRate(l.RecordsPerSec, l.RecordBytes), l.Topic, l.Acked, l.Failed)
}

// TopicLoad returns the load of topic name, if one runs.
func (v *View) TopicLoad(name string) (TopicLoad, bool) {
	for _, l := range v.TopicLoads {
		if l.Topic == name {
			return l, true
		}
	}
	return TopicLoad{}, false
}
