package image

import (
	"fmt"
	"iter"

	"github.com/kraftlab/kraftlab/metadata/internal/pmap"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// TopicDelta collects the changes to one topic's partitions. Its partitions
// are a builder over the topic's persistent map: the first change to a
// trie node copies it, later ones change the copy in place.
type TopicDelta struct {
	image   *TopicImage // the topic before the delta; no partitions if created
	created bool
	parts   *pmap.Builder[int32, *PartitionRegistration]
	changed map[int32]struct{} // for a topic that existed; nil if created
}

func newTopicDelta(img *TopicImage, created bool) *TopicDelta {
	d := &TopicDelta{image: img, created: created, parts: img.partitions.Builder()}
	if !created {
		d.changed = map[int32]struct{}{}
	}
	return d
}

// Name is the topic's name.
func (d *TopicDelta) Name() string { return d.image.name }

// ID is the topic's id.
func (d *TopicDelta) ID() record.Uuid { return d.image.id }

// Image is the topic before the delta (with no partitions if the delta
// creates it).
func (d *TopicDelta) Image() *TopicImage { return d.image }

// Created reports whether the delta creates the topic.
func (d *TopicDelta) Created() bool { return d.created }

// Partition is partition p as the delta has it, nil if none.
func (d *TopicDelta) Partition(p int32) *PartitionRegistration {
	r, _ := d.parts.Get(p)
	return r
}

// PartitionChanges yields the partitions the delta creates or changes,
// with their new registrations.
func (d *TopicDelta) PartitionChanges() iter.Seq2[int32, *PartitionRegistration] {
	return func(yield func(int32, *PartitionRegistration) bool) {
		if d.created {
			for id, p := range d.parts.Map().All() {
				if !yield(id, p) {
					return
				}
			}
			return
		}
		for id := range d.changed {
			if !yield(id, d.Partition(id)) {
				return
			}
		}
	}
}

func (d *TopicDelta) set(id int32, p *PartitionRegistration) {
	d.parts.Set(id, p)
	if d.changed != nil {
		d.changed[id] = struct{}{}
	}
}

func (d *TopicDelta) replayPartition(r *record.PartitionRecord) error {
	if r.PartitionID < 0 {
		return fmt.Errorf("topic %s (%s): invalid partition id %d", d.image.name, d.image.id, r.PartitionID)
	}
	p, err := partitionFromRecord(r)
	if err != nil {
		return fmt.Errorf("topic %s (%s): %w", d.image.name, d.image.id, err)
	}
	d.set(r.PartitionID, p)
	return nil
}

func (d *TopicDelta) replayChange(r *record.PartitionChangeRecord) error {
	prev := d.Partition(r.PartitionID)
	if prev == nil {
		return fmt.Errorf("topic %s (%s) has no partition %d", d.image.name, d.image.id, r.PartitionID)
	}
	next, err := prev.Merge(r)
	if err != nil {
		return fmt.Errorf("topic %s (%s) partition %d: %w", d.image.name, d.image.id, r.PartitionID, err)
	}
	d.set(r.PartitionID, next)
	return nil
}

func (d *TopicDelta) apply() *TopicImage {
	if !d.created && len(d.changed) == 0 {
		return d.image
	}
	return &TopicImage{name: d.image.name, id: d.image.id, partitions: d.parts.Map()}
}
