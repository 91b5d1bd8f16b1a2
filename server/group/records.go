package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetsTopic is the internal topic that holds the groups and their
// committed offsets.
const OffsetsTopic = "__consumer_offsets"

// RecordType is the int16 a __consumer_offsets key begins with: which
// record it is (Kafka's CoordinatorRecordType). Types 3 to 8 are consumer
// groups' (consumerrecords.go); those above are the share and streams
// groups' records, which this coordinator neither writes nor reads.
type RecordType int16

// The record types this coordinator knows.
const (
	// LegacyOffsetCommitType is version 0 of the offset commit key,
	// read as OffsetCommitType.
	LegacyOffsetCommitType RecordType = 0
	// OffsetCommitType is a committed offset: OffsetCommitKey and
	// OffsetCommitValue.
	OffsetCommitType RecordType = 1
	// GroupMetadataType is a classic group's metadata: GroupMetadataKey
	// and GroupMetadataValue.
	GroupMetadataType RecordType = 2
)

// Versions of the values this coordinator writes, Kafka 4.4's
// (GroupCoordinatorRecordHelpers).
const (
	offsetCommitValueVersion  = 4
	groupMetadataValueVersion = 3
)

// ErrBadRecord is the error of a key or value that does not decode.
var ErrBadRecord = errors.New("bad __consumer_offsets record")

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Committed is one committed offset, as OffsetCommitValue holds it.
type Committed struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64
	// ExpireTimestamp is version 1's, -1 when absent.
	ExpireTimestamp int64
	// logOffset is where the record that set it sits in the partition:
	// an append answered late never undoes a later one.
	logOffset int64
}

// Record is one decoded __consumer_offsets record.
type Record struct {
	Type RecordType
	// Group is the record's group.
	Group string
	// Partition is an offset commit's topic partition.
	Partition TopicPartition
	// Offset is an offset commit's value; nil for a tombstone.
	Offset *Committed
	// Metadata is a group metadata's value; nil for a tombstone.
	Metadata *kmsg.GroupMetadataValue
	// Consumer is a consumer group record (types 3 to 8).
	Consumer *ConsumerRecord
}

// Known reports whether the record is of a type this coordinator reads.
func (r Record) Known() bool {
	return r.Type >= 0 && r.Type <= GroupMetadataType || isConsumerType(r.Type)
}

// Decode decodes a record's key and value (nil value: a tombstone). A key
// of another record type decodes with only Type set, for the caller to
// skip, as Kafka's loader skips unknown record types.
func Decode(key, value []byte) (Record, error) {
	if len(key) < 2 {
		return Record{}, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(key))
	}
	r := Record{Type: RecordType(int16(binary.BigEndian.Uint16(key)))}
	switch r.Type {
	case LegacyOffsetCommitType, OffsetCommitType:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return Record{}, fmt.Errorf("%w: offset commit key: %v", ErrBadRecord, err)
		}
		r.Group, r.Partition = k.Group, TopicPartition{k.Topic, k.Partition}
		if value == nil {
			return r, nil
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return Record{}, fmt.Errorf("%w: offset commit value: %v", ErrBadRecord, err)
		}
		if v.Version < 0 || v.Version > offsetCommitValueVersion {
			return Record{}, fmt.Errorf("%w: offset commit value version %d", ErrBadRecord, v.Version)
		}
		c := Committed{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp, ExpireTimestamp: -1}
		if v.Version >= 3 {
			c.LeaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 {
			c.ExpireTimestamp = v.ExpireTimestamp
		}
		r.Offset = &c
	case GroupMetadataType:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return Record{}, fmt.Errorf("%w: group metadata key: %v", ErrBadRecord, err)
		}
		r.Group = k.Group
		if value == nil {
			return r, nil
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(value); err != nil {
			return Record{}, fmt.Errorf("%w: group metadata value: %v", ErrBadRecord, err)
		}
		if v.Version < 0 || v.Version > groupMetadataValueVersion+1 {
			return Record{}, fmt.Errorf("%w: group metadata value version %d", ErrBadRecord, v.Version)
		}
		r.Metadata = &v
	default:
		if !isConsumerType(r.Type) {
			return r, nil
		}
		c, err := decodeConsumer(r.Type, key, value)
		if err != nil {
			return Record{}, err
		}
		r.Group, r.Consumer = c.Group, &c
	}
	return r, nil
}

// OffsetCommitRecord is the record of one committed offset, or its
// tombstone when c is nil.
func OffsetCommitRecord(group string, tp TopicPartition, c *Committed) storage.Record {
	k := kmsg.OffsetCommitKey{Version: int16(OffsetCommitType), Group: group, Topic: tp.Topic, Partition: tp.Partition}
	rec := storage.Record{Key: k.AppendTo(nil)}
	if c != nil {
		v := kmsg.NewOffsetCommitValue()
		v.Version, v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp = offsetCommitValueVersion, c.Offset, c.LeaderEpoch, c.Metadata, c.CommitTimestamp
		rec.Value = v.AppendTo(nil)
	}
	return rec
}

// GroupMetadataRecord is the record of a group's metadata, or its
// tombstone when v is nil.
func GroupMetadataRecord(group string, v *kmsg.GroupMetadataValue) storage.Record {
	k := kmsg.GroupMetadataKey{Version: int16(GroupMetadataType), Group: group}
	rec := storage.Record{Key: k.AppendTo(nil)}
	if v != nil {
		v.Version = groupMetadataValueVersion
		rec.Value = v.AppendTo(nil)
	}
	return rec
}
