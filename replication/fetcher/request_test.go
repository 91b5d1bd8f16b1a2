package fetcher

import (
	"context"
	"testing"
	"time"
)

// bareThread is a thread with no goroutine, for building requests by hand.
func bareThread(t *testing.T, cfg Config) *Thread {
	t.Helper()
	cfg.Send = network{}.send
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &Thread{m: NewMachine(cfg, 0, 1), cfg: cfg, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
}

// The Fetch carries what Kafka 4.4's replica fetcher sends: v18, the
// replica's id and broker epoch, the configured waits and limits, and per
// partition the fetch offset, last fetched epoch, current leader epoch and
// log start, with topics named by id.
func TestFetchRequestFields(t *testing.T) {
	th := bareThread(t, Config{BrokerID: 203, BrokerEpoch: func() int64 { return 77 }, FetchWaitMax: 321 * time.Millisecond,
		FetchMinBytes: 9, FetchMaxBytes: 4096, FetchResponseMaxBytes: 65536})
	f := newFollower(t)
	appendRecords(t, f.log, 6, 3)
	tp := TopicPartition{"orders", 2}
	th.m.AddPartitions(map[TopicPartition]InitialFetchState{tp: {Leader: 1, LeaderEpoch: 8, TopicID: topicID("orders"), Replica: f, InitOffset: -1}})
	rf := th.m.BuildFetch(time.Now())
	if rf == nil {
		t.Fatal("no request for a Fetching partition")
	}
	r := rf.Request
	if r.Version != 18 || r.ReplicaState.ID != 203 || r.ReplicaState.Epoch != 77 || r.MaxWaitMillis != 321 || r.MinBytes != 9 ||
		r.MaxBytes != 65536 || r.SessionID != 0 || r.SessionEpoch != -1 || r.IsolationLevel != 0 {
		t.Fatalf("request %+v", r)
	}
	if len(r.Topics) != 1 || r.Topics[0].TopicID != topicID("orders") || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("topics %+v", r.Topics)
	}
	p := r.Topics[0].Partitions[0]
	if p.Partition != 2 || p.FetchOffset != 3 || p.LastFetchedEpoch != 6 || p.CurrentLeaderEpoch != 8 || p.LogStartOffset != 0 || p.PartitionMaxBytes != 4096 {
		t.Fatalf("partition %+v", p)
	}
	// A delayed partition is left out; with none left there is no request.
	th.m.mu.Lock()
	th.m.delayLocked(tp, time.Now(), "test")
	th.m.mu.Unlock()
	if th.m.BuildFetch(time.Now()) != nil {
		t.Fatal("a delayed partition was fetched")
	}
	if th.m.BuildFetch(time.Now().Add(th.cfg.FetchBackoff+time.Millisecond)) == nil {
		t.Fatal("a partition past its delay was not fetched")
	}
}

// A throttled partition that lags sits out while the quota is exceeded;
// an in-sync one and an unthrottled one keep fetching.
func TestFollowerThrottle(t *testing.T) {
	q := NewQuota(1000)
	th := bareThread(t, Config{Quota: q})
	lagging, inSync, free := TopicPartition{"a", 0}, TopicPartition{"a", 1}, TopicPartition{"b", 0}
	q.SetThrottled(false, lagging, inSync)
	for _, tp := range []TopicPartition{lagging, inSync, free} {
		f := newFollower(t)
		appendRecords(t, f.log, 1, 1)
		th.m.AddPartitions(map[TopicPartition]InitialFetchState{tp: {Leader: 1, LeaderEpoch: 1, TopicID: topicID(tp.Topic), Replica: f, InitOffset: -1}})
	}
	th.m.mu.Lock()
	th.m.parts[lagging].Lag, th.m.parts[lagging].HasLag = 50, true
	th.m.parts[inSync].Lag, th.m.parts[inSync].HasLag = 0, true
	th.m.mu.Unlock()
	now := time.Now()
	if got := fetched(th.m.BuildFetch(now)); len(got) != 3 {
		t.Fatalf("under the quota fetched %v, want all 3", got)
	}
	q.record(now, 100_000) // far over 1000 B/s over the 10 s floor
	got := fetched(th.m.BuildFetch(now))
	if len(got) != 2 || got[lagging] || !got[inSync] || !got[free] {
		t.Fatalf("over the quota fetched %v, want the in-sync and the unthrottled partition only", got)
	}
	q.SetRate(0)
	if got := fetched(th.m.BuildFetch(now)); len(got) != 3 {
		t.Fatalf("with the rate unlimited fetched %v, want all 3", got)
	}
}

func fetched(rf *Fetch) map[TopicPartition]bool {
	out := map[TopicPartition]bool{}
	if rf != nil {
		for _, s := range rf.sent {
			out[s.tp] = true
		}
	}
	return out
}

// The meter measures bytes over its windows, with all but one window as
// the least elapsed time, and forgets windows older than it keeps.
func TestMeterRate(t *testing.T) {
	m := newMeter(11, time.Second)
	t0 := time.Unix(1000, 0)
	m.record(t0, 5000)
	if got := m.rate(t0); got != 500 {
		t.Fatalf("rate after one burst %v, want 5000 B over the 10 s floor = 500", got)
	}
	m.record(t0.Add(1500*time.Millisecond), 5000)
	if got := m.rate(t0.Add(1500 * time.Millisecond)); got != 1000 {
		t.Fatalf("rate %v, want 10000 B over 10 s = 1000", got)
	}
	if got := m.rate(t0.Add(time.Minute)); got != 0 {
		t.Fatalf("rate a minute later %v, want 0", got)
	}
}
