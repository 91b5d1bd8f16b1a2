package cache

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

const testCluster = "cache-test-cluster"

func topicID(n uint64) record.Uuid { return record.NewUuid(n, n*7919+1) }

func str(s string) *string { return &s }

// register is a broker registration with a PLAINTEXT listener on port
// 9000+id, and one log directory.
func register(id int32, epoch int64) *record.RegisterBrokerRecord {
	return &record.RegisterBrokerRecord{
		Version: record.RegisterBrokerVersion, BrokerID: id, BrokerEpoch: epoch,
		IncarnationID: record.NewUuid(uint64(id), uint64(epoch)),
		EndPoints:     []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: uint16(9000 + id)}},
		Features:      []record.BrokerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}},
		Fenced:        true,
		LogDirs:       []record.Uuid{logDir(id)},
	}
}

func logDir(id int32) record.Uuid { return record.NewUuid(77, uint64(id)) }

func unfence(id int32, epoch int64) *record.BrokerRegistrationChangeRecord {
	return &record.BrokerRegistrationChangeRecord{BrokerID: id, BrokerEpoch: epoch, Fenced: record.FencingUnfence}
}

// partition puts every replica in the ISR and in its broker's directory;
// the first replica leads.
func partition(topic record.Uuid, p int32, replicas ...int32) *record.PartitionRecord {
	dirs := make([]record.Uuid, len(replicas))
	for i, r := range replicas {
		dirs[i] = logDir(r)
	}
	return &record.PartitionRecord{
		Version: record.PartitionVersion, PartitionID: p, TopicID: topic,
		Replicas: replicas, Isr: replicas, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
		Leader: replicas[0], LeaderEpoch: 3, PartitionEpoch: 4, Directories: dirs,
	}
}

func replay(t testing.TB, img *image.MetadataImage, recs ...record.Record) *image.MetadataImage {
	t.Helper()
	d := image.NewMetadataDelta(img)
	for i, r := range recs {
		if err := d.Replay(r); err != nil {
			t.Fatalf("record %d (%s): %v", i, record.Name(r), err)
		}
	}
	p := img.Provenance()
	p.LastContainedOffset += int64(len(recs))
	return d.Apply(p)
}

var (
	ordersID = topicID(1)
	clicksID = topicID(2)
)

// testImage: brokers 101 and 102 alive, 103 fenced, 104 alive but with
// only an INTERNAL listener; topic "orders" with partitions led by 101 and
// by 103 (fenced), "clicks" with one partition led by the unregistered 109
// and one by 104.
func testImage(t testing.TB) *image.MetadataImage {
	b104 := register(104, 9)
	b104.EndPoints = []record.BrokerEndpoint{{Name: "INTERNAL", Host: "10.0.0.4", Port: 9094}}
	rack := register(102, 6)
	rack.Rack = str("rack-b")
	clicks0 := partition(clicksID, 0, 109, 101)
	clicks0.Isr = []int32{101}
	return replay(t, image.Empty,
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		register(101, 5), rack, register(103, 7), b104,
		unfence(101, 5), unfence(102, 6), unfence(104, 9),
		&record.TopicRecord{Name: "orders", TopicID: ordersID},
		partition(ordersID, 0, 101, 102, 103), partition(ordersID, 1, 103, 101),
		&record.TopicRecord{Name: "clicks", TopicID: clicksID},
		clicks0, partition(clicksID, 1, 104, 101),
	)
}
