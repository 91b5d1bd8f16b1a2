package loader

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// FuzzLoader feeds arbitrary bytes to a loader that holds a small image:
// as a whole batch, as a record value inside a valid batch, and as a
// snapshot record. It never panics, and either applies (the image moves
// past the input), waits inside a metadata transaction the input opened,
// or stops with a load error that it counts.
func FuzzLoader(f *testing.F) {
	w := newLogWriter(f)
	orders := topic("orders", 1)
	for _, r := range []record.Record{orders, partition(orders.TopicID, 1, 1, 2), config("orders", "k", "v"), &record.NoOpRecord{}, record.NewPartitionChangeRecord(orders.TopicID, 0),
		begin(), end(), abort(), &record.RegisterControllerRecord{ControllerID: 1, EndPoints: []record.ControllerEndpoint{{Name: "C", Host: "h", Port: 1}}}} {
		v, err := record.Encode(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	f.Add(w.records(topic("clicks", 2)).Raw)
	f.Add(w.control().Raw)
	f.Add(w.records(begin(), topic("t", 3), end()).Raw)
	f.Add([]byte{1, 2, 0, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		prefix := func() (*Loader, *logWriter) {
			w := newLogWriter(t)
			l := New(Config{})
			orders := topic("orders", 1)
			l.HandleCommit([]storage.Batch{w.records(orders, partition(orders.TopicID, 0, 1, 2))})
			return l, w
		}
		check := func(what string, l *Loader, want int64) {
			m := l.Metrics()
			applied := l.Image().Provenance().LastContainedOffset >= want
			stopped, waiting := l.Err() != nil, l.pending.inTransaction
			ok := applied && !stopped && !waiting || waiting && !applied && !stopped || stopped && !applied && m.MetadataLoadErrorCount >= 1
			if !ok {
				t.Fatalf("%s: applied %v, in a transaction %v, err %v, load errors %d", what, applied, waiting, l.Err(), m.MetadataLoadErrorCount)
			}
		}

		// As a record value.
		l, w := prefix()
		b := w.values(data)
		l.HandleCommit([]storage.Batch{b})
		check("record", l, b.LastOffset())

		// As a whole batch following the log.
		if b, err := storage.DecodeBatch(data); err == nil && b.FirstOffset == 1 {
			l, _ := prefix()
			l.HandleCommit([]storage.Batch{b})
			check("batch", l, b.LastOffset())
		}

		// As a snapshot's one record.
		l, _ = prefix()
		l.HandleLoadSnapshot(raft.Snapshot{ID: raft.SnapshotID{EndOffset: 10, Epoch: 1}, Records: []storage.Record{{Value: data}}})
		check("snapshot", l, 9)
	})
}
