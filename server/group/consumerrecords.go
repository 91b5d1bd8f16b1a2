package group

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kbin"
)

// The record types of consumer groups (KIP-848), in Kafka's
// CoordinatorRecordType numbering. kmsg has no types for them: they are
// encoded here in Kafka's formats (keys version 0 not flexible, values
// version 0 flexible).
const (
	// ConsumerGroupMetadataType holds a consumer group's epoch.
	ConsumerGroupMetadataType RecordType = 3
	// ConsumerGroupPartitionMetadataType is the subscribed topics'
	// metadata before Kafka 4.1; read and ignored.
	ConsumerGroupPartitionMetadataType RecordType = 4
	// ConsumerGroupMemberMetadataType holds one member's subscription.
	ConsumerGroupMemberMetadataType RecordType = 5
	// ConsumerGroupTargetAssignmentMetadataType holds the target
	// assignment's epoch.
	ConsumerGroupTargetAssignmentMetadataType RecordType = 6
	// ConsumerGroupTargetAssignmentMemberType holds one member's target
	// assignment.
	ConsumerGroupTargetAssignmentMemberType RecordType = 7
	// ConsumerGroupCurrentMemberAssignmentType holds one member's epochs,
	// state and current assignment.
	ConsumerGroupCurrentMemberAssignmentType RecordType = 8
)

// TopicPartitions are partitions of one topic, named by its id.
type TopicPartitions struct {
	TopicID    [16]byte
	Partitions []int32
	// AssignmentEpochs are, in a current assignment record, the epoch at
	// which each partition was assigned to the member (a tagged field);
	// nil when absent.
	AssignmentEpochs []int32
}

// MemberSubscription is a ConsumerGroupMemberMetadataValue.
type MemberSubscription struct {
	InstanceID, RackID *string
	ClientID           string
	ClientHost         string
	Topics             []string
	Regex              *string
	RebalanceTimeoutMs int32
	ServerAssignor     *string
}

// MemberAssignment is a ConsumerGroupCurrentMemberAssignmentValue.
type MemberAssignment struct {
	MemberEpoch, PreviousMemberEpoch int32
	State                            MemberState
	Assigned, PendingRevocation      []TopicPartitions
}

// ConsumerRecord is one decoded consumer group record; a nil value field
// of its type is a tombstone.
type ConsumerRecord struct {
	Type     RecordType
	Group    string
	MemberID string
	// Epoch is the group epoch (type 3) or the target assignment epoch
	// (type 6); Tombstone says the record deletes.
	Epoch        int32
	Tombstone    bool
	Subscription *MemberSubscription
	Target       []TopicPartitions
	Current      *MemberAssignment
}

// consumerKey encodes a key: the type, the group id and, for member
// records, the member id.
func consumerKey(t RecordType, group, member string, withMember bool) []byte {
	b := kbin.AppendInt16(nil, int16(t))
	b = kbin.AppendString(b, group)
	if withMember {
		b = kbin.AppendString(b, member)
	}
	return b
}

func appendTopicPartitions(b []byte, tps []TopicPartitions) []byte {
	b = kbin.AppendCompactArrayLen(b, len(tps))
	for _, tp := range tps {
		b = kbin.AppendUuid(b, tp.TopicID)
		b = kbin.AppendCompactArrayLen(b, len(tp.Partitions))
		for _, p := range tp.Partitions {
			b = kbin.AppendInt32(b, p)
		}
		if tp.AssignmentEpochs == nil {
			b = kbin.AppendUvarint(b, 0) // no tagged fields
			continue
		}
		// Tag 0: the assignment epochs, a compact array of int32.
		arr := kbin.AppendCompactArrayLen(nil, len(tp.AssignmentEpochs))
		for _, e := range tp.AssignmentEpochs {
			arr = kbin.AppendInt32(arr, e)
		}
		b = kbin.AppendUvarint(b, 1)
		b = kbin.AppendUvarint(b, 0)
		b = kbin.AppendUvarint(b, uint32(len(arr)))
		b = append(b, arr...)
	}
	return b
}

// ConsumerGroupMetadataRecord is the record of a consumer group's epoch,
// or its tombstone.
func ConsumerGroupMetadataRecord(group string, epoch int32, tombstone bool) storage.Record {
	r := storage.Record{Key: consumerKey(ConsumerGroupMetadataType, group, "", false)}
	if !tombstone {
		b := kbin.AppendInt16(nil, 0)
		b = kbin.AppendInt32(b, epoch)
		r.Value = kbin.AppendUvarint(b, 0)
	}
	return r
}

