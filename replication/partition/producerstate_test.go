package partition

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// idemBatch is producerBatch from an idempotent producer: n records from
// sequence seq of producer pid in epoch epoch, CRC recomputed.
func idemBatch(pid int64, epoch int16, seq int32, n int, tag string) []byte {
	raw := producerBatch(n, tag, t0.UnixMilli())
	return setProducer(raw, pid, epoch, seq, false)
}

func setProducer(raw []byte, pid int64, epoch int16, seq int32, transactional bool) []byte {
	binary.BigEndian.PutUint64(raw[producerIDOffset:], uint64(pid))
	binary.BigEndian.PutUint16(raw[producerEpochOffset:], uint16(epoch))
	binary.BigEndian.PutUint32(raw[baseSequenceOffset:], uint32(seq))
	if transactional {
		a := binary.BigEndian.Uint16(raw[attributesOffset:])
		binary.BigEndian.PutUint16(raw[attributesOffset:], a|attrTransactional)
	}
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[attributesOffset:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func appendIdem(t testing.TB, p *Partition, raw []byte) (AppendInfo, error) {
	t.Helper()
	return p.AppendAsLeader(raw, -1, t0)
}

// TestRetriedBatchIsNotAppendedTwice: a retry of any of a producer's last
// five batches answers with the original's offsets and appends nothing;
// the sixth-last is forgotten, so its retry is out of order.
func TestRetriedBatchIsNotAppendedTwice(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	var orig []AppendInfo
	for i := range 6 {
		info, err := appendIdem(t, p, idemBatch(7, 0, int32(i*2), 2, fmt.Sprint(i)))
		if err != nil || info.Duplicate {
			t.Fatalf("batch %d: %+v %v", i, info, err)
		}
		orig = append(orig, info)
	}
	leo := p.LogEndOffset()
	for i := 1; i < 6; i++ {
		info, err := appendIdem(t, p, idemBatch(7, 0, int32(i*2), 2, fmt.Sprint(i)))
		if err != nil || !info.Duplicate || info.FirstOffset != orig[i].FirstOffset || info.LastOffset != orig[i].LastOffset {
			t.Fatalf("retry of batch %d: %+v %v, want the original's offsets %d-%d", i, info, err, orig[i].FirstOffset, orig[i].LastOffset)
		}
	}
	if p.LogEndOffset() != leo {
		t.Fatalf("retries appended: log end %d, want %d", p.LogEndOffset(), leo)
	}
	_, err := appendIdem(t, p, idemBatch(7, 0, 0, 2, "0"))
	wantCode(t, err, kerr.OutOfOrderSequenceNumber)
	// A batch overlapping a remembered one but not equal to it is no retry.
	_, err = appendIdem(t, p, idemBatch(7, 0, 10, 1, "x"))
	wantCode(t, err, kerr.OutOfOrderSequenceNumber)
}

// TestProducerStateChecks: Kafka's checks for a client's batch, in order.
func TestProducerStateChecks(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	must := func(raw []byte) {
		t.Helper()
		if info, err := appendIdem(t, p, raw); err != nil || info.Duplicate {
			t.Fatalf("%+v %v", info, err)
		}
	}
	// An unknown producer may start anywhere (its state may have been
	// removed with the log's head).
	must(idemBatch(1, 3, 40, 2, "a"))
	must(idemBatch(1, 3, 42, 1, "b"))
	for _, tc := range []struct {
		name string
		raw  []byte
		want *kerr.Error
	}{
		{"gap", idemBatch(1, 3, 44, 1, "c"), kerr.OutOfOrderSequenceNumber},
		{"sequence going back", idemBatch(1, 3, 41, 1, "c"), kerr.OutOfOrderSequenceNumber},
		{"older epoch", idemBatch(1, 2, 43, 1, "c"), kerr.InvalidProducerEpoch},
		{"new epoch not at 0", idemBatch(1, 4, 43, 1, "c"), kerr.OutOfOrderSequenceNumber},
		{"transactional", setProducer(producerBatch(1, "c", t0.UnixMilli()), 1, 3, 43, true), kerr.InvalidTxnState},
	} {
		_, err := appendIdem(t, p, tc.raw)
		wantCode(t, err, tc.want)
	}
	must(idemBatch(1, 4, 0, 1, "new epoch"))
	// The old epoch's batches are forgotten with it.
	_, err := appendIdem(t, p, idemBatch(1, 3, 42, 1, "b"))
	wantCode(t, err, kerr.InvalidProducerEpoch)
	// Sequences wrap after MaxInt32.
	must(idemBatch(2, 0, math.MaxInt32-1, 2, "end"))
	must(idemBatch(2, 0, 0, 1, "wrapped"))
	// A batch without a producer id is never checked.
	must(producerBatch(1, "plain", t0.UnixMilli()))
	must(producerBatch(1, "plain", t0.UnixMilli()))
	if got := p.Producers(); len(got) != 2 || got[0].ProducerEpoch != 4 || len(got[0].Batches) != 1 || got[1].Batches[1].LastSeq != 0 {
		t.Fatalf("producers %+v", got)
	}
}

// TestFollowerKeepsProducerStateForFailover: a follower learns sequences
// from what it replicates, so once it leads it drops a retry of a batch
// the old leader wrote; truncation forgets the batches it removes, and a
// replica opened from disk reads its producers back from the log.
func TestFollowerKeepsProducerStateForFailover(t *testing.T) {
	dir := t.TempDir()
	lead, f := open(t, t.TempDir(), 1, 1), open(t, dir, 2, 1)
	leader(t, lead, []int32{1, 2})
	if _, err := f.MakeFollower(1, 1, 1, []int32{1, 2, 3}, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	first, err := appendIdem(t, lead, idemBatch(9, 0, 0, 3, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := appendIdem(t, lead, idemBatch(9, 0, 3, 2, "b")); err != nil {
		t.Fatal(err)
	}
	raw, err := lead.log.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AppendAsFollower(raw); err != nil {
		t.Fatal(err)
	}

	// Truncating the second batch away forgets it: its retry is appended.
	if err := f.TruncateTo(3); err != nil {
		t.Fatal(err)
	}
	if _, err := f.MakeLeader(2, 2, []int32{1, 2, 3}, []int32{2}, t0); err != nil {
		t.Fatal(err)
	}
	info, err := appendIdem(t, f, idemBatch(9, 0, 0, 3, "a"))
	if err != nil || !info.Duplicate || info.FirstOffset != first.FirstOffset {
		t.Fatalf("retry of the first batch on the new leader: %+v %v", info, err)
	}
	info, err = appendIdem(t, f, idemBatch(9, 0, 3, 2, "b"))
	if err != nil || info.Duplicate || info.FirstOffset != 3 {
		t.Fatalf("retry of the truncated batch: %+v %v, want appended at 3", info, err)
	}

	// Reopened from disk, the replica still finds both.
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	re := open(t, dir, 2, 1)
	if _, err := re.MakeLeader(3, 3, []int32{1, 2, 3}, []int32{2}, t0); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int32{0, 3} {
		n := 3
		if seq == 3 {
			n = 2
		}
		if info, err := appendIdem(t, re, idemBatch(9, 0, seq, n, "again")); err != nil || !info.Duplicate {
			t.Fatalf("after reopening, retry from sequence %d: %+v %v", seq, info, err)
		}
	}
	if _, err := appendIdem(t, re, idemBatch(9, 0, 5, 1, "c")); err != nil {
		t.Fatalf("next sequence after reopening: %v", err)
	}

	// A follower that starts over at the leader's log start has no state.
	if _, err := re.MakeFollower(1, 4, 4, []int32{1, 2, 3}, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := re.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if got := re.Producers(); len(got) != 0 {
		t.Fatalf("producers after a full truncation: %+v", got)
	}
}
