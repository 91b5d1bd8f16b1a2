package loader

import (
	"errors"
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Committed batches of real records become one image per HandleCommit,
// whose provenance is the last batch's offset, epoch and append time.
func TestBatchesBecomeImages(t *testing.T) {
	w := newLogWriter(t)
	pub := &publisher{}
	l := New(Config{NodeID: 1, Publishers: []Publisher{pub}})
	if l.Image() != image.Empty {
		t.Fatal("a new loader's image is not image.Empty")
	}
	if m := l.Metrics(); m.LastAppliedRecordOffset != -1 || m.LastAppliedRecordLagMs != 0 {
		t.Fatalf("metrics before the first record: %+v", m)
	}
	orders := topic("orders", 1)
	b1 := w.records(metadataVersion(), orders, partition(orders.TopicID, 0, 101, 102))
	w.epoch = 2
	b2 := w.records(config("orders", "retention.ms", "60000"), &record.NoOpRecord{})
	l.HandleCommit([]storage.Batch{b1, b2})

	img := l.Image()
	want := image.MetadataProvenance{LastContainedOffset: 4, LastContainedEpoch: 2, LastContainedLogTimeMs: b2.MaxTimestamp, IsOffsetBatchAligned: true}
	if img.Provenance() != want {
		t.Errorf("provenance %v, want %v", img.Provenance(), want)
	}
	ti := img.Topics().TopicByName("orders")
	if ti == nil || ti.Partition(0) == nil || ti.Partition(0).Leader != 101 {
		t.Fatalf("topic orders not in the image as replayed: %+v", ti)
	}
	if v, _ := img.Configs().Resource(image.ConfigResource{Type: record.ResourceTopic, Name: "orders"}).Get("retention.ms"); v != "60000" {
		t.Errorf("retention.ms = %q", v)
	}
	if len(pub.images) != 1 || pub.images[0] != img {
		t.Fatalf("publisher saw %d images, want the one published", len(pub.images))
	}
	m := pub.manifests[0]
	if m.Kind != LogDelta || m.Batches != 2 || m.Records != 5 || m.FirstOffset != 0 || m.Provenance != want || m.Bytes != int64(b1.Size()+b2.Size()) {
		t.Errorf("manifest %+v", m)
	}
	met := l.Metrics()
	if met.LastAppliedRecordOffset != 4 || met.LastAppliedRecordTimestamp != b2.MaxTimestamp || met.CurrentMetadataVersion != record.MetadataVersion4_4IV2 || met.LastAppliedRecordLagMs <= 0 {
		t.Errorf("metrics %+v", met)
	}
}

// A control batch moves the image's offset and changes nothing else.
func TestControlBatchesMoveTheOffsetOnly(t *testing.T) {
	w := newLogWriter(t)
	l := New(Config{})
	l.HandleCommit([]storage.Batch{w.control()})
	img := l.Image()
	if !img.IsEmpty() || img.Provenance().LastContainedOffset != 0 {
		t.Fatalf("after a LeaderChange: empty %v, provenance %v", img.IsEmpty(), img.Provenance())
	}
	orders := topic("orders", 1)
	l.HandleCommit([]storage.Batch{w.records(orders), w.control()})
	if got := l.Image().Provenance().LastContainedOffset; got != 2 {
		t.Errorf("offset %d after a data and a control batch, want 2", got)
	}
	if l.Image().Topics().TopicByName("orders") == nil {
		t.Error("the data batch before the control batch was not applied")
	}
}

// A record Replay refuses stops the loader there: every record before it
// is published (the image then ends inside the failing batch), nothing
// after, and the error names offset and type.
func TestReplayErrorStopsAtTheRecord(t *testing.T) {
	w := newLogWriter(t)
	ev := &events{}
	pub := &publisher{}
	l := New(Config{NodeID: 7, OnEvent: ev.add, Publishers: []Publisher{pub}})
	orders, ghost := topic("orders", 1), topic("ghost", 2)
	good := w.records(orders)
	bad := w.records(topic("clicks", 3), record.NewPartitionChangeRecord(ghost.TopicID, 0)) // offsets 1, 2
	after := w.records(topic("later", 4))
	l.HandleCommit([]storage.Batch{good, bad, after})

	want := image.MetadataProvenance{LastContainedOffset: 1, LastContainedEpoch: 1, LastContainedLogTimeMs: bad.MaxTimestamp}
	if got := l.Image().Provenance(); got != want {
		t.Errorf("published %v, want %v (the record before the bad one)", got, want)
	}
	if l.Image().Topics().TopicByName("clicks") == nil || l.Image().Topics().TopicByName("later") != nil {
		t.Error("not exactly the records before the failing one were published")
	}
	errs := ev.of(EventLoadError)
	if len(errs) != 1 || errs[0].Offset != 2 || errs[0].RecordType != "PartitionChangeRecord" || errs[0].Node != 7 || !errors.Is(errs[0].Err, image.ErrInconsistent) {
		t.Fatalf("load error events %v", errs)
	}
	if m := l.Metrics(); m.MetadataLoadErrorCount != 1 || m.LastAppliedRecordOffset != 1 {
		t.Errorf("metrics %+v", m)
	}
	if l.Err() == nil {
		t.Error("Err is nil after a load error")
	}
	// Nothing past the record, ever.
	l.HandleCommit([]storage.Batch{w.records(topic("even-later", 5))})
	if got := l.Image().Provenance().LastContainedOffset; got != 1 || len(pub.images) != 1 {
		t.Errorf("after the error: offset %d, %d images published", got, len(pub.images))
	}
	// The image ends inside a batch, so a snapshot is of the last image
	// that ends one: none here.
	if end, recs, err := l.SnapshotRecords(); err != nil || end != 0 || len(recs) != 0 {
		t.Errorf("snapshot of a stopped loader at %d with %d records (%v), want the empty image's", end, len(recs), err)
	}
}

// A value that is not a metadata record stops the loader, naming the
// type its frame header claims.
func TestUndecodableRecordStops(t *testing.T) {
	for _, c := range []struct {
		name, wantType string
		value          []byte
	}{
		{"truncated TopicRecord", "TopicRecord", []byte{1, 2, 0, 5}},
		{"unknown type", "apiKey 999", []byte{1, 0xe7, 0x07, 0}},
		{"opaque bytes", "record", []byte{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newLogWriter(t)
			ev := &events{}
			l := New(Config{OnEvent: ev.add})
			l.HandleCommit([]storage.Batch{w.values(c.value)})
			errs := ev.of(EventLoadError)
			if len(errs) != 1 || errs[0].Offset != 0 || !(errors.Is(errs[0].Err, record.ErrMalformed) || errors.Is(errs[0].Err, record.ErrUnknown)) {
				t.Fatalf("events %v", errs)
			}
			if errs[0].RecordType != c.wantType {
				t.Errorf("record type %q, want %q", errs[0].RecordType, c.wantType)
			}
			if l.Image() != image.Empty {
				t.Error("an image was published")
			}
		})
	}
}

// A snapshot replaces the image: what it does not hold is gone; the first
// replay after it is reported with its record count.
func TestSnapshotLoadReplacesTheImage(t *testing.T) {
	// The snapshot's source: a loader that saw the log of another node.
	src := New(Config{})
	ws := newLogWriter(t)
	clicks := topic("clicks", 2)
	src.HandleCommit([]storage.Batch{ws.records(metadataVersion(), clicks, partition(clicks.TopicID, 0, 101)), ws.records(config("clicks", "k", "v"))})
	snap := snapshotOf(t, src, 1)

	ev := &events{}
	pub := &publisher{}
	l := New(Config{OnEvent: ev.add, Publishers: []Publisher{pub}})
	w := newLogWriter(t)
	l.HandleCommit([]storage.Batch{w.records(topic("orders", 1))})
	l.HandleLoadSnapshot(snap)
	img := l.Image()
	if img.Topics().TopicByName("orders") != nil || img.Topics().TopicByName("clicks") == nil {
		t.Fatal("the snapshot did not replace the image")
	}
	if !img.Equal(src.Image()) {
		t.Errorf("image after the snapshot %v differs from its source's %v", img.Provenance(), src.Image().Provenance())
	}
	m := pub.manifests[len(pub.manifests)-1]
	if m.Kind != SnapshotLoad || m.Snapshot != snap.ID || m.SnapshotRecords != len(snap.Records) {
		t.Errorf("manifest %+v", m)
	}
	if got := l.Metrics().HandleLoadSnapshotCount; got != 1 {
		t.Errorf("handle-load-snapshot-count %d", got)
	}
	loaded := ev.of(EventSnapshotLoaded)
	if len(loaded) != 1 || loaded[0].Snapshot != snap.ID || loaded[0].Records != len(snap.Records) {
		t.Fatalf("snapshot events %v", loaded)
	}
	// The tail after the snapshot.
	w.next = snap.ID.EndOffset
	l.HandleCommit([]storage.Batch{w.records(topic("tail", 9), config("tail", "a", "b"))})
	if l.Image().Topics().TopicByName("tail") == nil {
		t.Fatal("the tail after the snapshot was not applied")
	}
	replayed := ev.of(EventReplayed)
	last := replayed[len(replayed)-1]
	if !last.HasSnapshot || last.Snapshot != snap.ID || last.SnapshotRecords != len(snap.Records) || last.Records != 2 || last.Offset != snap.ID.EndOffset+1 {
		t.Errorf("replayed event %+v", last)
	}
}

// SnapshotRecords writes the image so that loading it gives it back.
func TestSnapshotRecordsRoundTrip(t *testing.T) {
	l := New(Config{})
	if end, recs, err := l.SnapshotRecords(); err != nil || end != 0 || len(recs) != 0 {
		t.Errorf("empty loader's snapshot: %d, %d records, %v", end, len(recs), err)
	}
	w := newLogWriter(t)
	orders := topic("orders", 1)
	l.HandleCommit([]storage.Batch{w.records(metadataVersion(), orders, partition(orders.TopicID, 0, 1, 2), partition(orders.TopicID, 1, 2, 1)), w.control()})
	snap := snapshotOf(t, l, 1)
	if snap.ID.EndOffset != w.next {
		t.Errorf("snapshot ends at %d, the log at %d", snap.ID.EndOffset, w.next)
	}
	again := New(Config{})
	again.HandleLoadSnapshot(snap)
	if !again.Image().Equal(l.Image()) {
		t.Error("the loaded snapshot's image differs from the one written")
	}
}

// Publishers see images and leader changes in the order they happen, and
// a node hears it leads only after the images before its epoch.
func TestPublishersSeeImagesAndLeadersInOrder(t *testing.T) {
	w := newLogWriter(t)
	a, b := &publisher{}, &publisher{}
	l := New(Config{NodeID: 2, Publishers: []Publisher{a, b}})
	l.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 1, Epoch: 1})
	l.HandleCommit([]storage.Batch{w.control(), w.records(topic("orders", 1))})
	w.epoch = 2
	l.HandleCommit([]storage.Batch{w.control()})
	l.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 2, Epoch: 2})
	want := []string{"leader 1@1", "image@1", "image@2", "leader 2@2"}
	for _, p := range []*publisher{a, b} {
		if !slices.Equal(p.calls, want) {
			t.Errorf("publisher saw %v, want %v", p.calls, want)
		}
	}
	if l.Leader() != (raft.LeaderAndEpoch{LeaderID: 2, Epoch: 2}) {
		t.Errorf("Leader() = %v", l.Leader())
	}
	if m := a.manifests[1]; m.Leader != (raft.LeaderAndEpoch{LeaderID: 1, Epoch: 1}) {
		t.Errorf("manifest leader %v", m.Leader)
	}
}

