package partition

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
		res, err := p.Read(FetchParams{ReplicaID: -1, FetchOffset: info.FirstOffset, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, MaxBytes: 1, Isolation: IsolationLogEnd})
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("an appended batch does not read back: %v", err)
		}
	})
}
