package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Control record types the quorum writes (Kafka's ControlRecordType).
// kmsg calls type 2 "QuorumReassignment"; Kafka renamed it LEADER_CHANGE.
const (
	ControlLeaderChange   = kmsg.ControlRecordKeyTypeQuorumReassignment
	ControlSnapshotHeader = kmsg.ControlRecordKeyTypeSnapshotHeader
	ControlSnapshotFooter = kmsg.ControlRecordKeyTypeSnapshotFooter
)

func controlKey(t kmsg.ControlRecordKeyType) []byte {
	k := kmsg.ControlRecordKey{Version: 0, Type: t}
	return k.AppendTo(nil)
}

// LeaderChangeRecord is the control record a new leader writes at the start
// of its epoch, naming itself, the voters and those that granted its vote.
func LeaderChangeRecord(leader int32, voters, granting []int32) Record {
	m := kmsg.LeaderChangeMessage{Version: 0, LeaderID: leader}
	for _, id := range voters {
		m.Voters = append(m.Voters, kmsg.LeaderChangeMessageVoter{VoterID: id})
	}
	for _, id := range granting {
		m.GrantingVoters = append(m.GrantingVoters, kmsg.LeaderChangeMessageVoter{VoterID: id})
	}
	return Record{Key: controlKey(ControlLeaderChange), Value: m.AppendTo(nil)}
}

// SnapshotHeaderRecord opens a snapshot (Kafka's SnapshotHeaderRecord v0).
func SnapshotHeaderRecord(lastContainedLogTimestamp int64) Record {
	v := binary.BigEndian.AppendUint16(nil, 0)
	v = binary.BigEndian.AppendUint64(v, uint64(lastContainedLogTimestamp))
	v = append(v, 0) // no tagged fields
	return Record{Key: controlKey(ControlSnapshotHeader), Value: v}
}

// SnapshotFooterRecord closes a snapshot (Kafka's SnapshotFooterRecord v0).
func SnapshotFooterRecord() Record {
	v := binary.BigEndian.AppendUint16(nil, 0)
	v = append(v, 0)
	return Record{Key: controlKey(ControlSnapshotFooter), Value: v}
}

// ControlType returns the type of a control record from its key.
func ControlType(r Record) (kmsg.ControlRecordKeyType, error) {
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(r.Key); err != nil {
		return 0, fmt.Errorf("control record key at offset %d: %w", r.Offset, err)
	}
	return k.Type, nil
}

// ParseLeaderChange decodes a LeaderChange control record's value.
func ParseLeaderChange(r Record) (kmsg.LeaderChangeMessage, error) {
	var m kmsg.LeaderChangeMessage
	if err := m.ReadFrom(r.Value); err != nil {
		return m, fmt.Errorf("leader change record at offset %d: %w", r.Offset, err)
	}
	return m, nil
}