// A publisher that fails is counted as an apply error; the loader and the
// other publishers go on.
func TestPublisherFailureIsAnApplyError(t *testing.T) {
	w := newLogWriter(t)
	ev := &events{}
	bad, good := &publisher{panicOn: 1}, &publisher{}
	l := New(Config{OnEvent: ev.add, Publishers: []Publisher{bad, good}})
	l.HandleCommit([]storage.Batch{w.records(topic("orders", 1))})
	l.HandleCommit([]storage.Batch{w.records(topic("clicks", 2))})
	if len(good.images) != 2 || len(bad.images) != 2 {
		t.Errorf("publishers saw %d and %d images, want 2 each", len(bad.images), len(good.images))
	}
	if m := l.Metrics(); m.MetadataApplyErrorCount != 1 || m.MetadataLoadErrorCount != 0 {
		t.Errorf("metrics %+v", m)
	}
	if len(ev.of(EventApplyError)) != 1 {
		t.Errorf("apply error events %v", ev.all)
	}
}

// After BeginShutdown the loader publishes nothing more.
func TestShutdownPublishesNothing(t *testing.T) {
	w := newLogWriter(t)
	pub := &publisher{}
	l := New(Config{Publishers: []Publisher{pub}})
	l.BeginShutdown()
	l.HandleCommit([]storage.Batch{w.records(topic("orders", 1))})
	l.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 1, Epoch: 1})
	if len(pub.calls) != 0 || l.Image() != image.Empty {
		t.Errorf("after shutdown: calls %v", pub.calls)
	}
}

