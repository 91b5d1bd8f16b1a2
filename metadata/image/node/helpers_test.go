package node

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

var (
	topicT = record.NewUuid(0x0102030405060708, 0x090a0b0c0d0e0f10)
	topicU = record.NewUuid(0x7fffffffffffffff, 2)
	// dirLow sorts before dirHigh as Kafka compares uuids (signed), though
	// its bytes are greater.
	dirLow  = record.NewUuid(0xaaaaaaaaaaaaaaaa, 0x1111111111111111)
	dirHigh = record.NewUuid(0x1bbbbbbbbbbbbbbb, 0x2222222222222222)
)

func str(s string) *string { return &s }

// replay builds an image by replaying recs from the empty image, the last
// record at offset.
func replay(t testing.TB, offset int64, timeMs int64, recs ...record.Record) *image.MetadataImage {
	t.Helper()
	d := image.NewMetadataDelta(image.Empty)
	for i, r := range recs {
		if err := d.Replay(r); err != nil {
			t.Fatalf("record %d (%s): %v", i, record.Name(r), err)
		}
	}
	return d.Apply(image.MetadataProvenance{LastContainedOffset: offset, LastContainedEpoch: 3, LastContainedLogTimeMs: timeMs})
}

// small is a cluster of two brokers (one fenced, one with a rack and two
// listeners), a topic with two partitions and one with none, and configs of
// a topic, a broker, the broker default and a broker logger.
func small(t testing.TB) *image.MetadataImage {
	t.Helper()
	p0 := &record.PartitionRecord{
		Version: record.PartitionVersion, PartitionID: 0, TopicID: topicT,
		Replicas: []int32{101, 102}, Isr: []int32{101, 102}, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
		Leader: 101, LeaderEpoch: 2, PartitionEpoch: 5, Directories: []record.Uuid{dirLow, dirHigh},
	}
	p1 := &record.PartitionRecord{
		Version: record.PartitionVersion, PartitionID: 1, TopicID: topicT,
		Replicas: []int32{102, 101}, Isr: []int32{102}, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
		Leader: 102, LeaderRecoveryState: record.LeaderRecovering, Directories: []record.Uuid{dirHigh, dirLow},
		EligibleLeaderReplicas: []int32{101}, LastKnownElr: []int32{},
	}
	return replay(t, 41, 1767225600123,
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		&record.FeatureLevelRecord{Name: "group.version", FeatureLevel: 1},
		&record.UserScramCredentialRecord{Name: "kraftlab-member", Mechanism: record.ScramSHA256, Salt: []byte{1}, StoredKey: []byte{2}, ServerKey: []byte{3}, Iterations: 4096},
		&record.RegisterControllerRecord{
			ControllerID: 3000, IncarnationID: record.NewUuid(11, 12),
			EndPoints: []record.ControllerEndpoint{
				{Name: "CONTROLLER_SSL", Host: "localhost", Port: 9094, SecurityProtocol: record.SecurityProtocolSSL},
				{Name: "CONTROLLER", Host: "localhost", Port: 9093, SecurityProtocol: record.SecurityProtocolSASLPlain},
			},
			Features: []record.ControllerFeature{
				{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33},
				{Name: "kraft.version", MinSupportedVersion: 0, MaxSupportedVersion: 1},
			},
		},
		&record.RegisterBrokerRecord{
			Version: record.RegisterBrokerVersion, BrokerID: 101, IncarnationID: record.NewUuid(7, 8), BrokerEpoch: 5,
			EndPoints: []record.BrokerEndpoint{
				{Name: "SSL", Host: "localhost", Port: 9193, SecurityProtocol: record.SecurityProtocolSSL},
				{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9192},
			},
			Features: []record.BrokerFeature{
				{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33},
				{Name: "group.version", MinSupportedVersion: 0, MaxSupportedVersion: 1},
				{Name: "kraft.version", MinSupportedVersion: 0, MaxSupportedVersion: 0},
			},
			Rack: str("r1"), Fenced: true, LogDirs: []record.Uuid{dirLow, dirHigh},
		},
		&record.RegisterBrokerRecord{
			Version: record.RegisterBrokerVersion, BrokerID: 102, IncarnationID: record.NewUuid(9, 9), BrokerEpoch: 6,
			EndPoints: []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9292}},
			Features:  []record.BrokerFeature{{Name: "transaction.version", MinSupportedVersion: 0, MaxSupportedVersion: 1<<15 - 1}},
			Fenced:    true, CordonedLogDirs: []record.Uuid{dirHigh},
		},
		&record.BrokerRegistrationChangeRecord{BrokerID: 102, BrokerEpoch: 6, Fenced: record.FencingUnfence},
		&record.TopicRecord{Name: "t", TopicID: topicT}, p0, p1,
		&record.TopicRecord{Name: "empty", TopicID: topicU},
		&record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "t", Name: "retention.ms", Value: str("604800000")},
		&record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "t", Name: "cleanup.policy", Value: str("compact")},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: str("1000")},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, ResourceName: "101", Name: "num.io.threads", Value: str("4")},
		&record.ConfigRecord{ResourceType: record.ResourceBrokerLogger, ResourceName: "101", Name: "kafka.raft", Value: str("DEBUG")},
	)
}
