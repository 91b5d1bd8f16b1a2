package partition

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// openAlways opens broker id's replica of t-0 under dir with every
// append to be fsynced (FlushAlways), which the replica defers to Flush.
func openAlways(t *testing.T, dir string, id int32) *Partition {
	t.Helper()
	p, err := New(Config{
		Topic: "t", TopicID: topicID, Partition: 0, Dir: dir, LocalBrokerID: id,
		Log: storage.Options{FlushPolicy: storage.FlushAlways}, ReplicaLagTimeMax: lag,
		Now: func() time.Time { return t0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Under FlushAlways an append does not fsync; the leader's own records
// count toward the high watermark only once Flush made them durable, so
// even followers that hold them cannot commit them before: what the high
// watermark passed survives the leader's kill.
func TestHighWatermarkCountsOnlyWhatTheLeaderFlushed(t *testing.T) {
	p := openAlways(t, t.TempDir(), 1)
	if !p.FlushDeferred() {
		t.Fatal("FlushAlways replica does not defer its flushes")
	}
	leader(t, p, []int32{1, 2, 3})
	info := mustAppend(t, p, 5)
	if info.HighWatermarkMoved || !p.NeedsFlush() {
		t.Fatalf("append: %+v, needs flush %v; want no high watermark move and a flush pending", info, p.NeedsFlush())
	}
	if done, err := p.CheckFlushed(5); done || err != nil {
		t.Fatalf("acks=1 done %v (%v) before the flush", done, err)
	}
	fetch(t, p, 2, 5, t0)
	fetch(t, p, 3, 5, t0)
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d with the leader's records unflushed, want 0", hw)
	}
	moved, err := p.Flush(t0)
	if err != nil || !moved || p.HighWatermark() != 5 || p.NeedsFlush() {
		t.Fatalf("flush: moved %v err %v, high watermark %d, needs flush %v; want 5", moved, err, p.HighWatermark(), p.NeedsFlush())
	}
	if done, err := p.CheckFlushed(5); !done || err != nil {
		t.Fatalf("acks=1 done %v (%v) after the flush", done, err)
	}
	// A kill now loses the second append, which nothing acknowledged.
	mustAppend(t, p, 3)
	fetch(t, p, 2, 8, t0)
	fetch(t, p, 3, 8, t0)
	if hw := p.HighWatermark(); hw != 5 {
		t.Fatalf("high watermark %d, want 5 until the leader flushes", hw)
	}
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}
	p = openAlways(t, p.cfg.Dir, 1)
	if end := p.LogEndOffset(); end != 5 {
		t.Fatalf("after the kill the log ends at %d, want 5 (the flushed, acknowledged records)", end)
	}
}

// A replica without the deferred flush (FlushNever here) counts its own
// log end at once, as before.
func TestHighWatermarkCountsTheLogEndWithoutDeferredFlush(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	if p.FlushDeferred() {
		t.Fatal("FlushNever replica defers its flushes")
	}
	leader(t, p, []int32{1})
	if info := mustAppend(t, p, 4); !info.HighWatermarkMoved || p.HighWatermark() != 4 {
		t.Fatalf("append %+v, high watermark %d; want 4 at once", info, p.HighWatermark())
	}
}

// A produce waiting for the leader's flush (acks=1) completes when Flush
// covers it, and with NOT_LEADER_OR_FOLLOWER when the replica stops
// leading first.
func TestDelayedProduceWaitsForTheLeaderFlush(t *testing.T) {
	p := openAlways(t, t.TempDir(), 1)
	leader(t, p, []int32{1})
	info := mustAppend(t, p, 2)
	pg := NewPurgatory[*Partition]()
	var got []ProduceWait
	op := &DelayedProduce{Waits: []ProduceWait{{Partition: p, RequiredOffset: info.LastOffset + 1, LeaderFlush: true}},
		Done: func(w []ProduceWait) { got = w }}
	if pg.TryCompleteElseWatch(op, t0.Add(time.Minute), p) {
		t.Fatal("completed before the flush")
	}
	if _, err := p.Flush(t0); err != nil {
		t.Fatal(err)
	}
	pg.CheckAndComplete(p)
	if len(got) != 1 || got[0].Err != nil {
		t.Fatalf("after the flush: %+v, want done without error", got)
	}

	info = mustAppend(t, p, 1)
	got = nil
	op = &DelayedProduce{Waits: []ProduceWait{{Partition: p, RequiredOffset: info.LastOffset + 1, LeaderFlush: true}},
		Done: func(w []ProduceWait) { got = w }}
	pg.TryCompleteElseWatch(op, t0.Add(time.Minute), p)
	if _, err := p.MakeFollower(2, 2, 2, []int32{1, 2, 3}, []int32{2}); err != nil {
		t.Fatal(err)
	}
	pg.CheckAndComplete(p)
	if len(got) != 1 {
		t.Fatal("still waiting after losing the leadership")
	}
	wantCode(t, got[0].Err, errNotLeaderOrFollower)
}
