package partition

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The high watermark is the smallest log end offset over the maximal ISR
// and only moves forward.
func TestHighWatermarkRules(t *testing.T) {
	type step struct {
		id     int32
		offset int64
		at     time.Duration
		want   int64 // high watermark after the fetch
	}
	cases := []struct {
		name  string
		isr   []int32
		steps []step
	}{
		{"min over the ISR", []int32{1, 2, 3}, []step{{2, 10, 0, 0}, {3, 4, 0, 4}, {3, 10, 0, 10}}},
		{"never moves back", []int32{1, 2, 3}, []step{{2, 8, 0, 0}, {3, 8, 0, 8}, {2, 3, 0, 8}}},
		{"the leader alone", []int32{1}, nil},
		{"a lagging replica outside the ISR does not hold it", []int32{1, 2}, []step{{3, 2, 0, 0}, {2, 10, 0, 10}}},
		{"a caught-up replica about to join does", []int32{1, 2}, []step{{3, 10, 0, 0}, {2, 10, 0, 10}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := open(t, t.TempDir(), 1, 1)
			leader(t, p, c.isr)
			mustAppend(t, p, 10)
			want := int64(0)
			if len(c.isr) == 1 {
				want = 10
			}
			if got := p.HighWatermark(); got != want {
				t.Fatalf("after the append: high watermark %d, want %d", got, want)
			}
			for _, s := range c.steps {
				fetch(t, p, s.id, s.offset, t0.Add(s.at))
				if got := p.HighWatermark(); got != s.want {
					t.Fatalf("after %d fetched at %d: high watermark %d, want %d", s.id, s.offset, got, s.want)
				}
			}
		})
	}
}

// A follower leaves the ISR once it has not caught up for
// replica.lag.time.max.ms, and the committed shrink frees the high watermark.
func TestShrinkAfterLagTime(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2, 3})
	mustAppend(t, p, 5)
	fetch(t, p, 2, 5, t0)
	fetch(t, p, 3, 0, t0)
	if _, ok := p.ISRChange(t0.Add(lag)); ok {
		t.Fatal("shrink at exactly the lag time")
	}
	prop, ok := p.ISRChange(t0.Add(lag + time.Millisecond))
	if !ok || prop.Kind != ShrinkISR || !slices.Equal(prop.ISR, []int32{1, 2}) || !slices.Equal(prop.Changed, []int32{3}) {
		t.Fatalf("proposal %+v %v, want a shrink to [1 2]", prop, ok)
	}
	if prop.LeaderEpoch != 1 || prop.PartitionEpoch != 1 {
		t.Fatalf("proposal for epochs %d/%d, want 1/1", prop.LeaderEpoch, prop.PartitionEpoch)
	}
	if _, ok := p.ISRChange(t0.Add(lag + time.Second)); ok {
		t.Fatal("a second change while one is in flight")
	}
	if p.HighWatermark() != 0 {
		t.Fatal("a pending shrink moved the high watermark")
	}
	moved, err := p.ApplyPartitionState(prop.ISR, 2, t0.Add(lag+time.Second))
	if err != nil || !moved || p.HighWatermark() != 5 {
		t.Fatalf("apply: moved %v err %v, high watermark %d, want 5", moved, err, p.HighWatermark())
	}
	if _, err := p.ApplyPartitionState([]int32{1, 2, 3}, 1, t0); err == nil {
		t.Fatal("a stale partition epoch was applied")
	}
}

