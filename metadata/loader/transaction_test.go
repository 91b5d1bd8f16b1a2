package loader

import (
	"errors"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

func begin() *record.BeginTransactionRecord { return &record.BeginTransactionRecord{Name: str("test")} }
func end() *record.EndTransactionRecord     { return &record.EndTransactionRecord{} }
func abort() *record.AbortTransactionRecord {
	return &record.AbortTransactionRecord{Reason: str("test")}
}

func has(img *image.MetadataImage, topic string) bool { return img.Topics().TopicByName(topic) != nil }

// A transaction that spans batches and commits is published as one unit:
// what came before its BeginTransactionRecord is published first, nothing
// while it is open, all of it with the batch after its end.
func TestCommittedTransactionIsOneImage(t *testing.T) {
	w := newLogWriter(t)
	pub := &publisher{}
	l := New(Config{Publishers: []Publisher{pub}})
	a, b, c := topic("a", 1), topic("b", 2), topic("c", 3)
	b1 := w.records(metadataVersion(), a)              // 0-1
	b2 := w.records(begin(), b)                        // 2-3
	b3 := w.records(partition(b.TopicID, 0, 1), end()) // 4-5
	b4 := w.records(c)                                 // 6
	l.HandleCommit([]storage.Batch{b1, b2})
	if len(pub.images) != 1 {
		t.Fatalf("%d images after the first commit, want 1 (the one before the transaction)", len(pub.images))
	}
	before := pub.images[0]
	want := image.MetadataProvenance{LastContainedOffset: 1, LastContainedEpoch: 1, LastContainedLogTimeMs: b1.MaxTimestamp, IsOffsetBatchAligned: true}
	if before.Provenance() != want || !has(before, "a") || has(before, "b") {
		t.Errorf("image before the transaction %v, topics a %v b %v", before.Provenance(), has(before, "a"), has(before, "b"))
	}
	if m := pub.manifests[0]; m.Batches != 1 || m.Records != 2 || m.Bytes != int64(b1.Size()) || m.FirstOffset != 0 {
		t.Errorf("manifest %+v", m)
	}
	if l.Image() != before {
		t.Error("an image was published inside the transaction")
	}

	l.HandleCommit([]storage.Batch{b3, b4})
	if len(pub.images) != 2 {
		t.Fatalf("%d images, want 2", len(pub.images))
	}
	img := l.Image()
	if !has(img, "b") || img.Topics().TopicByName("b").Partition(0) == nil || !has(img, "c") || img.Provenance().LastContainedOffset != 6 {
		t.Errorf("after the transaction: %v, b %v c %v", img.Provenance(), has(img, "b"), has(img, "c"))
	}
	if m := pub.manifests[1]; m.Batches != 3 || m.Records != 5 || m.FirstOffset != 2 || m.Bytes != int64(b2.Size()+b3.Size()+b4.Size()) {
		t.Errorf("manifest %+v", m)
	}
	if end, _, _ := l.SnapshotRecords(); end != 7 {
		t.Errorf("snapshot at %d, want 7", end)
	}
}

// A BeginTransactionRecord inside a batch publishes the records before it
// at its offset, not batch-aligned; a snapshot is then still of the last
// image that ends a batch.
func TestTransactionInsideABatch(t *testing.T) {
	w := newLogWriter(t)
	pub := &publisher{}
	l := New(Config{Publishers: []Publisher{pub}})
	b0 := w.records(metadataVersion()) // 0
	l.HandleCommit([]storage.Batch{b0})
	b1 := w.records(topic("a", 1), begin(), topic("b", 2)) // 1-3
	l.HandleCommit([]storage.Batch{b1})
	want := image.MetadataProvenance{LastContainedOffset: 1, LastContainedEpoch: 1, LastContainedLogTimeMs: b1.MaxTimestamp}
	if got := l.Image().Provenance(); got != want || !has(l.Image(), "a") || has(l.Image(), "b") {
		t.Fatalf("image %v, want %v with a and not b", got, want)
	}
	if end, _, _ := l.SnapshotRecords(); end != 1 {
		t.Errorf("snapshot at %d, want 1 (the image of batch 0)", end)
	}
	l.HandleCommit([]storage.Batch{w.records(end())})
	if got := l.Image().Provenance(); got.LastContainedOffset != 4 || !got.IsOffsetBatchAligned || !has(l.Image(), "b") {
		t.Errorf("after the end: %v", got)
	}
	if len(pub.images) != 3 {
		t.Errorf("%d images, want 3", len(pub.images))
	}
}

// An aborted transaction leaves the image as it was before its
// BeginTransactionRecord, whether the abort comes in the same commit or a
// later one; the offset moves past it.
func TestAbortedTransactionIsDiscarded(t *testing.T) {
	t.Run("same commit", func(t *testing.T) {
		w := newLogWriter(t)
		l := New(Config{})
		x := topic("x", 1)
		l.HandleCommit([]storage.Batch{
			w.records(begin(), x), // 0-1
			w.records(partition(x.TopicID, 0, 1), abort(), topic("y", 2)), // 2-4
		})
		img := l.Image()
		if has(img, "x") || !has(img, "y") || img.Provenance().LastContainedOffset != 4 {
			t.Errorf("image %v: x %v y %v", img.Provenance(), has(img, "x"), has(img, "y"))
		}
	})
	t.Run("later commit", func(t *testing.T) {
		w := newLogWriter(t)
		pub := &publisher{}
		l := New(Config{Publishers: []Publisher{pub}})
		l.HandleCommit([]storage.Batch{w.records(metadataVersion(), topic("a", 1))}) // 0-1
		before := l.Image()
		l.HandleCommit([]storage.Batch{w.records(begin(), topic("x", 2))}) // 2-3
		l.HandleCommit([]storage.Batch{w.records(abort())})                // 4
		img := l.Image()
		if img.Provenance().LastContainedOffset != 4 || has(img, "x") || !has(img, "a") {
			t.Fatalf("image %v: x %v", img.Provenance(), has(img, "x"))
		}
		if !img.Topics().Equal(before.Topics()) || !img.Features().Equal(before.Features()) {
			t.Error("the image after the abort differs from the one before the transaction")
		}
		if len(pub.images) != 2 {
			t.Errorf("%d images, want 2", len(pub.images))
		}
		if m := pub.manifests[1]; m.Records != 3 || m.Batches != 2 {
			t.Errorf("manifest after the abort %+v", m)
		}
	})
}

// A marker out of place is a load fault Kafka's broker logs, counts and
// goes past: an End or Abort outside a transaction, a Begin inside one.
func TestMisplacedMarkersAreCountedAndIgnored(t *testing.T) {
	w := newLogWriter(t)
	ev := &events{}
	l := New(Config{OnEvent: ev.add})
	l.HandleCommit([]storage.Batch{
		w.records(end(), topic("a", 1), abort()),   // 0-2
		w.records(begin(), topic("b", 2), begin()), // 3-5: the second Begin is ignored
		w.records(topic("c", 3)),                   // 6: still inside the transaction
	})
	if has(l.Image(), "b") || has(l.Image(), "c") || !has(l.Image(), "a") {
		t.Errorf("published inside a transaction: b %v c %v", has(l.Image(), "b"), has(l.Image(), "c"))
	}
	l.HandleCommit([]storage.Batch{w.records(end())}) // 7
	if !has(l.Image(), "b") || !has(l.Image(), "c") || l.Image().Provenance().LastContainedOffset != 7 {
		t.Errorf("after the end: %v", l.Image().Provenance())
	}
	if m := l.Metrics(); m.MetadataLoadErrorCount != 3 || l.Err() != nil || len(ev.of(EventLoadError)) != 0 {
		t.Errorf("metrics %+v, err %v, events %v", m, l.Err(), ev.of(EventLoadError))
	}
}

// A record that stops the loader inside a transaction publishes nothing
// of the transaction.
func TestErrorInsideATransactionPublishesNoneOfIt(t *testing.T) {
	w := newLogWriter(t)
	ev := &events{}
	l := New(Config{OnEvent: ev.add})
	l.HandleCommit([]storage.Batch{
		w.records(topic("a", 1)), // 0
		w.records(begin(), topic("b", 2), record.NewPartitionChangeRecord(topic("ghost", 9).TopicID, 0)), // 1-3
	})
	if img := l.Image(); !has(img, "a") || has(img, "b") || img.Provenance().LastContainedOffset != 0 {
		t.Errorf("image %v: b %v", img.Provenance(), has(img, "b"))
	}
	if errs := ev.of(EventLoadError); len(errs) != 1 || errs[0].Offset != 3 {
		t.Errorf("load errors %v", errs)
	}
}

// A snapshot never holds a transaction marker: one is a load error. A
// snapshot loaded inside a transaction ends it.
func TestSnapshotsAndTransactions(t *testing.T) {
	t.Run("marker in a snapshot", func(t *testing.T) {
		ev := &events{}
		l := New(Config{OnEvent: ev.add})
		v, _ := record.Encode(begin())
		l.HandleLoadSnapshot(raft.Snapshot{ID: raft.SnapshotID{EndOffset: 5, Epoch: 1}, Records: []storage.Record{{Value: v}}})
		if errs := ev.of(EventLoadError); len(errs) != 1 || errs[0].RecordType != "BeginTransactionRecord" || !errors.Is(errs[0].Err, image.ErrInconsistent) {
			t.Fatalf("load errors %v", errs)
		}
		if l.Image() != image.Empty {
			t.Error("the snapshot was published")
		}
	})
	t.Run("snapshot ends a transaction", func(t *testing.T) {
		w := newLogWriter(t)
		l := New(Config{})
		l.HandleCommit([]storage.Batch{w.records(begin(), topic("x", 1))}) // 0-1
		v, _ := record.Encode(metadataVersion())
		l.HandleLoadSnapshot(raft.Snapshot{ID: raft.SnapshotID{EndOffset: 2, Epoch: 1}, Records: []storage.Record{{Value: v}}})
		l.HandleCommit([]storage.Batch{w.records(topic("y", 2))}) // 2
		if img := l.Image(); !has(img, "y") || has(img, "x") || img.Provenance().LastContainedOffset != 2 {
			t.Errorf("image %v: x %v y %v", img.Provenance(), has(img, "x"), has(img, "y"))
		}
	})
}
