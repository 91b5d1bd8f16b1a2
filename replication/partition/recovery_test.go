package partition

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// A crash keeps exactly what the log had flushed; the reopened replica has
// its epochs and a high watermark bounded by what survived.
func TestRecoveryAfterCrashKeepsFlushedData(t *testing.T) {
	dir := t.TempDir()
	now := t0
	cfg := Config{
		Topic: "t", TopicID: topicID, Dir: dir, LocalBrokerID: 1,
		Log: storage.Options{FlushPolicy: storage.FlushInterval, FlushInterval: time.Hour},
		Now: func() time.Time { return now },
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	leader(t, p, []int32{1})
	mustAppend(t, p, 5)
	if _, err := p.Flush(now); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, 3)
	if s := p.State(); s.LogEndOffset != 8 || s.LastFlushedOffset != 5 || s.HighWatermark != 8 {
		t.Fatalf("before the crash: %+v", s)
	}
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}

	cfg.HighWatermark = 8 // checkpointed before the crash
	p, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if s := p.State(); s.LogEndOffset != 5 || s.HighWatermark != 5 {
		t.Fatalf("after the crash: log end %d high watermark %d, want 5 and 5", s.LogEndOffset, s.HighWatermark)
	}
	if e := p.Epochs(); len(e) != 1 || e[0] != (storage.EpochEntry{Epoch: 1, StartOffset: 0}) {
		t.Fatalf("epochs %v, want [{1 0}]", e)
	}
	if _, err := p.MakeLeader(2, 2, []int32{1, 2, 3}, []int32{1}, now); err != nil {
		t.Fatal(err)
	}
	info := mustAppend(t, p, 1)
	if info.FirstOffset != 5 || info.LeaderEpoch != 2 {
		t.Fatalf("append after recovery: %+v", info)
	}
}