// ConsumerGroupMemberRecord is the record of a member's subscription, or
// its tombstone when s is nil.
func ConsumerGroupMemberRecord(group, member string, s *MemberSubscription) storage.Record {
	r := storage.Record{Key: consumerKey(ConsumerGroupMemberMetadataType, group, member, true)}
	if s != nil {
		b := kbin.AppendInt16(nil, 0)
		b = kbin.AppendCompactNullableString(b, s.InstanceID)
		b = kbin.AppendCompactNullableString(b, s.RackID)
		b = kbin.AppendCompactString(b, s.ClientID)
		b = kbin.AppendCompactString(b, s.ClientHost)
		b = kbin.AppendCompactArrayLen(b, len(s.Topics))
		for _, t := range s.Topics {
			b = kbin.AppendCompactString(b, t)
		}
		b = kbin.AppendCompactNullableString(b, s.Regex)
		b = kbin.AppendInt32(b, s.RebalanceTimeoutMs)
		b = kbin.AppendCompactNullableString(b, s.ServerAssignor)
		r.Value = kbin.AppendUvarint(b, 0)
	}
	return r
}

// ConsumerGroupTargetMetadataRecord is the record of the target
// assignment's epoch, or its tombstone.
func ConsumerGroupTargetMetadataRecord(group string, epoch int32, tombstone bool) storage.Record {
	r := storage.Record{Key: consumerKey(ConsumerGroupTargetAssignmentMetadataType, group, "", false)}
	if !tombstone {
		b := kbin.AppendInt16(nil, 0)
		b = kbin.AppendInt32(b, epoch)
		r.Value = kbin.AppendUvarint(b, 0)
	}
	return r
}

// ConsumerGroupTargetMemberRecord is the record of a member's target
// assignment, or its tombstone.
func ConsumerGroupTargetMemberRecord(group, member string, target []TopicPartitions, tombstone bool) storage.Record {
	r := storage.Record{Key: consumerKey(ConsumerGroupTargetAssignmentMemberType, group, member, true)}
	if !tombstone {
		b := kbin.AppendInt16(nil, 0)
		b = appendTopicPartitions(b, target)
		r.Value = kbin.AppendUvarint(b, 0)
	}
	return r
}

// ConsumerGroupCurrentRecord is the record of a member's current
// assignment, or its tombstone when a is nil.
func ConsumerGroupCurrentRecord(group, member string, a *MemberAssignment) storage.Record {
	r := storage.Record{Key: consumerKey(ConsumerGroupCurrentMemberAssignmentType, group, member, true)}
	if a != nil {
		b := kbin.AppendInt16(nil, 0)
		b = kbin.AppendInt32(b, a.MemberEpoch)
		b = kbin.AppendInt32(b, a.PreviousMemberEpoch)
		b = kbin.AppendInt8(b, int8(a.State))
		b = appendTopicPartitions(b, a.Assigned)
		b = appendTopicPartitions(b, a.PendingRevocation)
		r.Value = kbin.AppendUvarint(b, 0)
	}
	return r
}

