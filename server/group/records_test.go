package group

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func sampleMetadata() *kmsg.GroupMetadataValue {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.ProtocolType, v.Generation, v.Protocol, v.Leader, v.CurrentStateTimestamp = "consumer", 4, kmsg.StringPtr("range"), kmsg.StringPtr("m-1"), 1700000000000
	m := kmsg.NewGroupMetadataValueMember()
	m.MemberID, m.ClientID, m.ClientHost, m.RebalanceTimeoutMillis, m.SessionTimeoutMillis = "m-1", "c", "/127.0.0.1", 60000, 45000
	m.Subscription, m.Assignment = []byte{0, 1}, []byte{2, 3}
	v.Members = []kmsg.GroupMetadataValueMember{m}
	return v
}

// Records written in Kafka's formats decode to what was written; the
// keys begin with the record type (1 for offsets, 2 for groups), and a
// nil value is a tombstone.
func TestRecordsRoundTrip(t *testing.T) {
	tp := TopicPartition{"orders", 3}
	c := &Committed{Offset: 42, LeaderEpoch: 7, Metadata: "m", CommitTimestamp: 1700000000000, ExpireTimestamp: -1}
	rec := OffsetCommitRecord("g", tp, c)
	if rec.Key[0] != 0 || rec.Key[1] != 1 || rec.Value[0] != 0 || rec.Value[1] != offsetCommitValueVersion {
		t.Fatalf("offset commit key %x value %x: want type 1, value version 4", rec.Key[:2], rec.Value[:2])
	}
	got, err := Decode(rec.Key, rec.Value)
	if err != nil || got.Type != OffsetCommitType || got.Group != "g" || got.Partition != tp || *got.Offset != *c {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	tomb, err := Decode(OffsetCommitRecord("g", tp, nil).Key, nil)
	if err != nil || tomb.Offset != nil || tomb.Partition != tp {
		t.Fatalf("tombstone %+v, %v", tomb, err)
	}
	v := sampleMetadata()
	grec := GroupMetadataRecord("g", v)
	if grec.Key[1] != 2 || grec.Value[1] != groupMetadataValueVersion {
		t.Fatalf("group key %x value %x: want type 2, version 3", grec.Key[:2], grec.Value[:2])
	}
	gm, err := Decode(grec.Key, grec.Value)
	if err != nil || gm.Type != GroupMetadataType || gm.Group != "g" || !reflect.DeepEqual(gm.Metadata, v) {
		t.Fatalf("decoded %+v, %v; want %+v", gm.Metadata, err, v)
	}
	if _, err := Decode([]byte{0}, nil); !errors.Is(err, ErrBadRecord) {
		t.Errorf("a one-byte key: %v", err)
	}
	if r, err := Decode([]byte{0, 9, 1, 2}, []byte{9}); err != nil || r.Known() {
		t.Errorf("a record of a newer protocol: %+v, %v; want skipped", r, err)
	}
}

// Whatever bytes a partition holds, decoding them returns a record or an
// error, and a decoded record encodes back to bytes that decode the same.
func FuzzDecode(f *testing.F) {
	rec := OffsetCommitRecord("g", TopicPartition{"t", 1}, &Committed{Offset: 5, LeaderEpoch: -1})
	f.Add(rec.Key, rec.Value)
	grec := GroupMetadataRecord("g", sampleMetadata())
	f.Add(grec.Key, grec.Value)
	f.Add(grec.Key, []byte(nil))
	for _, c := range []storage.Record{
		ConsumerGroupMetadataRecord("g", 3, false),
		ConsumerGroupMemberRecord("g", "m", &MemberSubscription{ClientID: "c", ClientHost: "/h", Topics: []string{"t"}, RebalanceTimeoutMs: 1}),
		ConsumerGroupTargetMemberRecord("g", "m", []TopicPartitions{{TopicID: [16]byte{1}, Partitions: []int32{0}}}, false),
		ConsumerGroupCurrentRecord("g", "m", &MemberAssignment{MemberEpoch: 2, Assigned: []TopicPartitions{{TopicID: [16]byte{1}, Partitions: []int32{1}}}}),
	} {
		f.Add(c.Key, c.Value)
	}
	f.Add([]byte{0, 0, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 0}, []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := Decode(key, value)
		if err != nil || !r.Known() {
			return
		}
		var again Record
		switch {
		case r.Consumer != nil:
			if r.Type == ConsumerGroupPartitionMetadataType {
				return
			}
			enc := r.Consumer.Encode()
			again, err = Decode(enc.Key, enc.Value)
			if err == nil && !reflect.DeepEqual(again.Consumer, r.Consumer) {
				t.Fatalf("%+v re-decoded as %+v", *r.Consumer, *again.Consumer)
			}
		case r.Type != GroupMetadataType:
			enc := OffsetCommitRecord(r.Group, r.Partition, r.Offset)
			again, err = Decode(enc.Key, enc.Value)
			if err == nil && r.Offset != nil && again.Offset != nil {
				// The encoder writes version 4, which has no expire
				// timestamp (version 1's).
				a, b := *again.Offset, *r.Offset
				a.ExpireTimestamp, b.ExpireTimestamp = 0, 0
				if a != b {
					t.Fatalf("offset %+v re-decoded as %+v", *r.Offset, *again.Offset)
				}
			}
		default:
			enc := GroupMetadataRecord(r.Group, r.Metadata)
			again, err = Decode(enc.Key, enc.Value)
		}
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again.Group != r.Group || again.Partition != r.Partition {
			t.Fatalf("%+v re-decoded as %+v", r, again)
		}
	})
}
