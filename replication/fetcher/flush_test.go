package fetcher

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A follower's fetch offset is its acknowledgement, so no fetch may name
// an offset past what the follower's log made durable: with a log that
// flushes only when asked, every fetch the leader sees is at or below the
// follower's flushed offset, over several partitions of one thread whose
// flushes run side by side, and the followers still catch up.
func TestFetchOffsetAcknowledgesOnlyFlushedRecords(t *testing.T) {
	l := newTestLeader(1)
	followers := map[TopicPartition]*followerLog{}
	byPartition := map[int32]*followerLog{}
	for p := range int32(3) {
		tp := TopicPartition{"orders", p}
		l.lead(tp, 1, openLog(t))
		l.produce(t, tp, 20)
		followers[tp] = newFollower(t)
		byPartition[p] = followers[tp]
	}
	var mu sync.Mutex
	var violations []string
	var checked int
	net := network{1: l}
	send := func(ctx context.Context, to int32, req kmsg.Request) (kmsg.Response, error) {
		if f, ok := req.(*kmsg.FetchRequest); ok {
			mu.Lock()
			for _, rt := range f.Topics {
				for _, rp := range rt.Partitions {
					checked++
					if flushed := byPartition[rp.Partition].log.LastFlushedOffset(); rp.FetchOffset > flushed {
						violations = append(violations, fmt.Sprintf("partition %d fetched at %d, flushed to %d", rp.Partition, rp.FetchOffset, flushed))
					}
				}
			}
			mu.Unlock()
		}
		return net.send(ctx, to, req)
	}
	m, err := NewManager(Config{BrokerID: 201, Send: send, FetchWaitMax: 200 * time.Millisecond, FetchBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	addAll(m, 1, 1, followers)
	for tp, f := range followers {
		eventually(t, tp.String()+" caught up", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
	}
	for round := range 5 {
		for tp := range followers {
			l.produce(t, tp, 3+round)
		}
		for tp, f := range followers {
			eventually(t, tp.String()+" caught up again", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatalf("%d of %d fetched partitions acknowledged unflushed records, the first: %s", len(violations), checked, violations[0])
	}
	if checked == 0 {
		t.Fatal("no fetch was seen")
	}
}
