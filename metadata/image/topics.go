package image

import (
	"iter"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// TopicsImage holds the topics by id and by name.
type TopicsImage struct {
	byID       pmapByID
	byName     pmapByName
	partitions int
}

type (
	pmapByID   = mapOf[record.Uuid]
	pmapByName = mapOf[string]
)

var emptyTopics = &TopicsImage{byID: noTopicsByID, byName: noTopicsByName}

// Topic returns the topic with id id, nil if none.
func (t *TopicsImage) Topic(id record.Uuid) *TopicImage {
	ti, _ := t.byID.Get(id)
	return ti
}

// TopicByName returns the topic named name, nil if none.
func (t *TopicsImage) TopicByName(name string) *TopicImage {
	ti, _ := t.byName.Get(name)
	return ti
}

// Partition returns partition p of topic id, nil if there is none.
func (t *TopicsImage) Partition(id record.Uuid, p int32) *PartitionRegistration {
	if ti := t.Topic(id); ti != nil {
		return ti.Partition(p)
	}
	return nil
}

// Len is the number of topics.
func (t *TopicsImage) Len() int { return t.byID.Len() }

// NumPartitions is the number of partitions over all topics.
func (t *TopicsImage) NumPartitions() int { return t.partitions }

// Topics yields the topics by id, in no particular order.
func (t *TopicsImage) Topics() iter.Seq2[record.Uuid, *TopicImage] { return t.byID.All() }

// Names lists the topic names, sorted.
func (t *TopicsImage) Names() []string {
	return slices.Sorted(keysOf(t.byName.All()))
}

// IsEmpty reports whether there are no topics.
func (t *TopicsImage) IsEmpty() bool { return t.byID.Len() == 0 }

// Equal reports whether two images hold the same topics.
func (t *TopicsImage) Equal(o *TopicsImage) bool {
	if t == o {
		return true
	}
	if t.byID.Len() != o.byID.Len() || t.byName.Len() != o.byName.Len() || t.partitions != o.partitions {
		return false
	}
	for id, ti := range t.byID.All() {
		oi, ok := o.byID.Get(id)
		if !ok || !ti.Equal(oi) {
			return false
		}
		if byName, _ := o.byName.Get(ti.name); byName != oi {
			return false
		}
	}
	return true
}
