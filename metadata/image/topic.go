package image

import (
	"iter"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// TopicImage is one topic: its name, id and partitions.
type TopicImage struct {
	name       string
	id         record.Uuid
	partitions partitionMap
}

// Name is the topic's name.
func (t *TopicImage) Name() string { return t.name }

// ID is the topic's id.
func (t *TopicImage) ID() record.Uuid { return t.id }

// Partition returns partition p, nil if the topic has none such.
func (t *TopicImage) Partition(p int32) *PartitionRegistration {
	r, _ := t.partitions.Get(p)
	return r
}

// NumPartitions is the number of partitions.
func (t *TopicImage) NumPartitions() int { return t.partitions.Len() }

// Partitions yields the partitions by id, in no particular order.
func (t *TopicImage) Partitions() iter.Seq2[int32, *PartitionRegistration] { return t.partitions.All() }

// PartitionIDs lists the partition ids, sorted.
func (t *TopicImage) PartitionIDs() []int32 {
	return slices.Sorted(keysOf(t.Partitions()))
}

// Equal reports whether two topics are the same.
func (t *TopicImage) Equal(o *TopicImage) bool {
	if t == o {
		return true
	}
	if t.name != o.name || t.id != o.id || t.partitions.Len() != o.partitions.Len() {
		return false
	}
	for id, p := range t.partitions.All() {
		q, ok := o.partitions.Get(id)
		if !ok || !p.Equal(q) {
			return false
		}
	}
	return true
}
