package image

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

func TestReplayBuildsTheImage(t *testing.T) {
	img := cluster(t)
	if p := img.Provenance(); p.LastContainedOffset != 10 || p.LastContainedLogTimeMs != 1010 {
		t.Errorf("provenance %v", p)
	}
	if mv, ok := img.Features().MetadataVersion(); !ok || mv != 33 {
		t.Errorf("metadata.version %d %v", mv, ok)
	}
	if l, _ := img.Features().Level("group.version"); l != 1 {
		t.Errorf("group.version %d", l)
	}
	if ids := img.Cluster().BrokerIDs(); !slices.Equal(ids, []int32{101, 102, 103}) {
		t.Errorf("brokers %v", ids)
	}
	b := img.Cluster().Broker(101)
	if b.Fenced || b.Epoch != 5 || !img.Cluster().Broker(103).Fenced {
		t.Errorf("fencing: 101 %+v, 103 fenced %v", b, img.Cluster().Broker(103).Fenced)
	}
	if e, ok := b.Listener("PLAINTEXT"); !ok || e.Port != 9101 {
		t.Errorf("listener %+v", e)
	}
	orders := img.Topics().TopicByName("orders")
	if orders == nil || orders.NumPartitions() != 2 || img.Topics().NumPartitions() != 3 || img.Topics().Len() != 2 {
		t.Fatalf("topics: %v, %d partitions", img.Topics().Names(), img.Topics().NumPartitions())
	}
	if img.Topics().Topic(orders.ID()) != orders {
		t.Error("byID and byName disagree")
	}
	p := img.Topics().Partition(orders.ID(), 1)
	if p.Leader != 102 || !slices.Equal(p.Isr, []int32{102, 103, 101}) {
		t.Errorf("partition 1: %+v", p)
	}
	if v, _ := img.Configs().Resource(ConfigResource{record.ResourceTopic, "orders"}).Get("retention.ms"); v != "60000" {
		t.Errorf("retention.ms %q", v)
	}
}

func TestPartitionChangeMerges(t *testing.T) {
	img := cluster(t)
	orders := topicID(1)
	shrink := record.NewPartitionChangeRecord(orders, 0)
	shrink.Isr = []int32{101, 102}
	img2 := replayAll(t, img, 11, shrink)
	p := img2.Topics().Partition(orders, 0)
	if !slices.Equal(p.Isr, []int32{101, 102}) || p.Leader != 101 || p.LeaderEpoch != 0 || p.PartitionEpoch != 1 {
		t.Errorf("ISR shrink: %+v", p)
	}
	elect := record.NewPartitionChangeRecord(orders, 0)
	elect.Leader = 102
	elect.Isr = []int32{102}
	img3 := replayAll(t, img2, 12, elect)
	p = img3.Topics().Partition(orders, 0)
	if p.Leader != 102 || p.LeaderEpoch != 1 || p.PartitionEpoch != 2 || !slices.Equal(p.Replicas, []int32{101, 102, 103}) {
		t.Errorf("election: %+v", p)
	}
	// The earlier images are untouched.
	if q := img2.Topics().Partition(orders, 0); q.Leader != 101 || q.PartitionEpoch != 1 {
		t.Errorf("img2 changed: %+v", q)
	}
	if q := img.Topics().Partition(orders, 0); q.PartitionEpoch != 0 || len(q.Isr) != 3 {
		t.Errorf("img changed: %+v", q)
	}
}

