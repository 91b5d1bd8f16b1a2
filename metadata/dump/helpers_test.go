package dump

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

var (
	topicT = record.NewUuid(0x0102030405060708, 0x090a0b0c0d0e0f10)
	incarn = record.NewUuid(7, 8)
	dirA   = record.NewUuid(0xaaaaaaaaaaaaaaaa, 0x1111111111111111)
)

const t0 = 1767225600000 // 2026-01-01T00:00:00Z

func encode(t testing.TB, recs ...record.Record) []storage.Record {
	t.Helper()
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		b, err := record.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i].Value = b
	}
	return out
}

func register(id int32) *record.RegisterBrokerRecord {
	return &record.RegisterBrokerRecord{
		Version: record.RegisterBrokerVersion, BrokerID: id, IncarnationID: incarn, BrokerEpoch: 5,
		EndPoints: []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9192, SecurityProtocol: record.SecurityProtocolPlaintext}},
		Features:  []record.BrokerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}},
		Fenced:    true, LogDirs: []record.Uuid{dirA},
	}
}

func partition(p int32, replicas ...int32) *record.PartitionRecord {
	return &record.PartitionRecord{
		Version: record.PartitionVersion, PartitionID: p, TopicID: topicT,
		Replicas: replicas, Isr: replicas, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
		Leader: replicas[0], Directories: []record.Uuid{dirA, dirA},
	}
}

// smallLog is a segment as a controller writes it: a LeaderChange, the
// metadata.version, a broker registering and being unfenced, a topic with
// two partitions, a config, an ISR change and a NoOp.
func smallLog(t testing.TB) []byte {
	t.Helper()
	var raw []byte
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 0, LeaderEpoch: 1, Control: true, Timestamp: t0},
		[]storage.Record{storage.LeaderChangeRecord(1, []int32{1, 2, 3}, []int32{1, 2})})
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 1, LeaderEpoch: 1, Timestamp: t0 + 10},
		encode(t, &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2}))
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 2, LeaderEpoch: 1, Timestamp: t0 + 20},
		encode(t, register(101), &record.BrokerRegistrationChangeRecord{BrokerID: 101, BrokerEpoch: 5, Fenced: record.FencingUnfence}))
	pc := record.NewPartitionChangeRecord(topicT, 1)
	pc.Isr = []int32{102}
	val := "604800000"
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 4, LeaderEpoch: 1, Timestamp: t0 + 30},
		encode(t, &record.TopicRecord{Name: "t", TopicID: topicT}, partition(0, 101, 102), partition(1, 102, 101),
			&record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "t", Name: "retention.ms", Value: &val}, pc))
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 9, LeaderEpoch: 1, Timestamp: t0 + 40}, encode(t, &record.NoOpRecord{}))
	return raw
}

// smallSnapshot is a snapshot at end offset 10, epoch 1: header, records,
// footer, each in its own batch as storage's SnapshotWriter writes them.
func smallSnapshot(t testing.TB) []byte {
	t.Helper()
	var raw []byte
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 0, LeaderEpoch: 1, Control: true, Timestamp: t0 + 50},
		[]storage.Record{storage.SnapshotHeaderRecord(t0 + 40)})
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 1, LeaderEpoch: 1, Timestamp: t0 + 50},
		encode(t, &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
			register(101), &record.TopicRecord{Name: "t", TopicID: topicT}, partition(0, 101, 102)))
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 5, LeaderEpoch: 1, Control: true, Timestamp: t0 + 50},
		[]storage.Record{storage.SnapshotFooterRecord()})
	return raw
}
