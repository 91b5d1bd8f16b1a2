package server

import (
	"testing"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Under flush always the append leaves the fsync to the flusher, yet an
// answered produce is durable on the leader: acks=1 is answered once the
// leader's flush covers its batch, acks=all once the high watermark (which
// counts the leader's flushed end only) passes it; the follower's fetch
// offset acknowledges, and the flushes leave nothing unflushed behind.
func TestFlushAlwaysAnswersOnlyFlushedProduces(t *testing.T) {
	rm := replicaRigFlushing(t, storage.FlushAlways)
	led := rm.partitionByName("led", 0)
	for i, acks := range []int16{1, -1, 1, -1} {
		rp := syncProduce(t, rm, produceReq(13, acks, "", ledID, 0, batch("a", "b", "c")))
		if rp.ErrorCode != 0 || rp.BaseOffset != int64(3*i) {
			t.Fatalf("acks=%d produce %d answered %+v", acks, i, rp)
		}
		if st := led.State(); st.LastFlushedOffset < rp.BaseOffset+3 {
			t.Fatalf("acks=%d answered at offset %d with the log flushed to %d", acks, rp.BaseOffset, st.LastFlushedOffset)
		}
	}
	if hw := led.HighWatermark(); hw != 12 {
		t.Fatalf("high watermark %d, want 12", hw)
	}

	// "waits" has 102 in the ISR: acks=all is answered after its fetch.
	waits := rm.partitionByName("waits", 0)
	got := make(chan int16, 1)
	rm.produce(produceReq(13, -1, "", waitsID, 0, batch("x")), func(resp kmsg.Response) {
		got <- resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	})
	waitFor(t, "the leader's flush", func() bool { return !waits.NeedsFlush() })
	if hw := waits.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d before the follower's fetch", hw)
	}
	if resp := wait(t, asyncFetch(rm, fetchReq(102, waitsID, 1, 0, 0), true)); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("follower fetch answered %+v", resp.Topics[0].Partitions[0])
	}
	if code := wait(t, got); code != 0 || waits.HighWatermark() != 1 {
		t.Fatalf("acks=all answered %d, high watermark %d", code, waits.HighWatermark())
	}
	if n := rm.produces.Len(); n != 0 {
		t.Fatalf("%d produces left in purgatory", n)
	}
}
