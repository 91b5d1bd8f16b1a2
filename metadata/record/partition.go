package record

// Leader values of PartitionRecord and PartitionChangeRecord.
const (
	// NoLeader: the partition has no leader.
	NoLeader int32 = -1
	// NoLeaderChange: a PartitionChangeRecord leaves the leader as it is
	// (the default of its Leader field).
	NoLeaderChange int32 = -2
)

// Leader recovery states (Kafka's LeaderRecoveryState).
const (
	// LeaderRecovered: the leader was elected from the ISR, or has
	// recovered from an unclean election.
	LeaderRecovered int8 = 0
	// LeaderRecovering: an unclean election chose the leader and it is
	// still recovering.
	LeaderRecovering int8 = 1
	// LeaderRecoveryNoChange: a PartitionChangeRecord leaves the state as
	// it is (its default).
	LeaderRecoveryNoChange int8 = -1
)

// PartitionRecord (apiKey 3, versions 0-2) creates a partition, or in a
// snapshot states it whole. Version 1 added Directories (KIP-858), version
// 2 the eligible leader replicas (KIP-966); Kafka 4.4 writes version 2.
type PartitionRecord struct {
	Version          int16
	PartitionID      int32
	TopicID          Uuid
	Replicas         []int32 // in preferred order
	Isr              []int32
	RemovingReplicas []int32
	AddingReplicas   []int32
	Leader           int32 // NoLeader if none
	// LeaderRecoveryState is LeaderRecovered or LeaderRecovering (tag 0).
	LeaderRecoveryState int8
	LeaderEpoch         int32
	PartitionEpoch      int32
	// Directories holds each replica's log directory, in Replicas' order
	// (v1+).
	Directories []Uuid
	// EligibleLeaderReplicas and LastKnownElr are nil when absent (tags 1
	// and 2, v2+, nullable).
	EligibleLeaderReplicas []int32
	LastKnownElr           []int32
}

// APIKey is KeyPartition.
func (*PartitionRecord) APIKey() APIKey { return KeyPartition }

// RecordVersion is r.Version.
func (r *PartitionRecord) RecordVersion() int16 { return r.Version }

func (r *PartitionRecord) check() error {
	switch v := r.Version; {
	case v < 1 && len(r.Directories) > 0:
		return unsupported("Directories", 1)
	case v < 2 && r.EligibleLeaderReplicas != nil:
		return unsupported("EligibleLeaderReplicas", 2)
	case v < 2 && r.LastKnownElr != nil:
		return unsupported("LastKnownElr", 2)
	}
	return nil
}

func (r *PartitionRecord) encode(w *writer) {
	v := r.Version
	w.int32(r.PartitionID)
	w.uuid(r.TopicID)
	w.int32s(r.Replicas, false)
	w.int32s(r.Isr, false)
	w.int32s(r.RemovingReplicas, false)
	w.int32s(r.AddingReplicas, false)
	w.int32(r.Leader)
	w.int32(r.LeaderEpoch)
	w.int32(r.PartitionEpoch)
	if v >= 1 {
		w.uuids(r.Directories, false)
	}
	lrs := r.LeaderRecoveryState != 0
	elr := v >= 2 && r.EligibleLeaderReplicas != nil
	lastElr := v >= 2 && r.LastKnownElr != nil
	w.uvarint(count(lrs, elr, lastElr))
	if lrs {
		w.tagInt8(0, r.LeaderRecoveryState)
	}
	if elr {
		w.tagInt32s(1, r.EligibleLeaderReplicas, true)
	}
	if lastElr {
		w.tagInt32s(2, r.LastKnownElr, true)
	}
}

func (r *PartitionRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.PartitionID = rd.int32()
	r.TopicID = rd.uuid()
	r.Replicas = rd.int32s("Replicas", false)
	r.Isr = rd.int32s("Isr", false)
	r.RemovingReplicas = rd.int32s("RemovingReplicas", false)
	r.AddingReplicas = rd.int32s("AddingReplicas", false)
	r.Leader = rd.int32()
	r.LeaderEpoch = rd.int32()
	r.PartitionEpoch = rd.int32()
	if v >= 1 {
		r.Directories = rd.uuids("Directories", false)
	}
	rd.tags(func(tag uint32, f *reader) bool {
		switch {
		case tag == 0:
			r.LeaderRecoveryState = f.int8()
		case tag == 1 && v >= 2:
			r.EligibleLeaderReplicas = f.int32s("EligibleLeaderReplicas", true)
		case tag == 2 && v >= 2:
			r.LastKnownElr = f.int32s("LastKnownElr", true)
		default:
			return false
		}
		return true
	})
}

