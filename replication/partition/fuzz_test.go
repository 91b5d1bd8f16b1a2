package partition

import (
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// recrc recomputes a batch's CRC after a test edited its header.
func recrc(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// Producer batches are checked as Kafka's validator checks them.
func TestAppendAsLeaderRefusesBadBatches(t *testing.T) {
	good := producerBatch(2, "g", 0)
	edit := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name  string
		batch []byte
		want  *kerr.Error
	}{
		{"empty", nil, kerr.CorruptMessage},
		{"torn", good[:len(good)-1], kerr.CorruptMessage},
		{"two batches", append(append([]byte(nil), good...), good...), kerr.InvalidRecord},
		{"bad crc", edit(func(b []byte) { b[len(b)-1] ^= 1 }), kerr.CorruptMessage},
		{"magic 1", edit(func(b []byte) { b[16] = 1 }), kerr.InvalidRecord},
		{"control", recrc(edit(func(b []byte) { b[22] |= 1 << 5 })), kerr.InvalidRecord},
		{"count mismatch", recrc(edit(func(b []byte) { binary.BigEndian.PutUint32(b[57:], 3) })), kerr.InvalidRecord},
		{"offset gap", recrc(edit(func(b []byte) { binary.BigEndian.PutUint32(b[23:], 1<<30) })), kerr.InvalidRecord},
		{"producer without sequence", recrc(edit(func(b []byte) { binary.BigEndian.PutUint64(b[43:], 7) })), kerr.InvalidRecord},
	}
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	for _, c := range cases {
		_, err := p.AppendAsLeader(c.batch, 1, t0)
		if ErrorCode(err) != c.want.Code {
			t.Errorf("%s: %v, want %s", c.name, err, c.want.Message)
		}
	}
	if p.LogEndOffset() != 0 {
		t.Fatalf("refused batches reached the log: end %d", p.LogEndOffset())
	}
	if _, err := p.AppendAsLeader(good, 1, t0); err != nil {
		t.Fatalf("the good batch: %v", err)
	}
}

// Whatever a producer sends, the leader neither panics nor stores a batch
// that would not read back.
func FuzzAppendAsLeader(f *testing.F) {
	f.Add(producerBatch(1, "a", 0))
	f.Add(producerBatch(3, "b", 5))
	f.Add([]byte{})
	f.Add(make([]byte, 61))
	f.Add(idemBatch(5, 0, 0, 2, "i"))
	f.Add(idemBatch(5, 0, 2, 1, "j"))
	f.Add(idemBatch(5, 1, 0, 1, "k"))
	f.Add(setProducer(producerBatch(1, "t", 0), 6, 0, 0, true))
	dir := f.TempDir()
	p := open(f, dir, 1, 1)
	leader(f, p, []int32{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		before := p.LogEndOffset()
		info, err := p.AppendAsLeader(b, -1, t0)
		if err != nil {
			if p.LogEndOffset() != before {
				t.Fatalf("a refused batch moved the log end from %d to %d", before, p.LogEndOffset())
			}
			return
		}
		if info.Duplicate && p.LogEndOffset() != before {
			t.Fatalf("a duplicate moved the log end from %d to %d", before, p.LogEndOffset())
		}
		res, err := p.Read(FetchParams{ReplicaID: -1, FetchOffset: info.FirstOffset, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, MaxBytes: 1, Isolation: IsolationLogEnd})
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("an appended batch does not read back: %v", err)
		}
		// The state kept while appending is the state the log gives back.
		again := newProducerStateManager()
		if err := again.rebuild(p.log); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.producers, p.producers.producers) {
			t.Fatalf("producer state %v, but the log rebuilds %v", p.Producers(), again.producers)
		}
	})
}

// Whatever a fetch names, the leader answers with an error or whole
// batches it may serve, and its state stays sound.
func FuzzFetch(f *testing.F) {
	f.Add(int32(2), int64(0), int32(-1), int32(-1), int32(1<<20), uint8(0))
	f.Add(int32(-1), int64(3), int32(1), int32(1), int32(0), uint8(1))
	f.Add(int32(2), int64(9), int32(1), int32(7), int32(-5), uint8(2))
	f.Add(int32(3), int64(-1), int32(2), int32(0), int32(1), uint8(9))
	p := open(f, f.TempDir(), 1, 1)
	leader(f, p, []int32{1, 2, 3})
	mustAppend(f, p, 3)
	mustAppend(f, p, 3)
	fetch(f, p, 2, 3, t0)
	fetch(f, p, 3, 3, t0)
	f.Fuzz(func(t *testing.T, replica int32, offset int64, current, last, maxBytes int32, iso uint8) {
		hwm := p.HighWatermark()
		res, err := p.Read(FetchParams{ReplicaID: replica, FetchOffset: offset, CurrentLeaderEpoch: current, LastFetchedEpoch: last, MaxBytes: int(maxBytes), Isolation: Isolation(iso)})
		if err == nil && res.DivergingEpoch == nil {
			limit := res.LogEndOffset
			if replica < 0 {
				limit = res.HighWatermark
			}
			if len(res.Records) > 0 && nextOffset(t, res.Records) > limit {
				t.Fatalf("read past %d", limit)
			}
			countRecords(t, res.Records)
		}
		if _, err := p.UpdateFollowerFetch(replica, -1, offset, t0); err == nil && (offset < 0 || offset > p.LogEndOffset()) {
			t.Fatalf("fetch offset %d accepted", offset)
		}
		if p.HighWatermark() < hwm || p.HighWatermark() > p.LogEndOffset() {
			t.Fatalf("high watermark %d after %d (log end %d)", p.HighWatermark(), hwm, p.LogEndOffset())
		}
	})
}
