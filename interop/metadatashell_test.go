package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/image/node"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// shellRecords are the records of a small cluster for the node comparison:
// brokers with listeners, features, racks and log directories (in an
// order Kafka re-sorts), topics, partitions with ELR and recovery state,
// configs of every resource kind.
func shellRecords() []record.Record {
	topic, empty := record.NewUuid(0x0102030405060708, 0x090a0b0c0d0e0f10), record.NewUuid(0x7fffffffffffffff, 2)
	dirLow, dirHigh := record.NewUuid(0xaaaaaaaaaaaaaaaa, 0x1111111111111111), record.NewUuid(0x1bbbbbbbbbbbbbbb, 0x2222222222222222)
	s := func(v string) *string { return &v }
	return []record.Record{
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		&record.FeatureLevelRecord{Name: "group.version", FeatureLevel: 1},
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
			Rack: s("r1"), Fenced: true, LogDirs: []record.Uuid{dirHigh, dirLow},
		},
		&record.RegisterBrokerRecord{
			Version: record.RegisterBrokerVersion, BrokerID: 99, IncarnationID: record.NewUuid(9, 9), BrokerEpoch: 6,
			EndPoints: []record.BrokerEndpoint{{Name: "SASL", Host: "::1", Port: 9292, SecurityProtocol: record.SecurityProtocolSASLSSL}},
			Features:  []record.BrokerFeature{{Name: "transaction.version", MinSupportedVersion: 0, MaxSupportedVersion: 1<<15 - 1}},
			Fenced:    true, CordonedLogDirs: []record.Uuid{dirHigh, dirLow},
		},
		&record.BrokerRegistrationChangeRecord{BrokerID: 99, BrokerEpoch: 6, Fenced: record.FencingUnfence},
		&record.TopicRecord{Name: "t", TopicID: topic},
		&record.PartitionRecord{
			Version: record.PartitionVersion, PartitionID: 0, TopicID: topic,
			Replicas: []int32{101, 99}, Isr: []int32{101, 99}, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
			Leader: 101, LeaderEpoch: 2, PartitionEpoch: 5, Directories: []record.Uuid{dirHigh, dirLow},
		},
		&record.PartitionRecord{
			Version: record.PartitionVersion, PartitionID: 10, TopicID: topic,
			Replicas: []int32{99, 101}, Isr: []int32{99}, RemovingReplicas: []int32{101}, AddingReplicas: []int32{},
			Leader: 99, LeaderRecoveryState: record.LeaderRecovering, Directories: []record.Uuid{dirLow, dirHigh},
			EligibleLeaderReplicas: []int32{101}, LastKnownElr: []int32{},
		},
		&record.TopicRecord{Name: "empty", TopicID: empty},
		&record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "t", Name: "retention.ms", Value: s("604800000")},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, Name: "log.retention.ms", Value: s("1000")},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, ResourceName: "101", Name: "num.io.threads", Value: s("4")},
		&record.ConfigRecord{ResourceType: record.ResourceBrokerLogger, ResourceName: "101", Name: "kafka.raft", Value: s("DEBUG")},
		&record.ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 5, NextProducerID: 1000},
		&record.ProducerIdsRecord{BrokerID: 99, BrokerEpoch: 2, NextProducerID: 2000},
	}
}

// TestImageNodesMatchKafka replays the same segment into Kafka's
// MetadataImage (interop/testdata/ImageTree.java, Kafka's own node
// classes) and into kraftlab's, and compares the two trees line by line.
func TestImageNodesMatchKafka(t *testing.T) {
	k := needKafka(t)
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	l, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := shellRecords()
	now := time.Now().UnixMilli()
	for i := 0; i < len(recs); i += 4 {
		var batch []storage.Record
		for _, r := range recs[i:min(i+4, len(recs))] {
			b, err := record.Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, storage.Record{Value: b})
		}
		if _, _, err := l.AppendAsLeader(batch, 3, now+int64(i)*7); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segment := filepath.Join(dir, "00000000000000000000.log")

	// kraftlab's image from the same bytes, provenance as the Java side
	// takes it: the last record's offset and time, its batch's epoch.
	raw, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	d := image.NewMetadataDelta(image.Empty)
	prov := image.MetadataProvenance{IsOffsetBatchAligned: true}
	err = storage.Batches(raw, func(_ int, b *storage.Batch) error {
		rs, err := b.Records()
		if err != nil {
			return err
		}
		for _, r := range rs {
			m, err := record.Decode(r.Value)
			if err != nil {
				return err
			}
			if err := d.Replay(m); err != nil {
				return err
			}
			prov.LastContainedOffset, prov.LastContainedLogTimeMs = r.Offset, r.Timestamp
		}
		prov.LastContainedEpoch = b.PartitionLeaderEpoch
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	own := node.Cat(must(node.Find(node.Root(d.Apply(prov)), "/image")))
	own = "image:\n" + indentBy(own, "  ")

	src, _ := filepath.Abs(filepath.Join("testdata", "ImageTree.java"))
	r := runTool(t, k, src, segment)
	if r.Err != nil {
		t.Fatalf("ImageTree.java: %v\n%s", r.Err, r.Stderr)
	}
	kafkaLines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	ownLines := strings.Split(strings.TrimRight(own, "\n"), "\n")
	if len(kafkaLines) != len(ownLines) {
		t.Errorf("Kafka printed %d lines, kraftlab %d\n--- kraftlab\n%s", len(kafkaLines), len(ownLines), own)
	}
	same := 0
	for i := range min(len(kafkaLines), len(ownLines)) {
		if kafkaLines[i] != ownLines[i] {
			t.Errorf("line %d:\n  Kafka:    %s\n  kraftlab: %s", i+1, kafkaLines[i], ownLines[i])
			continue
		}
		same++
	}
	t.Logf("%d of %d lines the same", same, len(kafkaLines))
}

func must(n node.Node, err error) node.Node {
	if err != nil {
		panic(err)
	}
	return n
}

// indentBy puts prefix before every non-empty line of s.
func indentBy(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
