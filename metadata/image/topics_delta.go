package image

import (
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// TopicsDelta collects topic creations, deletions and partition changes.
type TopicsDelta struct {
	image   *TopicsImage
	changed map[record.Uuid]*TopicDelta
	deleted map[record.Uuid]struct{} // topics of the image the delta removes
	created map[string]record.Uuid   // names the delta creates
	// snapshot: records restate topics the image already has.
	snapshot bool
}

func newTopicsDelta(img *TopicsImage, snapshot bool) *TopicsDelta {
	return &TopicsDelta{
		image:    img,
		changed:  map[record.Uuid]*TopicDelta{},
		deleted:  map[record.Uuid]struct{}{},
		created:  map[string]record.Uuid{},
		snapshot: snapshot,
	}
}

// Changed returns the delta of topic id, nil if the delta does not touch it.
func (d *TopicsDelta) Changed(id record.Uuid) *TopicDelta { return d.changed[id] }

// ChangedTopics are the deltas of the topics created or changed.
func (d *TopicsDelta) ChangedTopics() map[record.Uuid]*TopicDelta { return d.changed }

// Deleted reports whether the delta removes topic id of the image.
func (d *TopicsDelta) Deleted(id record.Uuid) bool {
	_, ok := d.deleted[id]
	return ok
}

// live returns the topic's delta, made on first use, or nil if the topic
// does not exist at this point of the delta.
func (d *TopicsDelta) live(id record.Uuid) *TopicDelta {
	if td := d.changed[id]; td != nil {
		return td
	}
	if d.Deleted(id) {
		return nil
	}
	ti := d.image.Topic(id)
	if ti == nil {
		return nil
	}
	td := newTopicDelta(ti, false)
	d.changed[id] = td
	return td
}

// nameTaken returns the id of the live topic named name, if any.
func (d *TopicsDelta) nameTaken(name string) (record.Uuid, bool) {
	if id, ok := d.created[name]; ok {
		return id, true
	}
	if ti := d.image.TopicByName(name); ti != nil && !d.Deleted(ti.id) {
		if td := d.changed[ti.id]; td == nil || td.image.name == name {
			return ti.id, true
		}
	}
	return record.Uuid{}, false
}

func (d *TopicsDelta) replayTopic(r *record.TopicRecord) error {
	if !d.snapshot {
		if td := d.live(r.TopicID); td != nil {
			return fmt.Errorf("topic id %s already exists, named %s", r.TopicID, td.image.name)
		}
		if id, ok := d.nameTaken(r.Name); ok {
			return fmt.Errorf("topic %s already exists, with id %s", r.Name, id)
		}
	}
	img := &TopicImage{name: r.Name, id: r.TopicID, partitions: noPartitions}
	d.changed[r.TopicID] = newTopicDelta(img, true)
	d.created[r.Name] = r.TopicID
	return nil
}

func (d *TopicsDelta) topic(id record.Uuid) (*TopicDelta, error) {
	td := d.live(id)
	if td == nil {
		return nil, fmt.Errorf("no topic has id %s", id)
	}
	return td, nil
}

func (d *TopicsDelta) replayPartition(r *record.PartitionRecord) error {
	td, err := d.topic(r.TopicID)
	if err != nil {
		return err
	}
	return td.replayPartition(r)
}

func (d *TopicsDelta) replayChange(r *record.PartitionChangeRecord) error {
	td, err := d.topic(r.TopicID)
	if err != nil {
		return err
	}
	return td.replayChange(r)
}

// replayRemove removes a topic and returns its name.
func (d *TopicsDelta) replayRemove(r *record.RemoveTopicRecord) (string, error) {
	td, err := d.topic(r.TopicID)
	if err != nil {
		return "", fmt.Errorf("cannot remove topic %s: %w", r.TopicID, err)
	}
	delete(d.changed, r.TopicID)
	if d.created[td.image.name] == r.TopicID {
		delete(d.created, td.image.name)
	}
	if d.image.Topic(r.TopicID) != nil {
		d.deleted[r.TopicID] = struct{}{}
	}
	return td.image.name, nil
}

func (d *TopicsDelta) finishSnapshot() {
	for id := range d.image.Topics() {
		if _, ok := d.changed[id]; !ok {
			d.deleted[id] = struct{}{}
		}
	}
}

func (d *TopicsDelta) apply() *TopicsImage {
	if len(d.deleted) == 0 && len(d.changed) == 0 {
		return d.image
	}
	byID, byName := d.image.byID.Builder(), d.image.byName.Builder()
	count := d.image.partitions
	for id := range d.deleted {
		old := d.image.Topic(id)
		byID.Delete(id)
		if cur, _ := byName.Get(old.name); cur == old {
			byName.Delete(old.name)
		}
		count -= old.NumPartitions()
	}
	for id, td := range d.changed {
		next := td.apply()
		old := d.image.Topic(id)
		if next == old {
			continue // looked at, not changed
		}
		if old != nil && !d.Deleted(id) {
			count -= old.NumPartitions()
			if cur, _ := byName.Get(old.name); old.name != next.name && cur == old {
				byName.Delete(old.name)
			}
		}
		byID.Set(id, next)
		byName.Set(next.name, next)
		count += next.NumPartitions()
	}
	return &TopicsImage{byID: byID.Map(), byName: byName.Map(), partitions: count}
}
