package storage

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func sampleVoters() VotersRecordValue {
	return VotersRecordValue{Voters: []VoterRecord{
		{ID: 1, DirectoryID: [16]byte{1, 2, 3}, Endpoints: []Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093}}, MinVersion: 0, MaxVersion: 1},
		{ID: 2, DirectoryID: [16]byte{15: 9}, MaxVersion: 1},
	}}
}

func TestVotersRecordRoundTrip(t *testing.T) {
	want := sampleVoters()
	rec := VotersRecord(want)
	if typ, err := ControlType(rec); err != nil || typ != ControlVoters {
		t.Fatalf("control type %v, %v", typ, err)
	}
	got, err := ParseVoters(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	// The bytes are Kafka's: version, compact array of one voter with its
	// uuid, compact endpoints, feature struct and empty tag sections.
	one := VotersRecord(VotersRecordValue{Voters: []VoterRecord{{ID: 3, MaxVersion: 1}}})
	wantBytes := append([]byte{0, 0, 2, 0, 0, 0, 3}, make([]byte, 16)...)
	wantBytes = append(wantBytes, 1, 0, 0, 0, 1, 0, 0, 0)
	if !bytes.Equal(one.Value, wantBytes) {
		t.Fatalf("encoding:\n got %x\nwant %x", one.Value, wantBytes)
	}
}

func TestKRaftVersionRecordRoundTrip(t *testing.T) {
	rec := KRaftVersionRecord(1)
	if typ, err := ControlType(rec); err != nil || typ != ControlKRaftVersion {
		t.Fatalf("control type %v, %v", typ, err)
	}
	if !bytes.Equal(rec.Value, []byte{0, 0, 0, 1, 0}) {
		t.Fatalf("encoding %x", rec.Value)
	}
	if v, err := ParseKRaftVersion(rec); err != nil || v != 1 {
		t.Fatalf("got %d, %v", v, err)
	}
}

func TestParseControlValuesRefuseBadInput(t *testing.T) {
	good := VotersRecord(sampleVoters()).Value
	for name, v := range map[string][]byte{
		"empty":      nil,
		"truncated":  good[:len(good)-3],
		"garbage":    append(append([]byte(nil), good...), 7),
		"huge array": {0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		if _, err := ParseVoters(Record{Key: controlKey(ControlVoters), Value: v}); !errors.Is(err, ErrControlValue) {
			t.Errorf("VotersRecord %s: err %v, want ErrControlValue", name, err)
		}
	}
	for name, v := range map[string][]byte{"short": {0, 0, 0}, "tags cut": {0, 0, 0, 1, 1}} {
		if _, err := ParseKRaftVersion(Record{Value: v}); !errors.Is(err, ErrControlValue) {
			t.Errorf("KRaftVersionRecord %s: err %v, want ErrControlValue", name, err)
		}
	}
	if _, err := ParseVoters(Record{Value: append([]byte{0, 1}, good[2:]...)}); !errors.Is(err, ErrControlVersion) {
		t.Errorf("VotersRecord version 1: err %v, want ErrControlVersion", err)
	}
	if _, err := ParseKRaftVersion(Record{Value: []byte{0, 2, 0, 1, 0}}); !errors.Is(err, ErrControlVersion) {
		t.Errorf("KRaftVersionRecord version 2: err %v, want ErrControlVersion", err)
	}
}

// FuzzParseVoters feeds arbitrary bytes to the VotersRecord decoder: it
// must never panic, and what it accepts without tagged fields must encode
// back to the same bytes.
func FuzzParseVoters(f *testing.F) {
	f.Add(VotersRecord(sampleVoters()).Value)
	f.Add(VotersRecord(VotersRecordValue{}).Value)
	f.Add(KRaftVersionRecord(1).Value)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseKRaftVersion(Record{Value: data})
		v, err := ParseVoters(Record{Value: data})
		if err != nil {
			return
		}
		again, err := ParseVoters(VotersRecord(v))
		if err != nil {
			t.Fatalf("re-encoded %+v does not parse: %v", v, err)
		}
		if len(again.Voters) != len(v.Voters) {
			t.Fatalf("re-encoded %+v parses as %+v", v, again)
		}
	})
}
