package image

import (
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// PartitionRegistration is the state of one partition (Kafka's
// org.apache.kafka.metadata.PartitionRegistration): its replicas, in-sync
// replicas and leader. It is immutable and its slices are shared between
// images; never change them.
type PartitionRegistration struct {
	// Replicas are the brokers holding the partition, in preferred order.
	Replicas []int32
	// Directories hold each replica's log directory, in Replicas' order;
	// record.DirectoryMigrating when not known.
	Directories []record.Uuid
	Isr         []int32
	// RemovingReplicas and AddingReplicas are those a reassignment is
	// taking away and bringing in.
	RemovingReplicas []int32
	AddingReplicas   []int32
	// Elr and LastKnownElr are the eligible leader replicas (KIP-966).
	Elr          []int32
	LastKnownElr []int32
	// Leader is the leading broker, record.NoLeader if none.
	Leader              int32
	LeaderRecoveryState int8
	// LeaderEpoch moves each time the leader changes; PartitionEpoch
	// each time anything changes.
	LeaderEpoch    int32
	PartitionEpoch int32
}

// HasLeader reports whether the partition has a leader.
func (p *PartitionRegistration) HasLeader() bool { return p.Leader != record.NoLeader }

// HasReplica reports whether broker id holds a replica.
func (p *PartitionRegistration) HasReplica(id int32) bool { return slices.Contains(p.Replicas, id) }

// InIsr reports whether broker id is in the ISR.
func (p *PartitionRegistration) InIsr(id int32) bool { return slices.Contains(p.Isr, id) }

// Directory is the log directory of broker id's replica (Kafka's
// PartitionRegistration.directory): record.DirectoryUnassigned when the
// partition names none for it or id holds no replica.
func (p *PartitionRegistration) Directory(id int32) record.Uuid {
	if i := slices.Index(p.Replicas, id); i >= 0 && i < len(p.Directories) {
		return p.Directories[i]
	}
	return record.DirectoryUnassigned
}

// ReplicaOnline reports whether broker id's replica is in a log directory
// its broker has online, given the broker's registration (nil: not
// registered, so not online).
func (p *PartitionRegistration) ReplicaOnline(id int32, b *BrokerRegistration) bool {
	return b != nil && b.HasOnlineDir(p.Directory(id))
}

func orEmpty[T any](a []T) []T {
	if a == nil {
		return []T{}
	}
	return a
}

// defaultToMigrating gives every replica a MIGRATING directory when the
// record names none (or only MIGRATING ones), as Kafka does.
func defaultToMigrating(dirs []record.Uuid, replicas int) []record.Uuid {
	for _, d := range dirs {
		if d != record.DirectoryMigrating {
			return dirs
		}
	}
	if len(dirs) == replicas {
		return dirs
	}
	return make([]record.Uuid, replicas)
}

func partitionFromRecord(r *record.PartitionRecord) (*PartitionRegistration, error) {
	if len(r.Directories) > 0 && len(r.Directories) != len(r.Replicas) {
		return nil, fmt.Errorf("partition %d has %d replicas but %d directories", r.PartitionID, len(r.Replicas), len(r.Directories))
	}
	return &PartitionRegistration{
		Replicas:            orEmpty(r.Replicas),
		Directories:         defaultToMigrating(r.Directories, len(r.Replicas)),
		Isr:                 orEmpty(r.Isr),
		RemovingReplicas:    orEmpty(r.RemovingReplicas),
		AddingReplicas:      orEmpty(r.AddingReplicas),
		Elr:                 orEmpty(r.EligibleLeaderReplicas),
		LastKnownElr:        orEmpty(r.LastKnownElr),
		Leader:              r.Leader,
		LeaderRecoveryState: r.LeaderRecoveryState,
		LeaderEpoch:         r.LeaderEpoch,
		PartitionEpoch:      r.PartitionEpoch,
	}, nil
}

// Merge returns the registration after change c, as Kafka's
// PartitionRegistration.merge: the fields c sets replace these, a new
// leader (even the same one) bumps the leader epoch, and the partition
// epoch always moves.
func (p *PartitionRegistration) Merge(c *record.PartitionChangeRecord) (*PartitionRegistration, error) {
	if c.Replicas != nil && len(c.Directories) > 0 && len(c.Replicas) != len(c.Directories) {
		return nil, fmt.Errorf("change gives %d replicas but %d directories", len(c.Replicas), len(c.Directories))
	}
	n := *p
	if c.Replicas != nil {
		n.Replicas = c.Replicas
	}
	if c.Directories != nil {
		n.Directories = c.Directories
	}
	n.Directories = defaultToMigrating(n.Directories, len(n.Replicas))
	if len(n.Directories) != len(n.Replicas) {
		return nil, fmt.Errorf("change leaves %d replicas with %d directories", len(n.Replicas), len(n.Directories))
	}
	if c.Isr != nil {
		n.Isr = c.Isr
	}
	if c.RemovingReplicas != nil {
		n.RemovingReplicas = c.RemovingReplicas
	}
	if c.AddingReplicas != nil {
		n.AddingReplicas = c.AddingReplicas
	}
	if c.Leader != record.NoLeaderChange {
		n.Leader = c.Leader
		n.LeaderEpoch++
	}
	if c.LeaderRecoveryState != record.LeaderRecoveryNoChange {
		n.LeaderRecoveryState = c.LeaderRecoveryState
	}
	if c.EligibleLeaderReplicas != nil {
		n.Elr = c.EligibleLeaderReplicas
	}
	if c.LastKnownElr != nil {
		n.LastKnownElr = c.LastKnownElr
	}
	n.PartitionEpoch++
	return &n, nil
}

// Equal reports whether two registrations are the same.
func (p *PartitionRegistration) Equal(o *PartitionRegistration) bool {
	return p == o || (slices.Equal(p.Replicas, o.Replicas) && slices.Equal(p.Directories, o.Directories) &&
		slices.Equal(p.Isr, o.Isr) && slices.Equal(p.RemovingReplicas, o.RemovingReplicas) &&
		slices.Equal(p.AddingReplicas, o.AddingReplicas) && slices.Equal(p.Elr, o.Elr) &&
		slices.Equal(p.LastKnownElr, o.LastKnownElr) && p.Leader == o.Leader &&
		p.LeaderRecoveryState == o.LeaderRecoveryState && p.LeaderEpoch == o.LeaderEpoch &&
		p.PartitionEpoch == o.PartitionEpoch)
}

// toRecord states the registration as a PartitionRecord at version v,
// reporting what that version cannot hold.
func (p *PartitionRegistration) toRecord(topic record.Uuid, id int32, v int16) (*record.PartitionRecord, error) {
	r := &record.PartitionRecord{
		Version:             v,
		PartitionID:         id,
		TopicID:             topic,
		Replicas:            p.Replicas,
		Isr:                 p.Isr,
		RemovingReplicas:    p.RemovingReplicas,
		AddingReplicas:      p.AddingReplicas,
		Leader:              p.Leader,
		LeaderRecoveryState: p.LeaderRecoveryState,
		LeaderEpoch:         p.LeaderEpoch,
		PartitionEpoch:      p.PartitionEpoch,
	}
	// The ELR lists are tagged: written only when they hold something.
	if len(p.Elr) > 0 {
		r.EligibleLeaderReplicas = p.Elr
	}
	if len(p.LastKnownElr) > 0 {
		r.LastKnownElr = p.LastKnownElr
	}
	if v >= 1 {
		r.Directories = p.Directories
	} else if slices.ContainsFunc(p.Directories, func(d record.Uuid) bool { return d != record.DirectoryMigrating }) {
		return nil, fmt.Errorf("PartitionRecord v%d cannot hold the directory assignment of partition %d", v, id)
	}
	if v < 2 && (r.EligibleLeaderReplicas != nil || r.LastKnownElr != nil) {
		return nil, fmt.Errorf("PartitionRecord v%d cannot hold the eligible leader replicas of partition %d", v, id)
	}
	return r, nil
}
