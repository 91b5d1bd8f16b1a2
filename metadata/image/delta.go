package image

import (
	"errors"
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// ErrInconsistent is wrapped by Replay's errors: the record contradicts
// the state it is replayed on.
var ErrInconsistent = errors.New("record contradicts the metadata image")

// MetadataDelta is a set of changes to an image: records are replayed into
// it one by one, and Apply makes the next image. A delta is not safe for
// concurrent use; the images it makes are.
type MetadataDelta struct {
	image    *MetadataImage
	snapshot bool
	features *FeaturesDelta
	cluster  *ClusterDelta
	topics   *TopicsDelta
	configs  *ConfigurationsDelta
	scram    *ScramDelta
	// producerIds is the next producer id replayed, nil if none was.
	producerIds *ProducerIdsImage
}

// NewMetadataDelta starts a delta of log records on img.
func NewMetadataDelta(img *MetadataImage) *MetadataDelta {
	return &MetadataDelta{image: img}
}

// NewSnapshotDelta starts a delta that replays a snapshot on img: records
// may restate what img holds, and Apply drops whatever in img the snapshot
// did not restate (Kafka's MetadataDelta.finishSnapshot).
func NewSnapshotDelta(img *MetadataImage) *MetadataDelta {
	return &MetadataDelta{image: img, snapshot: true}
}

// Image is the image the delta started from.
func (d *MetadataDelta) Image() *MetadataImage { return d.image }

// FeaturesDelta is the delta's feature changes, nil if none were replayed.
func (d *MetadataDelta) FeaturesDelta() *FeaturesDelta { return d.features }

// ClusterDelta is the delta's broker and controller changes, nil if none
// were replayed.
func (d *MetadataDelta) ClusterDelta() *ClusterDelta { return d.cluster }

// TopicsDelta is the delta's topic changes, nil if none were replayed.
func (d *MetadataDelta) TopicsDelta() *TopicsDelta { return d.topics }

// ConfigurationsDelta is the delta's config changes, nil if none were
// replayed.
func (d *MetadataDelta) ConfigurationsDelta() *ConfigurationsDelta { return d.configs }

func (d *MetadataDelta) featuresDelta() *FeaturesDelta {
	if d.features == nil {
		d.features = newFeaturesDelta(d.image.features)
	}
	return d.features
}

func (d *MetadataDelta) clusterDelta() *ClusterDelta {
	if d.cluster == nil {
		d.cluster = newClusterDelta(d.image.cluster)
	}
	return d.cluster
}

func (d *MetadataDelta) topicsDelta() *TopicsDelta {
	if d.topics == nil {
		d.topics = newTopicsDelta(d.image.topics, d.snapshot)
	}
	return d.topics
}

// ScramDelta is the delta's SCRAM credential changes, nil if none were
// replayed.
func (d *MetadataDelta) ScramDelta() *ScramDelta { return d.scram }

func (d *MetadataDelta) scramDelta() *ScramDelta {
	if d.scram == nil {
		d.scram = newScramDelta(d.image.scram)
	}
	return d.scram
}

func (d *MetadataDelta) configsDelta() *ConfigurationsDelta {
	if d.configs == nil {
		d.configs = newConfigurationsDelta(d.image.configs)
	}
	return d.configs
}

// Replay applies one record to the delta. A record that contradicts the
// delta's state (a change to a topic, partition or broker it does not
// have, a broker epoch that does not match, a topic created twice) is
// refused with an error wrapping ErrInconsistent and naming the record;
// the delta is then as it was. The caller adds the offset.
func (d *MetadataDelta) Replay(r record.Record) error {
	if err := d.replay(r); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInconsistent, record.Name(r), err)
	}
	return nil
}

func (d *MetadataDelta) replay(r record.Record) error {
	switch r := r.(type) {
	case *record.RegisterBrokerRecord:
		d.clusterDelta().replayRegister(r)
	case *record.UnregisterBrokerRecord:
		return d.clusterDelta().replayUnregister(r)
	case *record.FenceBrokerRecord:
		return d.clusterDelta().replayFence(r.ID, r.Epoch, true)
	case *record.UnfenceBrokerRecord:
		return d.clusterDelta().replayFence(r.ID, r.Epoch, false)
	case *record.BrokerRegistrationChangeRecord:
		return d.clusterDelta().replayChange(r)
	case *record.TopicRecord:
		return d.topicsDelta().replayTopic(r)
	case *record.PartitionRecord:
		return d.topicsDelta().replayPartition(r)
	case *record.PartitionChangeRecord:
		return d.topicsDelta().replayChange(r)
	case *record.RemoveTopicRecord:
		name, err := d.topicsDelta().replayRemove(r)
		if err != nil {
			return err
		}
		d.configsDelta().deleteAll(ConfigResource{Type: record.ResourceTopic, Name: name})
	case *record.ConfigRecord:
		d.configsDelta().replay(r)
	case *record.FeatureLevelRecord:
		return d.featuresDelta().replay(r)
	case *record.ProducerIdsRecord:
		return d.replayProducerIds(r)
	case *record.UserScramCredentialRecord:
		return d.scramDelta().replay(r)
	case *record.RemoveUserScramCredentialRecord:
		return d.scramDelta().replayRemove(r)
	case *record.RegisterControllerRecord:
		return d.clusterDelta().replayRegisterController(r)
	case *record.UnregisterControllerRecord:
		d.clusterDelta().replayUnregisterController(r)
	case *record.NoOpRecord:
		// Nothing to apply: it only moves the offset.
	case *record.BeginTransactionRecord, *record.EndTransactionRecord, *record.AbortTransactionRecord:
		// Transactions are the loader's to bracket (Kafka's
		// MetadataBatchLoader); reaching the delta, a marker is out of
		// place (in a snapshot, say), as Kafka's MetadataDelta.replay
		// refuses it.
		return errors.New("a transaction marker is for the log's loader, not an image")
	default:
		return fmt.Errorf("no image holds %T", r)
	}
	return nil
}

// Apply returns the image with the delta's changes, at provenance p. The
// parts the delta did not change are the previous image's own. A snapshot
// delta first drops what the snapshot did not restate. The delta may go
// on replaying; a later Apply includes everything since it started.
func (d *MetadataDelta) Apply(p MetadataProvenance) *MetadataImage {
	if d.snapshot {
		d.featuresDelta().finishSnapshot()
		d.clusterDelta().finishSnapshot()
		d.topicsDelta().finishSnapshot()
		d.configsDelta().finishSnapshot()
		d.scramDelta().finishSnapshot()
	}
	next := *d.image
	next.provenance = p
	if d.features != nil {
		next.features = d.features.apply()
	}
	if d.cluster != nil {
		next.cluster = d.cluster.apply()
	}
	if d.topics != nil {
		next.topics = d.topics.apply()
	}
	if d.configs != nil {
		next.configs = d.configs.apply()
	}
	if d.scram != nil {
		next.scram = d.scram.apply()
	}
	if d.producerIds != nil {
		next.producerIds = *d.producerIds
	}
	return &next
}
