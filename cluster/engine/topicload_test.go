package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// The topic load produces through the brokers with a real client: the
// partitions' high watermarks move by what it says it got acknowledged,
// every follower's fetcher keeps up, and stopping it stops them. Two
// topics load at once, and stopping one leaves the other running.
func TestRealEngineTopicLoad(t *testing.T) {
	p := openReal(t, 1, 3, "")
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 100, Topic: "missing"}); err == nil || !strings.Contains(err.Error(), `no topic "missing"`) {
		t.Fatalf("load of a missing topic: %v", err)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "events", Partitions: 3, ReplicationFactor: 3})
	waitCond(t, p, "topic events on all brokers")
	res := do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1000, RecordBytes: 200, Topic: "events"})
	if !strings.Contains(res.Message, "topic load started: 1000 rec/s of 200 B, produced to topic events") {
		t.Fatalf("start: %q", res.Message)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "audit", Partitions: 1, ReplicationFactor: 3})
	waitCond(t, p, "topic audit on all brokers")
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 50, Topic: "audit", StartedBy: view.OriginScreen})
	acked := func(topic string) int64 {
		v := p.View()
		l, _ := v.TopicLoad(topic)
		return l.Acked
	}
	poll.Until(t, 15*time.Second, "300 records acknowledged", func() bool { return acked("events") >= 300 })
	res = do(t, p, cluster.Action{Kind: cluster.ActLoad, Topic: "events"})
	if !strings.Contains(res.Message, "topic load of events stopped") {
		t.Fatalf("stop: %q", res.Message)
	}
	v := p.View()
	if l, on := v.TopicLoad("events"); on {
		t.Fatalf("still on after stop: %+v", l)
	}
	audit, on := v.TopicLoad("audit")
	if !on || audit.RecordsPerSec != 50 || audit.StartedBy != view.OriginScreen || len(v.TopicLoads) != 1 {
		t.Fatalf("stopping events touched audit's load: %+v", v.TopicLoads)
	}
	poll.Until(t, 15*time.Second, "audit's load acknowledged more after events' stopped", func() bool { return acked("audit") > audit.Acked })
	do(t, p, cluster.Action{Kind: cluster.ActLoad, Topic: "audit"})
	if v := p.View(); len(v.TopicLoads) != 0 {
		t.Fatalf("loads after both stopped: %+v", v.TopicLoads)
	}
	var sum int64
	for _, part := range []string{"events-0", "events-1", "events-2"} {
		w := waitCond(t, p, "in-sync "+part)
		pp, _ := w.Partition("events", int32(part[len(part)-1]-'0'))
		if pp.HighWatermark <= 0 {
			t.Errorf("%s: high watermark %d: the round-robin load skipped it", part, pp.HighWatermark)
		}
		sum += pp.HighWatermark
	}
	if sum < 300 {
		t.Errorf("high watermarks add up to %d, below the 300 acknowledged", sum)
	}
}
