package partition

import "testing"

// A leader re-elected in a later epoch without having followed in between
// forgets its followers' log end offsets until they fetch again. Another
// leader may have led the epoch it missed, and a follower may have
// truncated to that leader's log and taken other records at the offsets
// it had acknowledged: its old log end must not count toward the high
// watermark, or records would be committed that an ISR member does not
// hold. The data-plane simulation found the high watermark past an ISR
// member's log end this way.
func TestReelectedLeaderForgetsFollowerLogEnds(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	replicas := []int32{1, 2, 3}
	if _, err := p.MakeLeader(1, 1, replicas, replicas, t0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, 10)
	fetch(t, p, 2, 10, t0)
	fetch(t, p, 3, 10, t0)
	mustAppend(t, p, 5)
	fetch(t, p, 2, 15, t0) // broker 2 holds epoch 1's records to 15
	if hw := p.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark %d, want 10", hw)
	}
	// Broker 3 led epoch 2, which broker 1 never heard of: broker 2
	// truncated to 10 and took broker 3's records. Broker 1 leads epoch 3.
	if _, err := p.MakeLeader(3, 3, replicas, replicas, t0); err != nil {
		t.Fatal(err)
	}
	fetch(t, p, 3, 15, t0) // broker 3 truncated to 10 and caught up with broker 1
	if hw := p.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark %d after only broker 3 fetched in epoch 3, want 10: broker 2's log end from epoch 1 counted", hw)
	}
	fetch(t, p, 2, 10, t0) // broker 2 truncated back to 10
	if hw := p.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark %d, want 10", hw)
	}
	fetch(t, p, 2, 15, t0)
	if hw := p.HighWatermark(); hw != 15 {
		t.Fatalf("high watermark %d once every ISR member fetched to 15, want 15", hw)
	}
}
