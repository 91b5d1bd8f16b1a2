package partition

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage/damagetest"

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

// A log that opens shorter than its recovery point, or with damage that
// storage had to set aside, reports the records it lost; a crash that
// loses only what was never flushed reports nothing.
func TestDamageFoundAtOpen(t *testing.T) {
	segment := filepath.Join("t-0", "00000000000000000000.log")
	for _, tc := range []struct {
		name     string
		damage   func(t *testing.T, path string)
		point    int64
		from, to int64 // the damage wanted; from == to: none
	}{
		{"clean", func(*testing.T, string) {}, 40, 40, 40},
		{"truncated to 0", func(t *testing.T, path string) { damagetest.Cut(t, path, 0) }, 40, 0, 40},
		{"truncated to 0, no recovery point", func(t *testing.T, path string) { damagetest.Cut(t, path, 0) }, 0, 0, 1},
		{"cut at a batch", func(t *testing.T, path string) { damagetest.Cut(t, path, damagetest.BatchEnd(t, path, 2)) }, 40, 20, 40},
		{"byte flipped in the second batch", func(t *testing.T, path string) { damagetest.Flip(t, path, damagetest.BatchEnd(t, path, 1)+70) }, 40, 10, 40},
		{"byte flipped in the last batch", func(t *testing.T, path string) { damagetest.Flip(t, path, damagetest.BatchEnd(t, path, 3)+70) }, 40, 30, 40},
		{"unflushed tail torn, below no recovery point", func(t *testing.T, path string) { damagetest.Cut(t, path, damagetest.BatchEnd(t, path, 3)+5) }, 30, 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Topic: "t", TopicID: topicID, Dir: dir, LocalBrokerID: 1,
				Log: storage.Options{FlushPolicy: storage.FlushNever}, Now: func() time.Time { return t0 }}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			leader(t, p, []int32{1})
			for range 4 {
				mustAppend(t, p, 10)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, filepath.Join(dir, segment))
			cfg.RecoveryPoint = tc.point
			p, err = New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			d, damaged := p.Damage()
			if damaged != (tc.to > tc.from) || damaged && (d.From != tc.from || d.To < tc.to) {
				t.Fatalf("damage %v (%v), want offsets %d-%d", damaged, d, tc.from, tc.to-1)
			}
			if damaged {
				t.Log(d)
			}
		})
	}
}