func TestBrokerChanges(t *testing.T) {
	img := cluster(t)
	img = replayAll(t, img, 11,
		fence(101, 5, record.FencingFence),
		&record.BrokerRegistrationChangeRecord{Version: 1, BrokerID: 102, BrokerEpoch: 6, InControlledShutdown: record.ControlledShutdownBegin},
		&record.UnfenceBrokerRecord{ID: 103, Epoch: 7},
		&record.BrokerRegistrationChangeRecord{Version: 3, BrokerID: 103, BrokerEpoch: 7, LogDirs: []record.Uuid{topicID(9)}, CordonedLogDirs: []record.Uuid{}},
	)
	c := img.Cluster()
	if !c.Broker(101).Fenced || !c.Broker(102).InControlledShutdown || c.Broker(103).Fenced {
		t.Errorf("brokers: %+v %+v %+v", c.Broker(101), c.Broker(102), c.Broker(103))
	}
	if b := c.Broker(103); !slices.Equal(b.Directories, []record.Uuid{topicID(9)}) || b.CordonedDirectories == nil {
		t.Errorf("directories: %+v", b)
	}
	img = replayAll(t, img, 12, &record.FenceBrokerRecord{ID: 103, Epoch: 7}, &record.UnregisterBrokerRecord{BrokerID: 102, BrokerEpoch: 6})
	if !img.Cluster().Broker(103).Fenced || img.Cluster().Broker(102) != nil || img.Cluster().Len() != 2 {
		t.Errorf("after fence and unregister: %v", img.Cluster().BrokerIDs())
	}
	// A new registration replaces the old incarnation.
	img = replayAll(t, img, 13, register(101, 99))
	if b := img.Cluster().Broker(101); b.Epoch != 99 || !b.Fenced {
		t.Errorf("re-registered: %+v", b)
	}
}

func TestRemoveTopicDropsItsConfigs(t *testing.T) {
	img := cluster(t)
	orders := img.Topics().TopicByName("orders")
	img2 := replayAll(t, img, 11, &record.RemoveTopicRecord{TopicID: orders.ID()})
	if img2.Topics().TopicByName("orders") != nil || img2.Topics().Topic(orders.ID()) != nil {
		t.Error("topic still there")
	}
	if img2.Topics().NumPartitions() != 1 || img2.Topics().Len() != 1 {
		t.Errorf("%d topics, %d partitions", img2.Topics().Len(), img2.Topics().NumPartitions())
	}
	if img2.Configs().Resource(ConfigResource{record.ResourceTopic, "orders"}) != nil {
		t.Error("the topic's configs survived it")
	}
	// Removed and created again under the same name, in one delta.
	again := topicID(77)
	img3 := replayAll(t, img, 11,
		&record.RemoveTopicRecord{TopicID: orders.ID()},
		&record.TopicRecord{Name: "orders", TopicID: again},
		partition(again, 0, 101))
	if tt := img3.Topics().TopicByName("orders"); tt == nil || tt.ID() != again || tt.NumPartitions() != 1 {
		t.Errorf("recreated: %+v", tt)
	}
	if img3.Topics().NumPartitions() != 2 {
		t.Errorf("%d partitions", img3.Topics().NumPartitions())
	}
	// A config deleted by a null value.
	img4 := replayAll(t, img, 11, &record.ConfigRecord{ResourceType: record.ResourceBroker, Name: "log.retention.ms"})
	if img4.Configs().Resource(ConfigResource{record.ResourceBroker, ""}) != nil {
		t.Error("deleting the last key should drop the resource")
	}
}

