package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/dump"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// everyRecord is one record of each type kraftlab reads, at the versions
// Kafka 4.4 writes and at older ones, with tagged fields both set and at
// their defaults, so that Kafka's JsonConverters print every field form.
func everyRecord() []record.Record {
	topic := record.NewUuid(0x0102030405060708, 0x090a0b0c0d0e0f10)
	dirA, dirB := record.NewUuid(0xaaaaaaaaaaaaaaaa, 0x1111111111111111), record.NewUuid(0x7bbbbbbbbbbbbbbb, 0x2222222222222222)
	rack, val := "rack \"1\"\n<é>", "604800000"
	var out []record.Record
	for v := int16(0); v <= 4; v++ {
		r := &record.RegisterBrokerRecord{
			Version: v, BrokerID: 101, IncarnationID: record.NewUuid(7, 8), BrokerEpoch: 42,
			EndPoints: []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}, {Name: "SSL", Host: "h", Port: 65535, SecurityProtocol: record.SecurityProtocolSSL}},
			Features:  []record.BrokerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}},
			Fenced:    v%2 == 0,
		}
		if v%2 == 1 {
			r.Rack = &rack
		}
		if v >= 3 {
			r.LogDirs = []record.Uuid{dirA, dirB}
		}
		if v >= 4 {
			r.CordonedLogDirs = []record.Uuid{dirB}
		}
		out = append(out, r)
	}
	for v := int16(0); v <= 3; v++ {
		r := &record.BrokerRegistrationChangeRecord{Version: v, BrokerID: 101, BrokerEpoch: 42, Fenced: record.FencingUnfence}
		if v >= 1 {
			r.InControlledShutdown = record.ControlledShutdownBegin
		}
		if v >= 2 {
			r.LogDirs = []record.Uuid{dirA}
		}
		if v >= 3 {
			r.CordonedLogDirs = []record.Uuid{}
		}
		out = append(out, r)
	}
	out = append(out,
		&record.BrokerRegistrationChangeRecord{BrokerID: 5, BrokerEpoch: 6},
		&record.UnregisterBrokerRecord{BrokerID: 102, BrokerEpoch: 9},
		&record.FenceBrokerRecord{ID: 103, Epoch: 1 << 40},
		&record.UnfenceBrokerRecord{ID: 103, Epoch: -1},
		&record.TopicRecord{Name: "orders", TopicID: topic},
		&record.RemoveTopicRecord{TopicID: topic},
		&record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: &val},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, Name: "log.retention.ms"},
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		&record.NoOpRecord{},
		&record.ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 5, NextProducerID: 2000},
		record.NewPartitionChangeRecord(topic, 0),
		&record.BeginTransactionRecord{Name: &val},
		&record.BeginTransactionRecord{},
		&record.EndTransactionRecord{},
		&record.AbortTransactionRecord{Reason: &val},
		&record.AbortTransactionRecord{},
		&record.RegisterControllerRecord{ControllerID: 3000, IncarnationID: topic, ZkMigrationReady: true,
			EndPoints: []record.ControllerEndpoint{{Name: "CONTROLLER", Host: "localhost", Port: 9093, SecurityProtocol: record.SecurityProtocolSASLPlain}},
			Features:  []record.ControllerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}}},
		&record.UnregisterControllerRecord{ControllerID: 3000},
		&record.UserScramCredentialRecord{Name: "kraftlab-member", Mechanism: record.ScramSHA256, Salt: []byte("salt"), StoredKey: []byte{0, 1, 0xfe, 0xff}, ServerKey: []byte{9}, Iterations: 4096},
		&record.RemoveUserScramCredentialRecord{Name: "kraftlab-member", Mechanism: record.ScramSHA512},
	)
	for v := int16(0); v <= 2; v++ {
		p := &record.PartitionRecord{
			Version: v, PartitionID: 7, TopicID: topic, Replicas: []int32{101, 102, 103}, Isr: []int32{101, 102},
			RemovingReplicas: []int32{103}, AddingReplicas: []int32{}, Leader: 101,
			LeaderRecoveryState: int8(v % 2), LeaderEpoch: 3, PartitionEpoch: 9,
		}
		c := &record.PartitionChangeRecord{
			Version: v, PartitionID: 7, TopicID: topic, Isr: []int32{101}, Leader: record.NoLeader,
			Replicas: []int32{101, 102}, RemovingReplicas: []int32{}, AddingReplicas: []int32{102},
			LeaderRecoveryState: record.LeaderRecoveryNoChange,
		}
		if v >= 1 {
			p.Directories = []record.Uuid{dirA, dirB, record.DirectoryUnassigned}
			c.Directories = []record.Uuid{dirA, dirB}
			c.LeaderRecoveryState = record.LeaderRecovered
		}
		if v >= 2 {
			p.EligibleLeaderReplicas, p.LastKnownElr = []int32{103}, []int32{}
			c.EligibleLeaderReplicas, c.LastKnownElr = []int32{102}, []int32{101}
		}
		out = append(out, p, c)
	}
	return out
}

