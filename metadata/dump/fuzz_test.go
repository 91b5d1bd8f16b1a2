package dump

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

// FuzzRead: no bytes make Read, WriteText or the JSON form panic, and
// every byte is either in a batch or counted as invalid.
func FuzzRead(f *testing.F) {
	f.Add(smallLog(f))
	f.Add(smallSnapshot(f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := Read(raw)
		n := d.InvalidBytes
		for _, b := range d.Batches {
			n += b.Size
		}
		if n != len(raw) {
			t.Fatalf("%d bytes accounted for of %d", n, len(raw))
		}
		if err := d.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzRecordValue puts arbitrary keys and values in valid batches (CRC and
// all), so the fuzzer reaches the record and control decoders.
func FuzzRecordValue(f *testing.F) {
	for _, raw := range [][]byte{smallLog(f), smallSnapshot(f)} {
		storage.Batches(raw, func(_ int, b *storage.Batch) error {
			recs, _ := b.Records()
			for _, r := range recs {
				f.Add(b.IsControl(), r.Key, r.Value)
			}
			return nil
		})
	}
	f.Fuzz(func(t *testing.T, control bool, key, value []byte) {
		raw := storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: 7, LeaderEpoch: 1, Control: control, Timestamp: t0},
			[]storage.Record{{Key: key, Value: value}})
		d := Read(raw)
		if len(d.Batches) != 1 || len(d.Batches[0].Records) != 1 {
			t.Fatalf("one record in, %+v out", d)
		}
		r := d.Batches[0].Records[0]
		if (r.Error == "") == (r.Data == nil) && r.Control == "" {
			t.Fatalf("record with neither data nor error: %+v", r)
		}
		if r.Data != nil && !json.Valid(r.Data) {
			t.Fatalf("invalid JSON %s", r.Data)
		}
		if err := d.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
