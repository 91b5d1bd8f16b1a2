package pushrpc

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// samples are one filled-in value of each message, for round trips and
// the fuzz corpus.
func samples() []interface {
	Key() int16
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
} {
	cluster := "cluster"
	return []interface {
		Key() int16
		AppendTo([]byte) []byte
		ReadFrom([]byte) error
	}{
		&AppendEntriesRequest{ClusterID: &cluster, LeaderID: 1, LeaderEpoch: 7, BaseOffset: 42, PrevEpoch: 6, HighWatermark: 40, Records: []byte("batches")},
		&AppendEntriesRequest{LeaderID: 2, LeaderEpoch: 1, HighWatermark: -1},
		&AppendEntriesResponse{LeaderID: 1, LeaderEpoch: 7, Success: true, MatchOffset: 50, DivergingEpoch: EpochEndOffset{-1, -1}, LogEndOffset: 50},
		&AppendEntriesResponse{ErrorCode: 74, LeaderID: 3, LeaderEpoch: 9, MatchOffset: -1, DivergingEpoch: EpochEndOffset{4, 17}, LogEndOffset: 30},
		&InstallSnapshotRequest{ClusterID: &cluster, LeaderID: 1, LeaderEpoch: 3, SnapshotID: EpochEndOffset{2, 100}, Size: 9000, Position: 4096, Bytes: []byte("chunk")},
		&InstallSnapshotResponse{LeaderID: 1, LeaderEpoch: 3, Position: 8192},
		&ObserveQuorumRequest{ClusterID: &cluster, ReplicaID: 101, LogEndOffset: 12, LastEpoch: 2},
		&ObserveQuorumResponse{ErrorCode: 6, LeaderID: 2, LeaderEpoch: 5},
	}
}

// fresh returns an empty message of the same type as m.
func fresh(m interface{ Key() int16 }) interface {
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
} {
	if _, ok := m.(kmsg.Request); ok {
		return RequestForKey(m.Key())
	}
	return ResponseForKey(m.Key())
}

func TestRoundTrip(t *testing.T) {
	for _, m := range samples() {
		b := m.AppendTo(nil)
		got := fresh(m)
		if err := got.ReadFrom(b); err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%T: round trip gave %+v, want %+v", m, got, m)
		}
	}
}

// Every message is a kmsg.Request or kmsg.Response of a private key, at
// version 0, flexible, and pairs with its counterpart.
func TestKafkaShape(t *testing.T) {
	for _, key := range []int16{AppendEntriesKey, InstallSnapshotKey, ObserveQuorumKey} {
		req, resp := RequestForKey(key), ResponseForKey(key)
		if req == nil || resp == nil || req.Key() != key || resp.Key() != key || req.ResponseKind().Key() != key || resp.RequestKind().Key() != key {
			t.Fatalf("key %d: request %T, response %T", key, req, resp)
		}
		if kmsg.RequestForKey(key) != nil {
			t.Errorf("key %d is one of Kafka's", key)
		}
		if req.MaxVersion() != 0 || !req.IsFlexible() || !resp.IsFlexible() || !IsKey(key) || NameForKey(key) == "Unknown" {
			t.Errorf("key %d: max version %d, flexible %v", key, req.MaxVersion(), req.IsFlexible())
		}
	}
	if IsKey(kmsg.Fetch.Int16()) || NameForKey(kmsg.Vote.Int16()) != "Vote" {
		t.Error("Kafka's keys are not push keys")
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, m := range samples() {
		b := m.AppendTo(nil)
		for cut := range len(b) {
			if err := fresh(m).ReadFrom(b[:cut]); err == nil {
				t.Errorf("%T cut at %d of %d bytes: no error", m, cut, len(b))
			}
		}
		if err := fresh(m).ReadFrom(append(b, 0)); err == nil {
			t.Errorf("%T with a trailing byte: no error", m)
		}
	}
	r := new(AppendEntriesRequest)
	r.SetVersion(1)
	if err := r.ReadFrom((&AppendEntriesRequest{}).AppendTo(nil)); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("version 1: %v", err)
	}
}

// Unknown tagged fields are skipped, as Kafka skips them.
func TestUnknownTagsSkipped(t *testing.T) {
	m := &ObserveQuorumResponse{LeaderID: 1, LeaderEpoch: 2}
	b := m.AppendTo(nil)
	b = b[:len(b)-1]             // the empty tag section
	b = kbin.AppendUvarint(b, 2) // two fields: tag 5 of two bytes, tag 9 empty
	b = kbin.AppendUvarint(b, 5)
	b = kbin.AppendUvarint(b, 2)
	b = append(b, 'a', 'b')
	b = kbin.AppendUvarint(b, 9)
	b = kbin.AppendUvarint(b, 0)
	var got ObserveQuorumResponse
	if err := got.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if got.LeaderID != 1 || got.LeaderEpoch != 2 {
		t.Fatalf("got %+v", got)
	}
}

// A frame that claims more than it holds fails without allocating what it
// claims: the decoder allocates at most the frame's length.
func TestDecodeAllocatesWithinFrame(t *testing.T) {
	var huge []byte
	huge = kbin.AppendUvarint(huge, 1<<31) // cluster id of 2 GiB
	huge = append(huge, make([]byte, 64)...)
	many := kbin.AppendCompactNullableString(nil, nil)
	many = append(many, make([]byte, 28)...)
	many = kbin.AppendUvarint(many, 1<<31) // records of 2 GiB
	tags := (&ObserveQuorumResponse{}).AppendTo(nil)
	tags = kbin.AppendUvarint(tags[:len(tags)-1], 1<<31) // 2^31 tagged fields
	for _, frame := range [][]byte{huge, many, tags} {
		for _, key := range []int16{AppendEntriesKey, InstallSnapshotKey, ObserveQuorumKey} {
			for _, m := range []interface{ ReadFrom([]byte) error }{RequestForKey(key), ResponseForKey(key)} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := m.ReadFrom(frame)
				runtime.ReadMemStats(&after)
				if err == nil {
					t.Errorf("%T read %d bytes claiming 2 GiB without error", m, len(frame))
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 4096 {
					t.Errorf("%T allocated %d bytes decoding a %d-byte frame", m, grew, len(frame))
				}
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range samples() {
		f.Add(m.Key(), isRequest(m), m.AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, key int16, request bool, data []byte) {
		var m interface {
			AppendTo([]byte) []byte
			ReadFrom([]byte) error
		}
		if request {
			m = RequestForKey(key)
		} else {
			m = ResponseForKey(key)
		}
		if m == nil {
			return
		}
		if err := m.ReadFrom(data); err != nil {
			return
		}
		// What decodes re-encodes to a frame that decodes the same.
		again := m.AppendTo(nil)
		m2 := fresh(m.(interface{ Key() int16 }))
		if err := m2.ReadFrom(again); err != nil {
			t.Fatalf("re-encoded %T does not decode: %v", m, err)
		}
		if !bytes.Equal(m2.AppendTo(nil), again) {
			t.Fatalf("%T: encoding is not stable", m)
		}
	})
}

func isRequest(m any) bool { _, ok := m.(kmsg.Request); return ok }