// TestMetadataDecoderMatchesKafka writes every record type into a segment
// (with a LeaderChange first and a batch that does not decode) and a
// snapshot, and compares kraftlab's dump of each with kafka-dump-log
// --cluster-metadata-decoder's, line by line.
func TestMetadataDecoderMatchesKafka(t *testing.T) {
	k := needKafka(t)
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	l, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	if _, _, err := l.AppendControl([]storage.Record{storage.LeaderChangeRecord(1, []int32{1, 2, 3}, []int32{1, 3})}, 1, now); err != nil {
		t.Fatal(err)
	}
	recs := everyRecord()
	for i := 0; i < len(recs); i += 5 {
		var batch []storage.Record
		for _, r := range recs[i:min(i+5, len(recs))] {
			b, err := record.Encode(r)
			if err != nil {
				t.Fatalf("%s v%d: %v", record.Name(r), r.RecordVersion(), err)
			}
			batch = append(batch, storage.Record{Value: b})
		}
		if _, _, err := l.AppendAsLeader(batch, 1, now+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Records Kafka cannot read either: an unknown type, a truncated body.
	if _, _, err := l.AppendAsLeader([]storage.Record{{Value: []byte{1, 99, 0}}, {Value: []byte{1, 2, 0, 0xff}}}, 1, now); err != nil {
		t.Fatal(err)
	}
	// Control records the quorum does not write but Kafka's tool prints:
	// transaction markers and a KRaftVersion.
	key := func(t kmsg.ControlRecordKeyType) []byte { return (&kmsg.ControlRecordKey{Type: t}).AppendTo(nil) }
	marker := (&kmsg.EndTxnMarker{CoordinatorEpoch: 7}).AppendTo(nil)
	if _, _, err := l.AppendControl([]storage.Record{
		{Key: key(kmsg.ControlRecordKeyTypeAbort), Value: marker},
		{Key: key(kmsg.ControlRecordKeyTypeCommit), Value: marker},
		{Key: key(kmsg.ControlRecordKeyTypeKraftVersion), Value: []byte{0, 0, 0, 1, 0}},
	}, 1, now); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segment := filepath.Join(dir, "00000000000000000000.log")

	// A snapshot as storage writes one: header, records, footer.
	var snap []byte
	snap = storage.AppendBatch(snap, storage.BatchSpec{LeaderEpoch: 1, Control: true, Timestamp: now}, []storage.Record{storage.SnapshotHeaderRecord(now - 5)})
	var body []storage.Record
	for _, r := range recs[:6] {
		b, _ := record.Encode(r)
		body = append(body, storage.Record{Value: b})
	}
	snap = storage.AppendBatch(snap, storage.BatchSpec{BaseOffset: 1, LeaderEpoch: 1, Timestamp: now}, body)
	snap = storage.AppendBatch(snap, storage.BatchSpec{BaseOffset: 7, LeaderEpoch: 1, Control: true, Timestamp: now}, []storage.Record{storage.SnapshotFooterRecord()})
	snapshot := filepath.Join(dir, "00000000000000000042-0000000001.checkpoint")
	if err := os.WriteFile(snapshot, snap, 0o644); err != nil {
		t.Fatal(err)
	}

	r := runTool(t, k, MainDumpLog, "--cluster-metadata-decoder", "--files", segment+","+snapshot)
	if r.Err != nil {
		t.Fatalf("kafka-dump-log: %v", r.Err)
	}
	var own strings.Builder
	for _, f := range []string{segment, snapshot} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := dump.ReadFile(f, raw).WriteText(&own); err != nil {
			t.Fatal(err)
		}
	}
	kafkaLines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	ownLines := strings.Split(strings.TrimRight(own.String(), "\n"), "\n")
	if len(kafkaLines) != len(ownLines) {
		t.Errorf("Kafka printed %d lines, kraftlab %d", len(kafkaLines), len(ownLines))
	}
	same := 0
	for i := range min(len(kafkaLines), len(ownLines)) {
		kl, ol := kafkaLines[i], ownLines[i]
		// Error lines agree up to the reason, which each says in its words.
		if kp, _, ok := strings.Cut(kl, " skipping. "); ok {
			if op, _, ok := strings.Cut(ol, " skipping. "); ok && kp == op {
				same++
				t.Logf("line %d, a record neither reads:\n  Kafka:    %s\n  kraftlab: %s", i+1, kl, ol)
				continue
			}
		}
		if kl != ol {
			t.Errorf("line %d:\n  Kafka:    %s\n  kraftlab: %s", i+1, kafkaLines[i], ownLines[i])
			continue
		}
		same++
	}
	t.Logf("%d of %d lines the same", same, len(kafkaLines))
}
