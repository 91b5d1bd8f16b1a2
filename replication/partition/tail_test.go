package partition

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

// sizedBatch is a producer batch of n records of size bytes each.
func sizedBatch(n, size int) []byte {
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i].Value = bytes.Repeat([]byte{byte(i)}, size)
	}
	return storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: t0.UnixMilli()}, recs)
}

// checkReadsMatchTheLog reads p at random offsets as follower 2 and checks
// each answer against the file: whole batches from the one holding the
// offset, a prefix of what the file holds from there, within maxBytes
// unless it is one batch.
func checkReadsMatchTheLog(t *testing.T, rng *rand.Rand, p *Partition) {
	t.Helper()
	start, end := p.LogStartOffset(), p.LogEndOffset()
	for range 50 {
		offset := start + rng.Int64N(end-start)
		maxBytes := 1 + rng.IntN(3<<20)
		res, err := p.Read(FetchParams{ReplicaID: 2, FetchOffset: offset, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, MaxBytes: maxBytes})
		if err != nil {
			t.Fatalf("read at %d: %v", offset, err)
		}
		file, err := p.log.Read(offset, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Records
		if len(got) == 0 || !bytes.HasPrefix(file, got) {
			t.Fatalf("read at %d (max %d): %d bytes that are not a prefix of the file's %d", offset, maxBytes, len(got), len(file))
		}
		first, last, _, size, err := storage.PeekBatch(got)
		if err != nil || first > offset || last < offset {
			t.Fatalf("read at %d starts with batch %d-%d (%v)", offset, first, last, err)
		}
		if len(got) > maxBytes && len(got) != size {
			t.Fatalf("read at %d: %d bytes past max %d in more than one batch", offset, len(got), maxBytes)
		}
		for pos := 0; pos < len(got); {
			_, _, _, n, err := storage.PeekBatch(got[pos:])
			if err != nil {
				t.Fatalf("read at %d: no whole batch at byte %d: %v", offset, pos, err)
			}
			pos += n
		}
	}
}

// A leader answers fetches of its newest batches from memory, and every
// answer, from memory or from the file, is what the file holds: across
// buffers filling and rolling over, batches nearly a buffer long, and a
// leadership lost, a truncation, batches fetched as a follower and a
// leadership won again (whose old tail must not be served).
func TestLeaderTailReadsMatchTheLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2, 3})
	appendSome := func(n int) {
		for range n {
			size := 1 + rng.IntN(4096)
			if rng.IntN(20) == 0 {
				size = 240 << 10 // batches of about 0.96 MiB, most of a buffer
			}
			mustAppendBatch(t, p, sizedBatch(1+rng.IntN(4), size))
		}
	}
	appendSome(400)
	if _, ok := p.tail.Read(p.LogEndOffset()-1, 1); !ok {
		t.Fatal("the newest batch is not in the tail")
	}
	checkReadsMatchTheLog(t, rng, p)

	if _, err := p.MakeFollower(2, 2, 2, []int32{1, 2, 3}, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	cut := p.LogEndOffset() - 5
	if err := p.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	cut = p.LogEndOffset()
	if err := p.AppendAsFollower(stampedBatch(cut, 2, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.MakeLeader(3, 3, []int32{1, 2, 3}, []int32{1, 2, 3}, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.tail.Read(cut, 1); ok {
		t.Fatal("a new leader serves a tail it did not append as leader")
	}
	checkReadsMatchTheLog(t, rng, p)
	appendSome(100)
	checkReadsMatchTheLog(t, rng, p)
}

func mustAppendBatch(t *testing.T, p *Partition, b []byte) {
	t.Helper()
	if _, err := p.AppendAsLeader(b, 1, t0); err != nil {
		t.Fatal(err)
	}
}
