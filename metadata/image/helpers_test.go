package image

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

func str(s string) *string { return &s }

func topicID(n uint64) record.Uuid { return record.NewUuid(n, n*7919+1) }

func register(id int32, epoch int64) *record.RegisterBrokerRecord {
	return &record.RegisterBrokerRecord{
		Version: record.RegisterBrokerVersion, BrokerID: id, BrokerEpoch: epoch,
		IncarnationID: record.NewUuid(uint64(id), uint64(epoch)),
		EndPoints:     []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: uint16(9000 + id)}},
		Features:      []record.BrokerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}},
		Fenced:        true,
		LogDirs:       []record.Uuid{record.NewUuid(1, uint64(id))},
	}
}

func partition(topic record.Uuid, p int32, replicas ...int32) *record.PartitionRecord {
	return &record.PartitionRecord{
		Version: record.PartitionVersion, PartitionID: p, TopicID: topic,
		Replicas: replicas, Isr: replicas, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
		Leader: replicas[0], LeaderEpoch: 0, PartitionEpoch: 0,
		Directories: make([]record.Uuid, len(replicas)),
	}
}

func fence(id int32, epoch int64, how int8) *record.BrokerRegistrationChangeRecord {
	return &record.BrokerRegistrationChangeRecord{BrokerID: id, BrokerEpoch: epoch, Fenced: how}
}

// replayAll replays records into a delta of img and applies it at offset.
func replayAll(t testing.TB, img *MetadataImage, offset int64, recs ...record.Record) *MetadataImage {
	t.Helper()
	d := NewMetadataDelta(img)
	for i, r := range recs {
		if err := d.Replay(r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	return d.Apply(MetadataProvenance{LastContainedOffset: offset, LastContainedEpoch: 1, LastContainedLogTimeMs: 1000 + offset})
}

// cluster is a small but full image: features, three brokers (one
// fenced), two topics, configs.
func cluster(t testing.TB) *MetadataImage {
	orders, clicks := topicID(1), topicID(2)
	mv := &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2}
	return replayAll(t, Empty, 10,
		mv,
		&record.FeatureLevelRecord{Name: "group.version", FeatureLevel: 1},
		register(101, 5), register(102, 6), register(103, 7),
		fence(101, 5, record.FencingUnfence), fence(102, 6, record.FencingUnfence),
		&record.TopicRecord{Name: "orders", TopicID: orders},
		partition(orders, 0, 101, 102, 103), partition(orders, 1, 102, 103, 101),
		&record.TopicRecord{Name: "clicks", TopicID: clicks},
		partition(clicks, 0, 103),
		&record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: str("60000")},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: str("1")},
		&record.ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 5, NextProducerID: 1000},
		&record.NoOpRecord{},
	)
}