// A replica joins only once its log end offset reaches both the high
// watermark and the start of the current leader epoch, and while its
// expansion is in flight it counts for the high watermark.
func TestExpandWhenCaughtUp(t *testing.T) {
	dir := t.TempDir()
	p := open(t, dir, 1, 1)
	leader(t, p, []int32{1})
	mustAppend(t, p, 10) // epoch 1 wrote 0-9, committed by the leader alone
	if _, err := p.MakeLeader(2, 2, []int32{1, 2, 3}, []int32{1, 2}, t0); err != nil {
		t.Fatal(err)
	}
	if s := p.State(); s.LeaderEpochStartOffset != 10 {
		t.Fatalf("leader epoch 2 starts at %d, want 10", s.LeaderEpochStartOffset)
	}
	mustAppend(t, p, 5) // 10-14 in epoch 2
	fetch(t, p, 2, 15, t0)
	if p.HighWatermark() != 15 {
		t.Fatalf("high watermark %d, want 15", p.HighWatermark())
	}
	fetch(t, p, 3, 9, t0)
	if prop, ok := p.ISRChange(t0); ok {
		t.Fatalf("replica 3 at 9 proposed: %+v", prop)
	}
	fetch(t, p, 3, 15, t0)
	prop, ok := p.ISRChange(t0)
	if !ok || prop.Kind != ExpandISR || !slices.Equal(prop.ISR, []int32{1, 2, 3}) {
		t.Fatalf("proposal %+v %v, want an expansion to [1 2 3]", prop, ok)
	}
	if s := p.State(); !slices.Equal(s.MaximalISR, []int32{1, 2, 3}) || !slices.Equal(s.ISR, []int32{1, 2}) {
		t.Fatalf("ISR %v maximal %v, want [1 2] and [1 2 3]", s.ISR, s.MaximalISR)
	}
	mustAppend(t, p, 5) // 15-19
	fetch(t, p, 2, 20, t0)
	if p.HighWatermark() != 15 {
		t.Fatalf("high watermark %d passed the pending member at 15", p.HighWatermark())
	}
	fetch(t, p, 3, 18, t0)
	if p.HighWatermark() != 18 {
		t.Fatalf("high watermark %d, want 18", p.HighWatermark())
	}
	if _, err := p.ApplyPartitionState(prop.ISR, 3, t0); err != nil {
		t.Fatal(err)
	}
	if s := p.State(); s.Pending != nil || !slices.Equal(s.ISR, []int32{1, 2, 3}) {
		t.Fatalf("after apply: %+v", s)
	}
}

