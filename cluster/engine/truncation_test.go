package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// An old partition leader that comes back truncates what only it had, and
// the event log says so, as Kafka's fetcher logs each truncation
// ("Truncating partition ..." in AbstractFetcherThread): the leader is
// isolated, takes acks=1 records no follower fetches, is fenced and
// replaced; healed, its fetcher finds the diverging epoch and cuts its
// log back to the new leader's.
func TestRealEngineReplicaTruncationEvent(t *testing.T) {
	cfg, err := cluster.NewConfig(1, 2, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	for _, b := range []string{"101", "102"} {
		waitCond(t, p, "unfenced "+b)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "tr", Partitions: 1, ReplicationFactor: 2})
	v := waitCond(t, p, "in-sync tr-0")
	part, _ := v.Partition("tr", 0)
	old := part.Leader
	var addr string
	for _, n := range v.Nodes {
		if n.ID == old {
			addr = n.Listener
		}
	}
	do(t, p, cluster.Action{Kind: cluster.ActIsolate, Node: ref(fmt.Sprint(old))})
	for range 3 {
		if code := produceTo(t, addr, "tr", 1); code != 0 {
			t.Fatalf("acks=1 to the isolated leader %d: error %d", old, code)
		}
	}
	waitCond(t, p, fmt.Sprintf("fenced %d", old))
	waitCond(t, p, fmt.Sprintf("partition-leader tr-0 != %d", old))
	do(t, p, cluster.Action{Kind: cluster.ActHeal})
	waitCond(t, p, fmt.Sprintf("truncations tr-0 %d >= 1", old))

	want := "truncated its replica of tr-0 from log end 3 to 0, where it agrees with leader"
	var saw []string
	poll.Until(t, 15*time.Second, "the truncation in the event log", func() bool {
		saw = nil
		for _, ev := range p.EventStream().Since(0) {
			if ev.Node != old {
				continue
			}
			if ev.Kind == cluster.EventTruncation && strings.Contains(ev.Message, want) && strings.Contains(ev.Message, "it drops 3 records the leader's log does not have") {
				return true
			}
			saw = append(saw, string(ev.Kind)+": "+ev.Message)
		}
		return false
	}, func() string { return fmt.Sprintf("broker %d's events: %s", old, strings.Join(saw, "; ")) })
}
