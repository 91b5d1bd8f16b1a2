package image

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// load replays encoded snapshot records into a delta of base.
func load(t testing.TB, base *MetadataImage, recs []record.Record, p MetadataProvenance, snapshot bool) *MetadataImage {
	t.Helper()
	d := NewMetadataDelta(base)
	if snapshot {
		d = NewSnapshotDelta(base)
	}
	for _, r := range recs {
		b, err := record.Encode(r)
		if err != nil {
			t.Fatalf("%s: %v", record.Name(r), err)
		}
		back, err := record.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", record.Name(r), err)
		}
		if err := d.Replay(back); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply(p)
}

func TestRecordsRebuildTheImage(t *testing.T) {
	img := cluster(t)
	c := record.NewPartitionChangeRecord(topicID(1), 0)
	c.EligibleLeaderReplicas = []int32{103}
	c.LeaderRecoveryState = record.LeaderRecovering
	img = replayAll(t, img, 11, c, &record.BrokerRegistrationChangeRecord{Version: 3, BrokerID: 101, BrokerEpoch: 5, CordonedLogDirs: []record.Uuid{}})
	recs, err := img.Records()
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := recs[0].(*record.FeatureLevelRecord); !ok || f.Name != record.MetadataVersionFeature || f.Version != 0 {
		t.Errorf("first record %+v, want metadata.version at v0", recs[0])
	}
	back := load(t, Empty, recs, img.Provenance(), false)
	if !back.Equal(img) {
		t.Error("the image's records do not rebuild it")
	}
	again, _ := back.Records()
	if len(again) != len(recs) {
		t.Errorf("%d records, then %d", len(recs), len(again))
	}
	if Empty.IsEmpty() != true || img.IsEmpty() {
		t.Error("IsEmpty")
	}
	if recs, _ := Empty.Records(); len(recs) != 0 {
		t.Errorf("the empty image writes %d records", len(recs))
	}
}

func TestRecordsAtAnOlderMetadataVersion(t *testing.T) {
	orders := topicID(1)
	old := &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersionMinimum}
	p := partition(orders, 0, 101)
	p.Directories = nil
	img := replayAll(t, Empty, 3, old, &record.TopicRecord{Name: "orders", TopicID: orders}, p)
	recs, err := img.Records()
	if err != nil {
		t.Fatal(err)
	}
	if v := recs[len(recs)-1].RecordVersion(); v != 0 {
		t.Errorf("PartitionRecord at v%d for metadata.version 7", v)
	}
	if back := load(t, Empty, recs, img.Provenance(), false); !back.Equal(img) {
		t.Error("round trip at metadata.version 7")
	}
	// A directory assignment cannot be written at metadata.version 7.
	withDirs := replayAll(t, img, 4, func() record.Record {
		c := record.NewPartitionChangeRecord(orders, 0)
		c.Directories = []record.Uuid{topicID(3)}
		return c
	}())
	if _, err := withDirs.Records(); err == nil || !strings.Contains(err.Error(), "directory assignment") {
		t.Errorf("got %v", err)
	}
}

func TestSnapshotDeltaReplacesTheImage(t *testing.T) {
	a := cluster(t)
	// b: a with orders removed, a topic added, a broker gone, a config
	// changed, group.version dropped.
	b := replayAll(t, a, 20,
		&record.RemoveTopicRecord{TopicID: topicID(1)},
		&record.TopicRecord{Name: "fresh", TopicID: topicID(3)},
		partition(topicID(3), 0, 101),
		&record.UnregisterBrokerRecord{BrokerID: 103, BrokerEpoch: 7},
		&record.ConfigRecord{ResourceType: record.ResourceBroker, Name: "log.retention.ms", Value: str("2")},
		&record.FeatureLevelRecord{Name: "group.version", FeatureLevel: 0},
	)
	recs, err := b.Records()
	if err != nil {
		t.Fatal(err)
	}
	got := load(t, a, recs, b.Provenance(), true)
	if !got.Equal(b) {
		t.Error("a snapshot of b loaded on a is not b")
	}
	// An empty snapshot empties everything but metadata.version, which
	// Kafka's FeaturesDelta.finishSnapshot keeps (every real snapshot
	// starts by restating it).
	got = load(t, a, nil, EmptyProvenance, true)
	if !got.Cluster().IsEmpty() || !got.Topics().IsEmpty() || !got.Configs().IsEmpty() || len(got.Features().Names()) != 0 {
		t.Error("an empty snapshot left state behind")
	}
	if mv, _ := got.Features().MetadataVersion(); mv != record.MetadataVersion4_4IV2 {
		t.Errorf("metadata.version %d", mv)
	}
}
