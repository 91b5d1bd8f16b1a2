package partition

import "testing"

// A follower takes the high watermark its leader sends, capped at its log
// end, also a lower one: a new leader's lags the old leader's until its
// followers fetch from it, and Kafka's follower (updateHighWatermark)
// shows the leader's. What it held below the old one stays in its log.
func TestFollowerTakesTheLeadersHighWatermark(t *testing.T) {
	p := open(t, t.TempDir(), 2, 1)
	if _, err := p.MakeFollower(1, 1, 1, []int32{1, 2, 3}, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := p.AppendAsFollower(stampedBatch(0, 1, 10)); err != nil {
		t.Fatal(err)
	}
	if !p.UpdateHighWatermark(8) || p.HighWatermark() != 8 {
		t.Fatalf("high watermark %d, want 8", p.HighWatermark())
	}
	// Broker 3 leads now and has heard of offset 5 only.
	if _, err := p.MakeFollower(3, 2, 2, []int32{1, 2, 3}, []int32{2, 3}); err != nil {
		t.Fatal(err)
	}
	if !p.UpdateHighWatermark(5) || p.HighWatermark() != 5 || p.LogEndOffset() != 10 {
		t.Fatalf("high watermark %d, log end %d after the new leader sent 5, want 5 and 10", p.HighWatermark(), p.LogEndOffset())
	}
	if !p.UpdateHighWatermark(20) || p.HighWatermark() != 10 {
		t.Fatalf("high watermark %d, want 10: the log end", p.HighWatermark())
	}
}
