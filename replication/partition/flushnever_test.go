package partition

import (
	"testing"
)

// Under FlushNever the page cache holds every write past the process's
// death, so a leader's append counts as flushed at once and a kill (Crash)
// keeps it: the reopened log ends where the high watermark was, epochs
// included.
func TestFlushNeverLeaderAppendSurvivesAKill(t *testing.T) {
	dir := t.TempDir()
	p := open(t, dir, 1, 1)
	leader(t, p, []int32{1})
	mustAppend(t, p, 5)
	mustAppend(t, p, 3)
	if s := p.State(); s.LastFlushedOffset != 8 || s.HighWatermark != 8 {
		t.Fatalf("after the appends: flushed to %d, high watermark %d; want 8 and 8", s.LastFlushedOffset, s.HighWatermark)
	}
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}
	p = open(t, dir, 1, 1)
	if end := p.LogEndOffset(); end != 8 {
		t.Fatalf("after the kill the log ends at %d, want 8", end)
	}
	if e := p.Epochs(); len(e) != 1 || e[0].Epoch != 1 || e[0].StartOffset != 0 {
		t.Fatalf("epochs after the kill %v, want [{1 0}]", e)
	}
}

// A follower's append is flushed as it is written too, without waiting
// for the fetcher's Flush: whatever appends to a replica, a kill keeps it.
func TestFlushNeverFollowerAppendSurvivesAKill(t *testing.T) {
	dir := t.TempDir()
	p := open(t, dir, 1, 1)
	if _, err := p.MakeFollower(2, 1, 1, []int32{1, 2}, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := p.AppendAsFollower(append(stampedBatch(0, 1, 4), stampedBatch(4, 1, 2)...)); err != nil {
		t.Fatal(err)
	}
	if s := p.State(); s.LastFlushedOffset != 6 {
		t.Fatalf("after the append: flushed to %d, want 6", s.LastFlushedOffset)
	}
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}
	p = open(t, dir, 1, 1)
	if end := p.LogEndOffset(); end != 6 {
		t.Fatalf("after the kill the log ends at %d, want 6", end)
	}
}