func TestReplayRefusesContradictions(t *testing.T) {
	img := cluster(t)
	orders := topicID(1)
	unknown := topicID(404)
	change := func(topic record.Uuid, p int32) *record.PartitionChangeRecord {
		c := record.NewPartitionChangeRecord(topic, p)
		c.Leader = 102
		return c
	}
	badDirs := partition(orders, 5, 101, 102)
	badDirs.Directories = badDirs.Directories[:1]
	cases := []struct {
		rec  record.Record
		says string
	}{
		{change(unknown, 0), "PartitionChangeRecord: no topic has id " + unknown.String()},
		{change(orders, 9), "PartitionChangeRecord: topic orders (" + orders.String() + ") has no partition 9"},
		{partition(unknown, 0, 101), "PartitionRecord: no topic has id"},
		{badDirs, "has 2 replicas but 1 directories"},
		{&record.RemoveTopicRecord{TopicID: unknown}, "cannot remove topic"},
		{&record.TopicRecord{Name: "orders", TopicID: unknown}, "topic orders already exists"},
		{&record.TopicRecord{Name: "new", TopicID: orders}, "already exists, named orders"},
		{fence(999, 1, record.FencingFence), "cannot change broker 999: it is not registered"},
		{fence(101, 4, record.FencingFence), "cannot change broker 101 at epoch 4: its registration has epoch 5"},
		{fence(101, 5, 2), "unknown value 2 of Fenced"},
		{&record.FenceBrokerRecord{ID: 101, Epoch: 1}, "cannot fence broker 101"},
		{&record.UnfenceBrokerRecord{ID: 7, Epoch: 1}, "cannot unfence broker 7"},
		{&record.UnregisterBrokerRecord{BrokerID: 101, BrokerEpoch: 1}, "cannot unregister broker 101"},
		{&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: 3}, "unsupported metadata.version 3"},
	}
	for _, c := range cases {
		d := NewMetadataDelta(img)
		err := d.Replay(c.rec)
		if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: got %v, want one saying %q", record.Name(c.rec), err, c.says)
			continue
		}
		// A refused record leaves the delta as it was.
		if next := d.Apply(img.Provenance()); !next.Equal(img) {
			t.Errorf("%s: the refused record changed the delta", record.Name(c.rec))
		}
	}
}

func TestApplySharesUnchangedParts(t *testing.T) {
	img := cluster(t)
	orders, clicks := img.Topics().TopicByName("orders"), img.Topics().TopicByName("clicks")
	c := record.NewPartitionChangeRecord(orders.ID(), 1)
	c.Isr = []int32{102}
	next := replayAll(t, img, 11, c)
	if next.Topics().TopicByName("clicks") != clicks || next.Topics().Topic(clicks.ID()) != clicks {
		t.Error("an unchanged topic was copied")
	}
	if next.Topics().TopicByName("orders") == orders {
		t.Error("the changed topic was not replaced")
	}
	if next.Topics().Partition(orders.ID(), 0) != orders.Partition(0) {
		t.Error("an unchanged partition was copied")
	}
	if next.Cluster() != img.Cluster() || next.Features() != img.Features() || next.Configs() != img.Configs() {
		t.Error("an untouched sub-image was copied")
	}
	// Looking at a topic without changing it changes nothing.
	d := NewMetadataDelta(img)
	if err := d.Replay(record.NewPartitionChangeRecord(unknownTopic, 0)); err == nil {
		t.Fatal("change of an unknown topic replayed")
	}
	if err := d.Replay(&record.NoOpRecord{}); err != nil {
		t.Fatal(err)
	}
	if same := d.Apply(img.Provenance()); same.Topics() != img.Topics() {
		t.Error("a delta without changes copied the topics")
	}
}

var unknownTopic = topicID(12345)

// Applying records one delta at a time, or all in one delta, gives the
// same image.
func TestOneDeltaOrMany(t *testing.T) {
	img := cluster(t)
	orders := topicID(1)
	var recs []record.Record
	for i := 0; i < 20; i++ {
		c := record.NewPartitionChangeRecord(orders, int32(i%2))
		c.Leader = []int32{101, 102, 103}[i%3]
		recs = append(recs, c)
		if i == 10 {
			recs = append(recs, &record.TopicRecord{Name: "late", TopicID: topicID(50)}, partition(topicID(50), 0, 101))
		}
	}
	one := replayAll(t, img, 100, recs...)
	many := img
	for i, r := range recs {
		many = replayAll(t, many, int64(11+i), r)
	}
	many = NewMetadataDelta(many).Apply(one.Provenance())
	if !one.Equal(many) {
		t.Error("one delta and many disagree")
	}
	if p := one.Topics().Partition(orders, 0); p.LeaderEpoch != 10 || p.PartitionEpoch != 10 {
		t.Errorf("partition 0 after 10 elections: %+v", p)
	}
}
