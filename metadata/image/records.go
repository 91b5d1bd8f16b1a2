package image

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// Records writes the image as the records of a metadata snapshot, in
// Kafka's order (MetadataImage.write): the features, metadata.version
// first; the brokers, then the controllers; each topic followed by its
// partitions; the configs; the next producer id; the SCRAM credentials.
// Records are written at the versions the image's metadata.version calls
// for (the newest if it has none). It fails, as Kafka's ImageWriterOptions
// does by default, when that version cannot hold part of the image.
// Topics come sorted by name, partitions and brokers by id, so the same
// image always gives the same records.
func (m *MetadataImage) Records() ([]record.Record, error) {
	mv, _ := m.features.MetadataVersion()
	out := make([]record.Record, 0, 1+m.cluster.Len()+len(m.cluster.controllers)+m.topics.Len()+m.topics.NumPartitions())
	out = append(out, m.features.records()...)
	bv := registerBrokerRecordVersion(mv)
	for _, id := range m.cluster.BrokerIDs() {
		r := m.cluster.Broker(id).toRecord(bv)
		if err := canHold(r); err != nil {
			return nil, fmt.Errorf("metadata.version %d: broker %d: %w", mv, id, err)
		}
		out = append(out, r)
	}
	if ids := m.cluster.ControllerIDs(); len(ids) > 0 {
		if mv != 0 && mv < mv3_7IV0 {
			return nil, fmt.Errorf("metadata.version %d: controller registrations need metadata.version %d or later", mv, mv3_7IV0)
		}
		for _, id := range ids {
			out = append(out, m.cluster.Controller(id).toRecord())
		}
	}
	pv := partitionRecordVersion(mv)
	topics := make([]*TopicImage, 0, m.topics.Len())
	for _, t := range m.topics.Topics() {
		topics = append(topics, t)
	}
	slices.SortFunc(topics, func(a, b *TopicImage) int { return strings.Compare(a.name, b.name) })
	for _, t := range topics {
		out = append(out, &record.TopicRecord{Name: t.name, TopicID: t.id})
		for _, id := range t.PartitionIDs() {
			r, err := t.Partition(id).toRecord(t.id, id, pv)
			if err != nil {
				return nil, fmt.Errorf("metadata.version %d: topic %s: %w", mv, t.name, err)
			}
			out = append(out, r)
		}
	}
	out = append(out, m.configs.records()...)
	out = append(out, m.producerIds.records()...)
	if !m.scram.IsEmpty() && mv != 0 && mv < mv3_5IV2 {
		return nil, fmt.Errorf("metadata.version %d: SCRAM credentials need metadata.version %d or later", mv, mv3_5IV2)
	}
	return append(out, m.scram.records()...), nil
}

// canHold reports a field of a RegisterBrokerRecord its version lacks.
func canHold(r *record.RegisterBrokerRecord) error {
	_, err := record.Encode(r)
	return err
}
