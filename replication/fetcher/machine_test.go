package fetcher

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// A Machine is stepped by its caller alone: each fetch is built, answered
// and applied with the time passed in, no goroutine, send or clock. A
// failed request backs the partition off for exactly the fetch backoff on
// the caller's clock, and an answer to a fetch made before the partition
// was re-added in a new epoch is not applied.
func TestMachineStepsWithoutGoroutines(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	l := newTestLeader(1)
	l.lead(tp, 1, openLog(t))
	l.produce(t, tp, 7)
	f := newFollower(t)
	m := NewMachine(Config{BrokerID: 2}, 0, 1)
	now := time.Unix(1000, 0)
	add := func(epoch int32) {
		m.AddPartitions(map[TopicPartition]InitialFetchState{tp: {Leader: 1, LeaderEpoch: epoch, TopicID: topicID(tp.Topic), Replica: f, InitOffset: -1}})
	}
	add(1)
	round := func() Next {
		t.Helper()
		m.MaybeTruncate()
		fetch := m.BuildFetch(now)
		if fetch == nil {
			t.Fatal("nothing to fetch")
		}
		l.mu.Lock()
		resp, _, _ := l.answer(fetch.Request)
		l.mu.Unlock()
		return m.HandleFetchResponse(fetch, resp, nil, now)
	}
	if next := round(); len(next.Flush) != 1 || next.Flush[0].Replica != f {
		t.Fatalf("after the first answer flush %+v, want the follower", next.Flush)
	}
	round() // brings the high watermark
	if !bytes.Equal(f.bytes(t), leaderBytes(t, l, tp)) || f.highWatermark() != 7 {
		t.Fatalf("follower at high watermark %d, want the leader's 7 records", f.highWatermark())
	}

	fetch := m.BuildFetch(now)
	m.HandleFetchResponse(fetch, nil, errors.New("timed out"), now)
	if m.BuildFetch(now) != nil {
		t.Fatal("a partition whose request failed is fetched again before its backoff")
	}
	if got := m.IdleWait(now); got != DefaultReplicaFetchBackoff {
		t.Fatalf("idle wait %v, want the fetch backoff %v", got, DefaultReplicaFetchBackoff)
	}
	now = now.Add(DefaultReplicaFetchBackoff)
	stale := m.BuildFetch(now)
	if stale == nil {
		t.Fatal("nothing to fetch after the backoff")
	}
	add(2)
	l.produce(t, tp, 3)
	l.mu.Lock()
	resp, _, _ := l.answer(stale.Request)
	l.mu.Unlock()
	if next := m.HandleFetchResponse(stale, resp, nil, now); len(next.Flush) != 0 || f.LogEndOffset() != 7 {
		t.Fatalf("an answer to epoch 1's fetch was applied in epoch 2: flush %+v, log end %d", next.Flush, f.LogEndOffset())
	}
}
