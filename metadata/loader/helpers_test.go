package loader

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

func str(s string) *string { return &s }

// logWriter builds consecutive batches of a metadata log.
type logWriter struct {
	t     testing.TB
	next  int64
	epoch int32
	ts    int64
}

func newLogWriter(t testing.TB) *logWriter { return &logWriter{t: t, epoch: 1, ts: 1_700_000_000_000} }

// values makes a data batch of raw record values.
func (w *logWriter) values(vals ...[]byte) storage.Batch {
	w.t.Helper()
	recs := make([]storage.Record, len(vals))
	for i, v := range vals {
		recs[i] = storage.Record{Value: v}
	}
	return w.batch(false, recs)
}

// records makes a data batch of framed metadata records.
func (w *logWriter) records(rs ...record.Record) storage.Batch {
	w.t.Helper()
	vals := make([][]byte, len(rs))
	for i, r := range rs {
		v, err := record.Encode(r)
		if err != nil {
			w.t.Fatal(err)
		}
		vals[i] = v
	}
	return w.values(vals...)
}

// control makes a LeaderChange control batch.
func (w *logWriter) control() storage.Batch {
	w.t.Helper()
	return w.batch(true, []storage.Record{storage.LeaderChangeRecord(1, []int32{1, 2, 3}, []int32{1, 2})})
}

func (w *logWriter) batch(control bool, recs []storage.Record) storage.Batch {
	w.t.Helper()
	w.ts++
	raw := storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: w.next, LeaderEpoch: w.epoch, Control: control, Timestamp: w.ts}, recs)
	b, err := storage.DecodeBatch(raw)
	if err != nil {
		w.t.Fatal(err)
	}
	w.next = b.NextOffset()
	return b
}

func topic(name string, n uint64) *record.TopicRecord {
	return &record.TopicRecord{Name: name, TopicID: record.NewUuid(n, n*7919+1)}
}

func partition(topic record.Uuid, p int32, replicas ...int32) *record.PartitionRecord {
	return &record.PartitionRecord{
		Version: record.PartitionVersion, PartitionID: p, TopicID: topic,
		Replicas: replicas, Isr: replicas, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
		Leader: replicas[0], Directories: make([]record.Uuid, len(replicas)),
	}
}

func config(resource, key, value string) *record.ConfigRecord {
	return &record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: resource, Name: key, Value: str(value)}
}

func metadataVersion() *record.FeatureLevelRecord {
	return &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2}
}

// publisher keeps what it was told, in order.
type publisher struct {
	mu        sync.Mutex
	calls     []string
	images    []*image.MetadataImage
	manifests []Manifest
	panicOn   int // panic on this update (1-based), 0 never
}

func (p *publisher) OnMetadataUpdate(delta *image.MetadataDelta, img *image.MetadataImage, m Manifest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if delta.Image() == nil || img == nil {
		panic("nil delta image or image")
	}
	p.calls = append(p.calls, fmt.Sprintf("image@%d", img.Provenance().LastContainedOffset))
	p.images = append(p.images, img)
	p.manifests = append(p.manifests, m)
	if len(p.images) == p.panicOn {
		panic("publisher failure under test")
	}
}

func (p *publisher) OnLeaderChange(l raft.LeaderAndEpoch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf("leader %d@%d", l.LeaderID, l.Epoch))
}

// events collects a loader's events.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) of(k EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// snapshotOf turns a loader's SnapshotRecords into what raft hands a
// loader that loads it.
func snapshotOf(t testing.TB, l *Loader, epoch int32) raft.Snapshot {
	t.Helper()
	end, vals, err := l.SnapshotRecords()
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]storage.Record, len(vals))
	for i, v := range vals {
		recs[i] = storage.Record{Offset: int64(i), Value: v}
	}
	return raft.Snapshot{
		ID:                        raft.SnapshotID{EndOffset: end, Epoch: epoch},
		LastContainedLogTimestamp: l.Image().Provenance().LastContainedLogTimeMs,
		Records:                   recs,
	}
}
