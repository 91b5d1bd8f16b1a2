package cluster

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

// Bounds of the background load (Engine.SetLoad).
const (
	// DefaultLoadRecordBytes is the size of a load record unless set.
	DefaultLoadRecordBytes = 100
	// MaxLoadRate bounds the records per second.
	MaxLoadRate = 100_000
	// MaxLoadRecordBytes bounds a record's size: about Kafka's default
	// max.message.bytes.
	MaxLoadRecordBytes = 1 << 20
	// MaxLoadBytesPerSec bounds rate × size, so that the load leaves the
	// machine (and its disk, which every voter fsyncs) responsive.
	MaxLoadBytesPerSec = 32 << 20
)

// ValidateLoad checks the settings of a background load: recordsPerSec 0
// stops it, whatever recordBytes says.
func ValidateLoad(recordsPerSec, recordBytes int) error {
	switch {
	case recordsPerSec < 0 || recordsPerSec > MaxLoadRate:
		return fmt.Errorf("load rate %d records/s must be between 0 (stop) and %d", recordsPerSec, MaxLoadRate)
	case recordsPerSec == 0:
		return nil
	case recordBytes < 1 || recordBytes > MaxLoadRecordBytes:
		return fmt.Errorf("load record size %d B must be between 1 B and %s", recordBytes, humanize.IBytes(MaxLoadRecordBytes))
	case int64(recordsPerSec)*int64(recordBytes) > MaxLoadBytesPerSec:
		return fmt.Errorf("load of %d records/s of %s is %s/s, more than the %s/s a playground takes",
			recordsPerSec, humanize.IBytes(uint64(recordBytes)), humanize.IBytes(uint64(recordsPerSec)*uint64(recordBytes)), humanize.IBytes(MaxLoadBytesPerSec))
	}
	return nil
}

// LoadView is the background load: records the engine appends to the
// metadata log on the current leader at a set rate, as a producer would,
// so that offsets and the high watermark move. Its counts run from the
// playground's start, across stops and changes of rate.
type LoadView struct {
	// RecordsPerSec is the rate asked for; 0 while the load is off.
	RecordsPerSec int `json:"recordsPerSec"`
	// RecordBytes is the size of each record's value.
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
}

// On reports whether the load runs.
func (l LoadView) On() bool { return l.RecordsPerSec > 0 }

// String says what the load does, in a few words.
func (l LoadView) String() string {
	if !l.On() {
		return "off"
	}
	s := loadRate(l.RecordsPerSec, l.RecordBytes)
	if l.NodeID == NoLeader {
		return s + ", paused: no leader"
	}
	return fmt.Sprintf("%s on node %d", s, l.NodeID)
}

// loadRate spells a rate as the events do: "200 rec/s of 100 B".
func loadRate(recordsPerSec, recordBytes int) string {
	return fmt.Sprintf("%d rec/s of %s", recordsPerSec, humanize.IBytes(uint64(recordBytes)))
}
