package clustertest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// The model's metadata image and log are its current metadata written out
// as Kafka's records — metadata.version, a RegisterBrokerRecord per broker
// (fenced as the model decides), a TopicRecord and PartitionRecords per
// topic — one batch per broker and per topic, at offsets from 0. They are
// real records that Kafka's tools would read, but the log is a picture of
// the state, not its history: its offsets are not the view's.

// metadataBatches is the model's metadata as record batches.
func (e *Engine) metadataBatches() [][]record.Record {
	batches := [][]record.Record{{&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2}}}
	for _, id := range e.order {
		n := e.nodes[id]
		if n.kind != view.KindBroker {
			continue
		}
		batches = append(batches, []record.Record{&record.RegisterBrokerRecord{
			Version: record.RegisterBrokerVersion, BrokerID: id, IncarnationID: record.NewUuid(uint64(id), 1), BrokerEpoch: int64(id),
			EndPoints: []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: uint16(19000 + int(id))}},
			Features:  []record.BrokerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: record.MetadataVersionMinimum, MaxSupportedVersion: record.MetadataVersion4_4IV2}},
			Fenced:    !e.unfenced(id),
			LogDirs:   []record.Uuid{record.NewUuid(uint64(id), 2)},
		}})
	}
	for _, t := range e.topicViews() {
		h := fnv.New64a()
		h.Write([]byte(t.ID))
		tid := record.NewUuid(h.Sum64(), 1)
		batch := []record.Record{&record.TopicRecord{Name: t.Name, TopicID: tid}}
		for _, p := range t.Partitions {
			dirs := make([]record.Uuid, len(p.Replicas))
			for i, r := range p.Replicas {
				dirs[i] = record.NewUuid(uint64(r), 2)
			}
			batch = append(batch, &record.PartitionRecord{
				Version: record.PartitionVersion, PartitionID: p.Partition, TopicID: tid,
				Replicas: p.Replicas, Isr: p.Isr, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, Directories: dirs,
			})
		}
		batches = append(batches, batch)
	}
	return batches
}

// readable checks that node id exists and runs, without taking a failure
// meant for the next action.
func (e *Engine) readable(id int32) error {
	if e.closed {
		return errors.New("engine closed")
	}
	n, ok := e.nodes[id]
	if !ok {
		return fmt.Errorf("no node %d", id)
	}
	if !e.live(id) {
		return fmt.Errorf("%w: node %d is %s", cluster.ErrNodeState, id, n.state)
	}
	return nil
}

// MetadataImage implements cluster.Engine: the model's records replayed
// into an image, as a loader would.
func (e *Engine) MetadataImage(id int32) (*image.MetadataImage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.readable(id); err != nil {
		return nil, err
	}
	e.settle(e.opt.Now())
	d := image.NewMetadataDelta(image.Empty)
	var offset int64
	for _, b := range e.metadataBatches() {
		for _, r := range b {
			if err := d.Replay(r); err != nil {
				return nil, fmt.Errorf("model metadata at offset %d: %w", offset, err)
			}
			offset++
		}
	}
	return d.Apply(image.MetadataProvenance{LastContainedOffset: offset - 1, LastContainedEpoch: max(e.nodes[id].epoch, 0), LastContainedLogTimeMs: e.opt.Now().UnixMilli(), IsOffsetBatchAligned: true}), nil
}

// ReadMetadataLog implements cluster.Engine: the model's batches, encoded
// as storage writes them, every one committed.
func (e *Engine) ReadMetadataLog(_ context.Context, id int32, offset int64, maxBytes int) (cluster.MetadataLogRead, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.readable(id); err != nil {
		return cluster.MetadataLogRead{}, err
	}
	e.settle(e.opt.Now())
	now := e.opt.Now().UnixMilli()
	var raw []byte
	var next int64
	for _, b := range e.metadataBatches() {
		base := next
		next += int64(len(b))
		if next <= offset || (len(raw) > 0 && len(raw) >= maxBytes) {
			continue
		}
		recs := make([]storage.Record, len(b))
		for i, r := range b {
			v, err := record.Encode(r)
			if err != nil {
				return cluster.MetadataLogRead{}, fmt.Errorf("model metadata: %w", err)
			}
			recs[i] = storage.Record{Offset: base + int64(i), Timestamp: now, Value: v}
		}
		raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: base, LeaderEpoch: max(e.nodes[id].epoch, 0), Timestamp: now}, recs)
	}
	return cluster.MetadataLogRead{Raw: raw, LogEndOffset: next, HighWatermark: next}, nil
}
