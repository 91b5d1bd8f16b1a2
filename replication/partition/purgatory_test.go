package partition

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// An acks=-1 produce completes when the high watermark passes it, exactly
// once, and leaves nothing behind.
func TestDelayedProduceCompletesOnHighWatermark(t *testing.T) {
	p := open(t, t.TempDir(), 1, 2)
	leader(t, p, []int32{1, 2})
	info, err := p.AppendAsLeader(producerBatch(3, "a", 0), -1, t0)
	if err != nil {
		t.Fatal(err)
	}
	pg := NewPurgatory[*Partition]()
	calls := 0
	var got []ProduceWait
	op := &DelayedProduce{
		Waits: []ProduceWait{{Partition: p, RequiredOffset: info.LastOffset + 1}},
		Done:  func(w []ProduceWait) { calls++; got = w },
	}
	if pg.TryCompleteElseWatch(op, t0.Add(time.Second), op.Keys()...) {
		t.Fatal("completed before the follower fetched")
	}
	if pg.CheckAndComplete(p) != 0 || pg.Len() != 1 {
		t.Fatal("completed without a change")
	}
	fetch(t, p, 2, 3, t0)
	if pg.CheckAndComplete(p) != 1 || calls != 1 || got[0].Err != nil {
		t.Fatalf("after the fetch: calls %d, result %+v", calls, got)
	}
	if pg.CheckAndComplete(p) != 0 || pg.Expire(t0.Add(time.Hour)) != 0 || calls != 1 || pg.Len() != 0 {
		t.Fatal("completed twice or left a waiter")
	}
}

// At its deadline a produce times out; a leadership change completes it
// with NOT_LEADER_OR_FOLLOWER.
func TestDelayedProduceExpiresOrLosesLeadership(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2})
	info := mustAppend(t, p, 1)
	pg := NewPurgatory[*Partition]()
	var errs []error
	add := func(deadline time.Time) {
		op := &DelayedProduce{
			Waits: []ProduceWait{{Partition: p, RequiredOffset: info.LastOffset + 1}},
			Done:  func(w []ProduceWait) { errs = append(errs, w[0].Err) },
		}
		pg.TryCompleteElseWatch(op, deadline, op.Keys()...)
	}
	add(t0.Add(time.Second))
	add(t0.Add(time.Minute))
	if d, ok := pg.NextDeadline(); !ok || !d.Equal(t0.Add(time.Second)) {
		t.Fatalf("next deadline %v %v", d, ok)
	}
	if pg.Expire(t0.Add(time.Second)) != 1 || len(errs) != 1 {
		t.Fatal("the first did not expire")
	}
	wantCode(t, errs[0], kerr.RequestTimedOut)
	if _, err := p.MakeFollower(2, 2, 2, []int32{1, 2}, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if pg.CheckAndComplete(p) != 1 {
		t.Fatal("the second did not complete on the leadership change")
	}
	wantCode(t, errs[1], errNotLeaderOrFollower)
}

// A parked fetch completes once min bytes are there, or at once when the
// leader epoch changes.
func TestDelayedFetch(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2})
	pg := NewPurgatory[*Partition]()
	var done []bool
	park := func(minBytes int) {
		op := &DelayedFetch{
			Waits:    []FetchWait{{Partition: p, LeaderEpoch: p.LeaderEpoch(), Params: FetchParams{ReplicaID: 2, CurrentLeaderEpoch: 1, LastFetchedEpoch: NoEpoch, MaxBytes: 1 << 20}}},
			MinBytes: minBytes,
			Done:     func(expired bool) { done = append(done, expired) },
		}
		if pg.TryCompleteElseWatch(op, t0.Add(time.Second), op.Keys()...) {
			t.Fatal("an empty fetch completed")
		}
	}
	park(1)
	park(1 << 20)
	mustAppend(t, p, 2)
	if pg.CheckAndComplete(p) != 1 || len(done) != 1 || done[0] {
		t.Fatalf("after an append: %v", done)
	}
	if _, err := p.MakeLeader(2, 2, []int32{1, 2}, []int32{1, 2}, t0); err != nil {
		t.Fatal(err)
	}
	if pg.CheckAndComplete(p) != 1 || len(done) != 2 || done[1] || pg.Len() != 0 {
		t.Fatalf("after a new leader epoch: %v, %d waiting", done, pg.Len())
	}
}

// countingOp completes once ready is set; it counts its completions.
type countingOp struct {
	ready     atomic.Bool
	completed atomic.Int32
	expired   atomic.Bool
}

func (o *countingOp) TryComplete() bool { return o.ready.Load() }
func (o *countingOp) OnComplete(expired bool) {
	o.completed.Add(1)
	o.expired.Store(expired)
}

// Operations watched, completed and expired from several goroutines at
// once complete exactly once each and leave nothing watched.
func TestPurgatoryCompletesEachOperationOnce(t *testing.T) {
	pg := NewPurgatory[int]()
	const n = 400
	ops := make([]*countingOp, n)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 4 {
				ops[i] = &countingOp{}
				pg.TryCompleteElseWatch(ops[i], t0.Add(time.Duration(i)*time.Millisecond), i%7, i%5)
			}
		})
	}
	wg.Wait()
	for i := 0; i < n; i += 2 {
		ops[i].ready.Store(true)
	}
	for g := range 4 {
		wg.Go(func() {
			for k := range 7 {
				pg.CheckAndComplete(k)
			}
			pg.Expire(t0.Add(time.Duration(g*n/4) * time.Millisecond))
		})
	}
	wg.Wait()
	pg.Expire(t0.Add(time.Hour))
	for i, op := range ops {
		if c := op.completed.Load(); c != 1 {
			t.Fatalf("operation %d completed %d times", i, c)
		}
		if i%2 == 1 && !op.expired.Load() {
			t.Fatalf("operation %d completed without being ready", i)
		}
	}
	if pg.Len() != 0 || len(pg.watchers) != 0 {
		t.Fatalf("%d waiting, %d keys watched after all completed", pg.Len(), len(pg.watchers))
	}
}

// A consumer's parked fetch counts only what lies below the high
// watermark: an append the followers do not hold yet leaves it waiting,
// and the follower fetch that commits it completes it.
func TestDelayedConsumerFetchWaitsForTheHighWatermark(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2})
	pg := NewPurgatory[*Partition]()
	done := 0
	op := &DelayedFetch{
		Waits:    []FetchWait{{Partition: p, LeaderEpoch: p.LeaderEpoch(), Params: FetchParams{ReplicaID: -1, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, MaxBytes: 1 << 20}}},
		MinBytes: 1,
		Done:     func(bool) { done++ },
	}
	if pg.TryCompleteElseWatch(op, t0.Add(time.Second), op.Keys()...) {
		t.Fatal("an empty fetch completed")
	}
	mustAppend(t, p, 3)
	if pg.CheckAndComplete(p) != 0 || done != 0 {
		t.Fatal("a consumer fetch completed on records above the high watermark")
	}
	fetch(t, p, 2, 3, t0)
	if pg.CheckAndComplete(p) != 1 || done != 1 {
		t.Fatalf("the committing follower fetch did not complete the consumer's (high watermark %d)", p.HighWatermark())
	}
}
