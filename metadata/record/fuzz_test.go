package record

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

// FuzzDecode: no input panics or over-allocates, and whatever decodes
// encodes back to bytes that decode to the same record.
func FuzzDecode(f *testing.F) {
	for _, r := range samples() {
		b, _ := Encode(r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(r)
		if err != nil {
			t.Fatalf("%s decoded from %x does not encode: %v", Name(r), b, err)
		}
		r2, err := Decode(again)
		if err != nil {
			t.Fatalf("%s re-encoded as %x does not decode: %v", Name(r), again, err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("%s changed through a round trip:\n%+v\n%+v", Name(r), r, r2)
		}
		if len(again) > len(b) && !bytes.Equal(again, b) {
			// Canonical bytes are never longer: unknown tags are dropped,
			// minimal varints used.
			t.Fatalf("%s re-encoded longer: %x from %x", Name(r), again, b)
		}
	})
}

// FuzzDecodeControl: control records' keys and values never panic, and
// what decodes round-trips.
func FuzzDecodeControl(f *testing.F) {
	for _, c := range []storage.Record{
		storage.LeaderChangeRecord(1, []int32{1, 2, 3}, []int32{1}),
		storage.SnapshotHeaderRecord(42),
		storage.SnapshotFooterRecord(),
		storage.KRaftVersionRecord(1),
		storage.VotersRecord(storage.VotersRecordValue{Voters: []storage.VoterRecord{{ID: 1, Endpoints: []storage.Endpoint{{Name: "C", Host: "h", Port: 1}}, MaxVersion: 1}}}),
	} {
		f.Add(c.Key, c.Value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c, err := DecodeControl(storage.Record{Key: key, Value: value})
		if err != nil {
			return
		}
		c2, err := DecodeControl(c.Record())
		if err != nil {
			t.Fatalf("%+v re-encoded does not decode: %v", c, err)
		}
		if lc, ok := c.(*LeaderChange); ok {
			lc.Version = 0 // storage writes version 0
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed %+v to %+v", c, c2)
		}
	})
}