// skipTags skips a flexible struct's tagged fields.
func skipTags(r *kbin.Reader) {
	n := r.Uvarint()
	for range n {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
}

// readArrayLen reads a compact array's length, -1 for null; a length
// longer than the bytes left is an error (every element takes a byte).
func readArrayLen(r *kbin.Reader) (int, error) {
	n := int(r.CompactArrayLen())
	if n > len(r.Src) {
		return 0, fmt.Errorf("%w: array of %d in %d bytes", ErrBadRecord, n, len(r.Src))
	}
	return n, nil
}

func readTopicPartitions(r *kbin.Reader) ([]TopicPartitions, error) {
	n, err := readArrayLen(r)
	if err != nil {
		return nil, err
	}
	out := make([]TopicPartitions, 0, max(n, 0))
	for range n {
		tp := TopicPartitions{TopicID: r.Uuid()}
		np, err := readArrayLen(r)
		if err != nil {
			return nil, err
		}
		for range max(np, 0) {
			tp.Partitions = append(tp.Partitions, r.Int32())
		}
		for range r.Uvarint() {
			tag, size := r.Uvarint(), int(r.Uvarint())
			field := &kbin.Reader{Src: r.Span(size)}
			if tag != 0 || !r.Ok() {
				continue
			}
			ne, err := readArrayLen(field)
			if err != nil {
				return nil, err
			}
			if ne >= 0 {
				tp.AssignmentEpochs = make([]int32, 0, ne)
				for range ne {
					tp.AssignmentEpochs = append(tp.AssignmentEpochs, field.Int32())
				}
			}
			if err := field.Complete(); err != nil {
				return nil, fmt.Errorf("%w: assignment epochs: %v", ErrBadRecord, err)
			}
		}
		out = append(out, tp)
	}
	return out, nil
}

// decodeConsumer decodes a consumer group record's key and value.
func decodeConsumer(t RecordType, key, value []byte) (ConsumerRecord, error) {
	rec := ConsumerRecord{Type: t, Tombstone: value == nil}
	kr := kbin.Reader{Src: key[2:]}
	rec.Group = kr.String()
	switch t {
	case ConsumerGroupMemberMetadataType, ConsumerGroupTargetAssignmentMemberType, ConsumerGroupCurrentMemberAssignmentType:
		rec.MemberID = kr.String()
	}
	if err := kr.Complete(); err != nil {
		return ConsumerRecord{}, fmt.Errorf("%w: key of type %d: %v", ErrBadRecord, t, err)
	}
	if value == nil {
		return rec, nil
	}
	if len(value) < 2 || binary.BigEndian.Uint16(value) != 0 {
		return ConsumerRecord{}, fmt.Errorf("%w: value of type %d: not version 0", ErrBadRecord, t)
	}
	r := &kbin.Reader{Src: value[2:]}
	var err error
	switch t {
	case ConsumerGroupMetadataType, ConsumerGroupTargetAssignmentMetadataType:
		rec.Epoch = r.Int32()
	case ConsumerGroupPartitionMetadataType:
		return rec, nil
	case ConsumerGroupMemberMetadataType:
		s := &MemberSubscription{}
		s.InstanceID = r.CompactNullableString()
		s.RackID = r.CompactNullableString()
		s.ClientID = r.CompactString()
		s.ClientHost = r.CompactString()
		var n int
		if n, err = readArrayLen(r); err == nil {
			for range max(n, 0) {
				s.Topics = append(s.Topics, r.CompactString())
			}
			s.Regex = r.CompactNullableString()
			s.RebalanceTimeoutMs = r.Int32()
			s.ServerAssignor = r.CompactNullableString()
		}
		rec.Subscription = s
	case ConsumerGroupTargetAssignmentMemberType:
		rec.Target, err = readTopicPartitions(r)
	case ConsumerGroupCurrentMemberAssignmentType:
		a := &MemberAssignment{}
		a.MemberEpoch, a.PreviousMemberEpoch, a.State = r.Int32(), r.Int32(), MemberState(r.Int8())
		if a.Assigned, err = readTopicPartitions(r); err == nil {
			a.PendingRevocation, err = readTopicPartitions(r)
		}
		rec.Current = a
	}
	if err != nil {
		return ConsumerRecord{}, fmt.Errorf("value of type %d: %w", t, err)
	}
	skipTags(r)
	if err := r.Complete(); err != nil {
		return ConsumerRecord{}, fmt.Errorf("%w: value of type %d: %v", ErrBadRecord, t, err)
	}
	return rec, nil
}

// isConsumerType reports whether t is a consumer group record type.
func isConsumerType(t RecordType) bool {
	return t >= ConsumerGroupMetadataType && t <= ConsumerGroupCurrentMemberAssignmentType
}

// sortedTopicPartitions is set as records and responses list it: by
// topic id, partitions ascending.
func sortedTopicPartitions(set partSet) []TopicPartitions {
	by := map[[16]byte][]int32{}
	for tp := range set {
		by[tp.topic] = append(by[tp.topic], tp.partition)
	}
	out := make([]TopicPartitions, 0, len(by))
	for id, ps := range by {
		slices.Sort(ps)
		out = append(out, TopicPartitions{TopicID: id, Partitions: ps})
	}
	slices.SortFunc(out, func(a, b TopicPartitions) int { return slices.Compare(a.TopicID[:], b.TopicID[:]) })
	return out
}

// withEpochs is tps with each partition's assignment epoch from since,
// dflt for one it lacks.
func withEpochs(tps []TopicPartitions, since map[idPartition]int32, dflt int32) []TopicPartitions {
	for i := range tps {
		tps[i].AssignmentEpochs = make([]int32, len(tps[i].Partitions))
		for j, p := range tps[i].Partitions {
			e, ok := since[idPartition{tps[i].TopicID, p}]
			if !ok {
				e = dflt
			}
			tps[i].AssignmentEpochs[j] = e
		}
	}
	return tps
}

// epochsOf are the assignment epochs tps record, dflt where they have
// none.
func epochsOf(tps []TopicPartitions, dflt int32, into map[idPartition]int32) {
	for _, tp := range tps {
		for j, p := range tp.Partitions {
			e := dflt
			if j < len(tp.AssignmentEpochs) {
				e = tp.AssignmentEpochs[j]
			}
			into[idPartition{tp.TopicID, p}] = e
		}
	}
}

// partSetOf is the set of tps.
func partSetOf(tps []TopicPartitions) partSet {
	out := partSet{}
	for _, tp := range tps {
		for _, p := range tp.Partitions {
			out[idPartition{tp.TopicID, p}] = struct{}{}
		}
	}
	return out
}

// Encode is the record c decodes from.
func (c ConsumerRecord) Encode() storage.Record {
	switch c.Type {
	case ConsumerGroupMetadataType:
		return ConsumerGroupMetadataRecord(c.Group, c.Epoch, c.Tombstone)
	case ConsumerGroupMemberMetadataType:
		return ConsumerGroupMemberRecord(c.Group, c.MemberID, c.Subscription)
	case ConsumerGroupTargetAssignmentMetadataType:
		return ConsumerGroupTargetMetadataRecord(c.Group, c.Epoch, c.Tombstone)
	case ConsumerGroupTargetAssignmentMemberType:
		return ConsumerGroupTargetMemberRecord(c.Group, c.MemberID, c.Target, c.Tombstone)
	case ConsumerGroupCurrentMemberAssignmentType:
		return ConsumerGroupCurrentRecord(c.Group, c.MemberID, c.Current)
	}
	return storage.Record{Key: consumerKey(c.Type, c.Group, "", false)}
}
