package storage

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBatchRoundTrip(t *testing.T) {
	recs := []Record{
		{Key: []byte("k1"), Value: []byte("v1")},
		{Key: nil, Value: bytes.Repeat([]byte("x"), 300), Headers: []kmsg.Header{{Key: "h", Value: []byte("hv")}}},
		{Value: nil},
	}
	raw := AppendBatch(nil, BatchSpec{BaseOffset: 42, LeaderEpoch: 7, Timestamp: 1700000000000}, recs)
	b, err := DecodeBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.FirstOffset != 42 || b.LastOffset() != 44 || b.PartitionLeaderEpoch != 7 || b.IsControl() || b.Size() != len(raw) {
		t.Fatalf("header: %+v", b.RecordBatch)
	}
	got, err := b.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Offset != 42 || got[2].Offset != 44 || string(got[0].Key) != "k1" ||
		got[1].Key != nil || len(got[1].Value) != 300 || got[1].Headers[0].Key != "h" || got[2].Value != nil ||
		got[1].Timestamp != 1700000000000 {
		t.Fatalf("records: %+v", got)
	}
}

// TestBatchMatchesKmsg checks our encoding against franz-go's own record
// reader, which no one here wrote.
func TestBatchMatchesKmsg(t *testing.T) {
	raw := AppendBatch(nil, BatchSpec{BaseOffset: 5, LeaderEpoch: 1, Timestamp: 99},
		[]Record{{Key: []byte("a"), Value: []byte("b")}, {Value: []byte("c")}})
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	if int(rb.Length)+12 != len(raw) || rb.NumRecords != 2 {
		t.Fatalf("kmsg header: %+v", rb)
	}
	var r kmsg.Record
	if err := r.ReadFrom(rb.Records); err != nil {
		t.Fatal(err)
	}
	if string(r.Key) != "a" || string(r.Value) != "b" {
		t.Fatalf("kmsg record: %+v", r)
	}
}

func TestBatchDamage(t *testing.T) {
	raw := AppendBatch(nil, BatchSpec{BaseOffset: 0, LeaderEpoch: 1}, []Record{{Value: []byte("hello")}})
	if _, err := DecodeBatch(raw[:len(raw)-1]); !errors.Is(err, ErrShortBatch) {
		t.Fatalf("torn: %v", err)
	}
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-2] ^= 0x40
	if _, err := DecodeBatch(flipped); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("flipped: %v", err)
	}
}

func TestControlRecords(t *testing.T) {
	lc := LeaderChangeRecord(2, []int32{1, 2, 3}, []int32{2, 3})
	raw := AppendBatch(nil, BatchSpec{BaseOffset: 10, LeaderEpoch: 4, Control: true},
		[]Record{lc, SnapshotHeaderRecord(123), SnapshotFooterRecord()})
	b, err := DecodeBatch(raw)
	if err != nil || !b.IsControl() {
		t.Fatalf("decode: %v control=%v", err, b.IsControl())
	}
	recs, err := b.Records()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []kmsg.ControlRecordKeyType{ControlLeaderChange, ControlSnapshotHeader, ControlSnapshotFooter} {
		if got, err := ControlType(recs[i]); err != nil || got != want {
			t.Fatalf("record %d: type %v err %v", i, got, err)
		}
	}
	m, err := ParseLeaderChange(recs[0])
	if err != nil || m.LeaderID != 2 || len(m.Voters) != 3 || len(m.GrantingVoters) != 2 {
		t.Fatalf("leader change: %+v %v", m, err)
	}
}
