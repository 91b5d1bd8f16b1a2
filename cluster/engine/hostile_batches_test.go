package engine_test

import (
	"context"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The hostile review's batches: a zstd-flagged batch of garbage was
// accepted (consumers then failed "unable to decompress batch"), a
// one-record batch claiming 2^31-1 records moved the log end by 2^31, and
// 82-byte zstd batches claiming 2^31-1 records rolled a segment each (an
// open file each: 19,916 in 1.5 s). Now the leader reads every batch's
// records before it assigns offsets: none of them is appended, the log
// end does not move and no file is opened.
func TestHostileLyingBatches(t *testing.T) {
	ht := openHostile(t)
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	const topic = "lies"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	leader := ht.leaderOf(t, cl, topic)
	// A real zstd frame of one byte, inside a batch claiming 2^31-1
	// records: 82 bytes on the wire, as in the review.
	tinyZstd := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x01, 0x09, 0x00, 0x00, 0x0e}
	cases := []struct {
		name  string
		batch []byte
		want  int16
	}{
		{"zstd garbage", lyingBatch(1, 4, []byte("not a zstd frame at all")), kerr.CorruptMessage.Code},
		{"one record claiming 2^31-1", lyingBatch(math.MaxInt32, 0, nil), kerr.InvalidRecord.Code},
		{"tiny zstd claiming 2^31-1", lyingBatch(math.MaxInt32, 4, tinyZstd), kerr.InvalidRecord.Code},
	}
	for _, c := range cases {
		rp := produceRaw(t, cl, leader, c.batch)
		t.Logf("%s (%d bytes): %s, base offset %d", c.name, len(c.batch), errName(rp.ErrorCode), rp.BaseOffset)
		if rp.ErrorCode != c.want {
			t.Errorf("%s: %s, want %s", c.name, errName(rp.ErrorCode), errName(c.want))
		}
	}
	filesBefore, _ := openFiles(t)
	const rolls = 300
	accepted := 0
	for range rolls {
		if rp := produceRaw(t, cl, leader, lyingBatch(math.MaxInt32, 4, tinyZstd)); rp.ErrorCode == 0 {
			accepted++
		}
	}
	filesAfter, _ := openFiles(t)
	t.Logf("%d of %d lying zstd batches accepted; open files %d -> %d", accepted, rolls, filesBefore, filesAfter)
	if accepted > 0 || filesAfter-filesBefore > rolls/10 {
		t.Errorf("%d lying batches accepted, open files %d -> %d", accepted, filesBefore, filesAfter)
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(topic, 0); o.Offset != 0 {
		t.Errorf("the log end moved to %d", o.Offset)
	}
	ht.checkServing(t, "after the lying batches")
}