// A leader epoch start above the high watermark keeps a follower between
// them out of the ISR (Kafka's isFollowerInSync).
func TestExpandNeedsLeaderEpochStart(t *testing.T) {
	dir := t.TempDir()
	p := open(t, dir, 1, 1)
	if _, err := p.MakeFollower(2, 1, 1, []int32{1, 2}, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := p.AppendAsFollower(stampedBatch(0, 1, 10)); err != nil {
		t.Fatal(err)
	}
	p.UpdateHighWatermark(4)
	if _, err := p.MakeLeader(2, 2, []int32{1, 2, 3}, []int32{1}, t0); err != nil {
		t.Fatal(err)
	}
	fetch(t, p, 3, 6, t0) // >= the high watermark 4, below the epoch start 10
	if prop, ok := p.ISRChange(t0); ok {
		t.Fatalf("proposed %+v for a replica below the leader epoch start", prop)
	}
	fetch(t, p, 3, 10, t0)
	if prop, ok := p.ISRChange(t0); !ok || prop.Kind != ExpandISR {
		t.Fatalf("no expansion at the epoch start: %+v", prop)
	}
}

// acks=-1 is refused below min.insync.replicas; a produce whose records
// the high watermark passed while the ISR was big enough learns at its
// check that the ISR shrank since (Kafka's
// Partition.checkEnoughReplicasReachOffset counts the maximal ISR then).
func TestMinInsyncReplicas(t *testing.T) {
	p := open(t, t.TempDir(), 1, 2)
	leader(t, p, []int32{1})
	_, err := p.AppendAsLeader(producerBatch(1, "a", 0), -1, t0)
	wantCode(t, err, kerr.NotEnoughReplicas)
	if p.LogEndOffset() != 0 {
		t.Fatal("a refused produce was appended")
	}
	if _, err := p.AppendAsLeader(producerBatch(1, "a", 0), 1, t0); err != nil {
		t.Fatalf("acks=1 under min.insync.replicas: %v", err)
	}
	_, err = p.AppendAsLeader(producerBatch(1, "a", 0), 2, t0)
	wantCode(t, err, kerr.InvalidRequiredAcks)

	fetch(t, p, 2, 1, t0)
	if _, err := p.ApplyPartitionState([]int32{1, 2}, 2, t0); err != nil {
		t.Fatal(err)
	}
	info, err := p.AppendAsLeader(producerBatch(3, "b", 0), -1, t0)
	if err != nil {
		t.Fatal(err)
	}
	if done, err := p.CheckEnoughReplicasReachOffset(info.LastOffset + 1); done || err != nil {
		t.Fatalf("done %v err %v before the follower fetched", done, err)
	}
	fetch(t, p, 2, info.LastOffset+1, t0)
	if _, err := p.ApplyPartitionState([]int32{1}, 3, t0); err != nil {
		t.Fatal(err)
	}
	done, err := p.CheckEnoughReplicasReachOffset(info.LastOffset + 1)
	if !done {
		t.Fatal("not done once the high watermark passed the batch")
	}
	wantCode(t, err, kerr.NotEnoughReplicasAfterAppend)
}

// While the committed ISR is below min.insync.replicas the high watermark
// stays where it is, whatever acks the records were written with: Kafka's
// Partition.maybeIncrementLeaderHW returns at once when isUnderMinIsr
// (KAFKA-15583). Once a replica rejoins and the ISR is big enough again it
// moves to what the ISR holds.
func TestHighWatermarkHeldUnderMinIsr(t *testing.T) {
	p := open(t, t.TempDir(), 1, 2)
	leader(t, p, []int32{1})
	info := mustAppend(t, p, 5)
	if info.HighWatermarkMoved || p.HighWatermark() != 0 {
		t.Fatalf("high watermark %d (moved %v) after acks=1 records with ISR [1] under min.insync.replicas 2, want 0",
			p.HighWatermark(), info.HighWatermarkMoved)
	}
	if fetch(t, p, 2, 5, t0) || p.HighWatermark() != 0 {
		t.Fatalf("high watermark %d after a follower outside the ISR caught up, want 0 while the ISR is [1]", p.HighWatermark())
	}
	if prop, ok := p.ISRChange(t0); !ok || prop.Kind != ExpandISR {
		t.Fatalf("no expansion for the caught-up follower: %+v", prop)
	}
	if p.HighWatermark() != 0 {
		t.Fatalf("high watermark %d with the expansion only in flight, want 0: the committed ISR counts", p.HighWatermark())
	}
	moved, err := p.ApplyPartitionState([]int32{1, 2}, 2, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !moved || p.HighWatermark() != 5 {
		t.Fatalf("high watermark %d (moved %v) once the ISR [1 2] meets min.insync.replicas, want 5", p.HighWatermark(), moved)
	}

	// The same with min.insync.replicas 1: the leader alone moves it.
	q := open(t, t.TempDir(), 1, 1)
	leader(t, q, []int32{1})
	if info := mustAppend(t, q, 5); !info.HighWatermarkMoved || q.HighWatermark() != 5 {
		t.Fatalf("high watermark %d with ISR [1] and min.insync.replicas 1, want 5", q.HighWatermark())
	}
}

// min.insync.replicas above the replication factor asks for every replica
// (Kafka's Partition.effectiveMinIsr, min(min.insync.replicas, replicas),
// in appendRecordsToLeader, checkEnoughReplicasReachOffset and
// isUnderMinIsr): a topic of one replica with min.insync.replicas 2 takes
// acks=-1 produces and its high watermark moves.
func TestEffectiveMinIsr(t *testing.T) {
	p := open(t, t.TempDir(), 1, 2)
	if _, err := p.MakeLeader(1, 1, []int32{1}, []int32{1}, t0); err != nil {
		t.Fatal(err)
	}
	info, err := p.AppendAsLeader(producerBatch(3, "a", 0), -1, t0)
	if err != nil {
		t.Fatalf("acks=-1 on one replica with min.insync.replicas 2: %v", err)
	}
	if p.HighWatermark() != 3 {
		t.Fatalf("high watermark %d, want 3", p.HighWatermark())
	}
	if done, err := p.CheckEnoughReplicasReachOffset(info.LastOffset + 1); !done || err != nil {
		t.Fatalf("done %v err %v, want done without error", done, err)
	}

	// Two replicas, min.insync.replicas 3: both are asked for, not three.
	q := open(t, t.TempDir(), 1, 3)
	if _, err := q.MakeLeader(1, 1, []int32{1, 2}, []int32{1, 2}, t0); err != nil {
		t.Fatal(err)
	}
	info, err = q.AppendAsLeader(producerBatch(2, "b", 0), -1, t0)
	if err != nil {
		t.Fatalf("acks=-1 on an ISR of both replicas with min.insync.replicas 3: %v", err)
	}
	fetch(t, q, 2, info.LastOffset+1, t0)
	if done, err := q.CheckEnoughReplicasReachOffset(info.LastOffset + 1); !done || err != nil {
		t.Fatalf("done %v err %v once both replicas hold the batch", done, err)
	}
	if _, err := q.ApplyPartitionState([]int32{1}, 2, t0); err != nil {
		t.Fatal(err)
	}
	_, err = q.AppendAsLeader(producerBatch(1, "c", 0), -1, t0)
	wantCode(t, err, kerr.NotEnoughReplicas)
}

// Older epochs from metadata are refused; a follower is no leader.
func TestStaleEpochsRefused(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	if _, err := p.MakeLeader(5, 7, []int32{1, 2}, []int32{1, 2}, t0); err != nil {
		t.Fatal(err)
	}
	_, err := p.MakeLeader(4, 9, []int32{1, 2}, []int32{1, 2}, t0)
	wantCode(t, err, kerr.FencedLeaderEpoch)
	_, err = p.MakeFollower(2, 5, 6, []int32{1, 2}, []int32{1, 2})
	wantCode(t, err, kerr.FencedLeaderEpoch)
	if isNew, err := p.MakeFollower(2, 6, 8, []int32{1, 2}, []int32{1, 2}); err != nil || !isNew {
		t.Fatalf("new epoch: %v %v", isNew, err)
	}
	_, err = p.AppendAsLeader(producerBatch(1, "a", 0), 1, t0)
	wantCode(t, err, errNotLeaderOrFollower)
	_, err = p.MakeLeader(7, 7, []int32{1, 2}, []int32{1, 2}, t0)
	wantCode(t, err, kerr.FencedLeaderEpoch) // a newer leader epoch, an older partition epoch
	if _, err := p.MakeLeader(7, 9, []int32{1, 2}, []int32{1, 3}, t0); err == nil {
		t.Fatal("an ISR member outside the replicas was accepted")
	}
}

// A follower is considered for the ISR only as its fetch arrives (Kafka's
// Partition.updateFollowerFetchState calls maybeExpandIsr): one that
// stopped fetching is not added back, though under min.insync.replicas the
// high watermark stands at what it last fetched. Added back, the leader
// would wait for it, and the ISR would flap.
func TestSilentFollowerNotAddedBackUnderMinIsr(t *testing.T) {
	p := open(t, t.TempDir(), 1, 2)
	leader(t, p, []int32{1, 2})
	mustAppend(t, p, 5)
	fetch(t, p, 2, 5, t0)
	if p.HighWatermark() != 5 {
		t.Fatalf("high watermark %d, want 5", p.HighWatermark())
	}
	if prop, ok := p.ISRChange(t0); ok {
		t.Fatalf("proposed %+v with the ISR right", prop)
	}
	mustAppend(t, p, 5) // 2 never fetches these
	later := t0.Add(lag + time.Second)
	prop, ok := p.ISRChange(later)
	if !ok || prop.Kind != ShrinkISR {
		t.Fatalf("no shrink of the silent follower: %+v", prop)
	}
	if _, err := p.ApplyPartitionState([]int32{1}, 2, later); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 5 {
		t.Fatalf("high watermark %d under min ISR, want it held at 5", p.HighWatermark())
	}
	if prop, ok := p.ISRChange(later); ok {
		t.Fatalf("proposed %+v for a follower that has not fetched since it left", prop)
	}
	fetch(t, p, 2, 5, later)
	if prop, ok := p.ISRChange(later); !ok || prop.Kind != ExpandISR || !slices.Equal(prop.Changed, []int32{2}) {
		t.Fatalf("no expansion once it fetched at the high watermark: %+v %v", prop, ok)
	}
}

// A refusal after which the expansion may have been applied (its first
// answer lost, the retry refused as stale) keeps the new member counting
// for the high watermark until the metadata says, as Kafka's
// handleAlterPartitionError keeps the pending state: the controller may
// have made it an ISR member, and a high watermark past its log end would
// commit records a future leader lacks. A refusal that says the change
// was not applied frees the high watermark at once.
func TestRefusedExpansionHoldsTheHighWatermarkUntilTheMetadataSays(t *testing.T) {
	for _, c := range []struct {
		code    int16
		keeps   bool
		wantHWM int64
	}{
		{kerr.InvalidUpdateVersion.Code, true, 5},
		{kerr.FencedLeaderEpoch.Code, true, 5},
		{kerr.IneligibleReplica.Code, false, 9},
		{kerr.OperationNotAttempted.Code, false, 9},
	} {
		t.Run(kerr.ErrorForCode(c.code).Error(), func(t *testing.T) {
			p := open(t, t.TempDir(), 1, 1)
			leader(t, p, []int32{1, 2})
			mustAppend(t, p, 5)
			fetch(t, p, 2, 5, t0)
			fetch(t, p, 3, 5, t0)
			prop, ok := p.ISRChange(t0)
			if !ok || prop.Kind != ExpandISR || !slices.Equal(prop.ISR, []int32{1, 2, 3}) {
				t.Fatalf("proposal %+v %v, want an expansion to [1 2 3]", prop, ok)
			}
			if retry := p.ISRChangeRefused(c.code); retry {
				t.Fatal("a refusal Kafka does not retry is sent again")
			}
			// Broker 3 stops fetching; the leader writes on and 2 keeps up.
			later := t0.Add(lag + time.Second)
			mustAppend(t, p, 4)
			fetch(t, p, 2, 9, later)
			if got := p.HighWatermark(); got != c.wantHWM {
				t.Fatalf("high watermark %d, want %d (broker 3 holds 5)", got, c.wantHWM)
			}
			if pending := p.State().Pending != nil; pending != c.keeps {
				t.Fatalf("change pending %v, want %v", pending, c.keeps)
			}
			if _, ok := p.ISRChange(later); ok && c.keeps {
				t.Fatal("a new change proposed while one is pending")
			}
		})
	}
}
