package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

func testImage(t testing.TB) *image.MetadataImage {
	t.Helper()
	d := image.NewMetadataDelta(image.Empty)
	id := record.NewUuid(1, 2)
	for _, r := range []record.Record{
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		&record.RegisterBrokerRecord{Version: record.RegisterBrokerVersion, BrokerID: 101, BrokerEpoch: 5, Fenced: true},
		&record.TopicRecord{Name: "orders", TopicID: id},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: id, Replicas: []int32{101}, Isr: []int32{101}, Leader: 101},
	} {
		if err := d.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply(image.MetadataProvenance{LastContainedOffset: 3, IsOffsetBatchAligned: true})
}

// A directory lists its children, a file prints its text, and a path that
// is not there names its missing part and what the parent holds.
func TestBrowseFindsDirectoriesFilesAndTheMissingPart(t *testing.T) {
	img := testImage(t)
	e, err := browse(1, img, "image/topics/byName/")
	if err != nil || !e.Directory || e.Path != "/image/topics/byName" || strings.Join(e.Children, ",") != "orders" || e.Offset != 3 {
		t.Errorf("browse byName: %+v %v", e, err)
	}
	e, err = browse(1, img, "/image/topics/byName/orders/0")
	if err != nil || e.Directory || !strings.HasPrefix(e.Text, "PartitionRegistration(replicas=[101]") {
		t.Errorf("browse a partition: %+v %v", e, err)
	}
	for at, want := range map[string]string{
		"/image/topics/byName/nope/0":              "/image/topics/byName has no nope; it holds: orders",
		"/image/cluster/controllers/1":             "/image/cluster/controllers has no 1, and is empty",
		"/image/provenance/x":                      "/image/provenance is a file",
		"/" + strings.Repeat("a", MaxMetadataPath): "at most",
	} {
		_, err := browse(1, img, at)
		if !errors.Is(err, ErrBadAction) || !strings.Contains(err.Error(), want) {
			t.Errorf("browse %.40s: %v, want %q", at, err, want)
		}
	}
}

func batchAt(t *testing.T, base int64, n int) []byte {
	t.Helper()
	recs := make([]storage.Record, n)
	for i := range recs {
		v, err := record.Encode(&record.NoOpRecord{})
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = storage.Record{Offset: base + int64(i), Value: v}
	}
	return storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: base, LeaderEpoch: 1}, recs)
}

// Only batches wholly below the high watermark count as committed.
func TestSplitCommittedKeepsBatchesBelowTheHighWatermark(t *testing.T) {
	var raw []byte
	raw = append(raw, batchAt(t, 0, 2)...) // 0-1
	raw = append(raw, batchAt(t, 2, 3)...) // 2-4
	raw = append(raw, batchAt(t, 5, 1)...) // 5
	for _, tc := range []struct {
		hwm     int64
		batches int
		next    int64
		rest    int
		whole   bool
	}{
		{hwm: 6, batches: 3, next: 6, whole: true},
		{hwm: 5, batches: 2, next: 5, rest: 1},
		{hwm: 4, batches: 1, next: 2, rest: 2}, // the high watermark inside 2-4: that batch is not committed yet
		{hwm: 0, batches: 0, next: -1, rest: 3},
	} {
		committed, next, rest := splitCommitted(raw, tc.hwm)
		var n int
		storage.Batches(committed, func(int, *storage.Batch) error { n++; return nil })
		if n != tc.batches || next != tc.next || rest != tc.rest || tc.whole && len(committed) != len(raw) {
			t.Errorf("hwm %d: %d batches, next %d, rest %d; want %d, %d, %d", tc.hwm, n, next, rest, tc.batches, tc.next, tc.rest)
		}
	}
	// Bytes that are not a batch end the committed part without a panic.
	committed, next, _ := splitCommitted(append(batchAt(t, 0, 1), 1, 2, 3), 10)
	if next != 1 || len(committed) != len(batchAt(t, 0, 1)) {
		t.Errorf("trailing garbage: next %d, %d bytes", next, len(committed))
	}
}

func TestValidateMetadataLog(t *testing.T) {
	for _, tc := range []struct {
		from int64
		max  int
		ok   bool
	}{{0, 0, true}, {5, MaxMetadataLogBytes, true}, {-1, 0, false}, {0, -1, false}, {0, MaxMetadataLogBytes + 1, false}} {
		if err := ValidateMetadataLog(tc.from, tc.max); (err == nil) != tc.ok {
			t.Errorf("ValidateMetadataLog(%d, %d) = %v", tc.from, tc.max, err)
		}
	}
}

// No path a user types panics the browse; it finds an entry or says what
// is missing.
func FuzzBrowse(f *testing.F) {
	for _, s := range []string{"", "/", "..", "/image/../..", "image//topics/./byName", "/image/topics/byName/orders/0/x", "/\x00", "/image/configs/TOPIC:orders"} {
		f.Add(s)
	}
	img := testImage(f)
	f.Fuzz(func(t *testing.T, at string) {
		e, err := browse(1, img, at)
		if err != nil {
			if !errors.Is(err, ErrBadAction) {
				t.Fatalf("browse %q: %v is not ErrBadAction", at, err)
			}
			return
		}
		if e.Directory == (e.Text != "") {
			t.Fatalf("browse %q: directory %v with text %q", at, e.Directory, e.Text)
		}
	})
}
