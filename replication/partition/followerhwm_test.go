package partition

import "testing"

// A follower's high watermark only moves forward: a new leader's answer
// can carry a lower one (its own lags the old leader's until its
// followers fetch from it), which the follower does not take, as Kafka's
// maybeUpdateHighWatermark does not. The data-plane simulation found a
// follower's high watermark going back this way after a leader change.
func TestFollowerHighWatermarkNeverGoesBack(t *testing.T) {
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
	if p.UpdateHighWatermark(5) || p.HighWatermark() != 8 {
		t.Fatalf("high watermark %d after the new leader sent 5, want 8 kept", p.HighWatermark())
	}
	if !p.UpdateHighWatermark(20) || p.HighWatermark() != 10 {
		t.Fatalf("high watermark %d, want 10: the log end", p.HighWatermark())
	}
	// A truncation still brings it down with the log end.
	if err := p.TruncateTo(6); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() > p.LogEndOffset() {
		t.Fatalf("high watermark %d past the log end %d after a truncation", p.HighWatermark(), p.LogEndOffset())
	}
}