// PartitionChangeRecord (apiKey 5, versions 0-2) changes a partition: the
// controller writes it for leader elections, ISR changes (AlterPartition)
// and reassignments. Every change is a tagged field whose default means
// "no change": nil lists, Leader NoLeaderChange, LeaderRecoveryState
// LeaderRecoveryNoChange. Go's zero value is not that default; start from
// NewPartitionChangeRecord. Kafka 4.4 writes version 2.
type PartitionChangeRecord struct {
	Version     int16
	PartitionID int32
	TopicID     Uuid
	Isr         []int32 // tag 0
	Leader      int32   // tag 1; NoLeader, NoLeaderChange or a broker id
	Replicas    []int32 // tag 2
	// RemovingReplicas and AddingReplicas: tags 3 and 4.
	RemovingReplicas       []int32
	AddingReplicas         []int32
	LeaderRecoveryState    int8    // tag 5
	Directories            []Uuid  // tag 8, v1+
	EligibleLeaderReplicas []int32 // tag 6, v2+
	LastKnownElr           []int32 // tag 7, v2+
}

// NewPartitionChangeRecord returns a change of partition p of topic that
// changes nothing yet, at the version Kafka 4.4 writes.
func NewPartitionChangeRecord(topic Uuid, p int32) *PartitionChangeRecord {
	return &PartitionChangeRecord{
		Version:             PartitionChangeVersion,
		PartitionID:         p,
		TopicID:             topic,
		Leader:              NoLeaderChange,
		LeaderRecoveryState: LeaderRecoveryNoChange,
	}
}

// APIKey is KeyPartitionChange.
func (*PartitionChangeRecord) APIKey() APIKey { return KeyPartitionChange }

// RecordVersion is r.Version.
func (r *PartitionChangeRecord) RecordVersion() int16 { return r.Version }

func (r *PartitionChangeRecord) check() error {
	switch v := r.Version; {
	case v < 1 && r.Directories != nil:
		return unsupported("Directories", 1)
	case v < 2 && r.EligibleLeaderReplicas != nil:
		return unsupported("EligibleLeaderReplicas", 2)
	case v < 2 && r.LastKnownElr != nil:
		return unsupported("LastKnownElr", 2)
	}
	return nil
}

func (r *PartitionChangeRecord) encode(w *writer) {
	v := r.Version
	w.int32(r.PartitionID)
	w.uuid(r.TopicID)
	isr := r.Isr != nil
	leader := r.Leader != NoLeaderChange
	replicas := r.Replicas != nil
	removing := r.RemovingReplicas != nil
	adding := r.AddingReplicas != nil
	lrs := r.LeaderRecoveryState != LeaderRecoveryNoChange
	elr := v >= 2 && r.EligibleLeaderReplicas != nil
	lastElr := v >= 2 && r.LastKnownElr != nil
	dirs := v >= 1 && r.Directories != nil
	w.uvarint(count(isr, leader, replicas, removing, adding, lrs, elr, lastElr, dirs))
	if isr {
		w.tagInt32s(0, r.Isr, true)
	}
	if leader {
		w.tagInt32(1, r.Leader)
	}
	if replicas {
		w.tagInt32s(2, r.Replicas, true)
	}
	if removing {
		w.tagInt32s(3, r.RemovingReplicas, true)
	}
	if adding {
		w.tagInt32s(4, r.AddingReplicas, true)
	}
	if lrs {
		w.tagInt8(5, r.LeaderRecoveryState)
	}
	if elr {
		w.tagInt32s(6, r.EligibleLeaderReplicas, true)
	}
	if lastElr {
		w.tagInt32s(7, r.LastKnownElr, true)
	}
	if dirs {
		w.tagUuids(8, r.Directories, true)
	}
}

func (r *PartitionChangeRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.PartitionID = rd.int32()
	r.TopicID = rd.uuid()
	r.Leader = NoLeaderChange
	r.LeaderRecoveryState = LeaderRecoveryNoChange
	rd.tags(func(tag uint32, f *reader) bool {
		switch {
		case tag == 0:
			r.Isr = f.int32s("Isr", true)
		case tag == 1:
			r.Leader = f.int32()
		case tag == 2:
			r.Replicas = f.int32s("Replicas", true)
		case tag == 3:
			r.RemovingReplicas = f.int32s("RemovingReplicas", true)
		case tag == 4:
			r.AddingReplicas = f.int32s("AddingReplicas", true)
		case tag == 5:
			r.LeaderRecoveryState = f.int8()
		case tag == 6 && v >= 2:
			r.EligibleLeaderReplicas = f.int32s("EligibleLeaderReplicas", true)
		case tag == 7 && v >= 2:
			r.LastKnownElr = f.int32s("LastKnownElr", true)
		case tag == 8 && v >= 1:
			r.Directories = f.uuids("Directories", true)
		default:
			return false
		}
		return true
	})
}