// BenchmarkHandleCommit measures applying batches of load-sized
// ConfigRecords: decode, replay, apply and publish.
func BenchmarkHandleCommit(b *testing.B) {
	w := newLogWriter(b)
	recs := make([]record.Record, 100)
	for i := range recs {
		recs[i] = config("load!", "seq", "0000000000000000000000000000000000000000000000000000000000000000000000000000000")
	}
	batches := make([]storage.Batch, 0, b.N)
	for range b.N {
		batches = append(batches, w.records(recs...))
	}
	l := New(Config{Publishers: []Publisher{&publisher{}}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l.HandleCommit(batches[i : i+1])
	}
	b.StopTimer()
	if l.Err() != nil || l.Image().Provenance().LastContainedOffset != w.next-1 {
		b.Fatalf("applied to %v: %v", l.Image().Provenance(), l.Err())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

// PublisherFuncs hands each call to its function, and a nil one ignores it.
func TestPublisherFuncs(t *testing.T) {
	w := newLogWriter(t)
	var imgs []*image.MetadataImage
	var leaders []raft.LeaderAndEpoch
	l := New(Config{Publishers: []Publisher{
		PublisherFuncs{
			Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ Manifest) { imgs = append(imgs, img) },
			Leader: func(le raft.LeaderAndEpoch) { leaders = append(leaders, le) },
		},
		PublisherFuncs{},
	}})
	l.HandleCommit([]storage.Batch{w.records(topic("orders", 1))})
	l.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 3, Epoch: 4})
	if len(imgs) != 1 || imgs[0] != l.Image() || len(leaders) != 1 || leaders[0].LeaderID != 3 {
		t.Errorf("images %d, leaders %v", len(imgs), leaders)
	}
	if n := l.Metrics().MetadataApplyErrorCount; n != 0 {
		t.Errorf("%d apply errors", n)
	}
}
