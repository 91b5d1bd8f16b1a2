package record

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

func TestControlRoundTrip(t *testing.T) {
	for _, c := range []Control{
		&LeaderChange{LeaderID: 2, Voters: []int32{1, 2, 3}, GrantingVoters: []int32{2, 3}},
		&SnapshotHeader{LastContainedLogTimestamp: 1_700_000_000_000},
		&SnapshotFooter{},
		&KRaftVersion{KRaftVersion: 1},
		&Voters{Voters: []storage.VoterRecord{
			{ID: 1, DirectoryID: [16]byte{7}, Endpoints: []storage.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093}}, MaxVersion: 1},
			{ID: 2, MaxVersion: 1},
		}},
	} {
		got, err := DecodeControl(c.Record())
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("got %+v, want %+v", got, c)
		}
	}
}

func TestDecodeControlRefuses(t *testing.T) {
	header := storage.SnapshotHeaderRecord(5)
	cut := header
	cut.Value = header.Value[:len(header.Value)-2]
	long := header
	long.Value = append(append([]byte{}, header.Value...), 0)
	v1 := storage.SnapshotFooterRecord()
	v1.Value = []byte{0, 1, 0}
	abort := storage.SnapshotFooterRecord()
	abort.Key = []byte{0, 0, 0, 0} // version 0, type 0: a transaction abort marker
	for name, c := range map[string]struct {
		rec  storage.Record
		want error
	}{
		"cut header":        {cut, ErrMalformed},
		"garbage after":     {long, ErrMalformed},
		"footer version 1":  {v1, ErrUnknown},
		"abort marker":      {abort, ErrUnknown},
		"no key":            {storage.Record{}, ErrMalformed},
		"bad leader change": {storage.Record{Key: storage.LeaderChangeRecord(1, nil, nil).Key, Value: []byte{0}}, ErrMalformed},
		"cut voters":        {storage.Record{Key: storage.VotersRecord(storage.VotersRecordValue{}).Key, Value: []byte{0, 0}}, ErrMalformed},
		"voters version 1":  {storage.Record{Key: storage.VotersRecord(storage.VotersRecordValue{}).Key, Value: []byte{0, 1, 1, 0}}, ErrUnknown},
		"kraft.version v1":  {storage.Record{Key: storage.KRaftVersionRecord(1).Key, Value: []byte{0, 1, 0, 1, 0}}, ErrUnknown},
	} {
		if _, err := DecodeControl(c.rec); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
}
