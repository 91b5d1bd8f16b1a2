package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// openMode starts three controllers under the fast profile, replicating
// their metadata log by pull (Kafka's) or push.
func openMode(t *testing.T, mode string) *cluster.Playground {
	t.Helper()
	cfg, err := cluster.NewConfig(3, 0, cluster.ProfileFast, []string{"kraftlab.quorum.replication=" + mode}, "")
	if err != nil {
		t.Fatal(err)
	}
	return openWith(t, cfg)
}

// diskDelay sets node id's disk delay.
func diskDelay(t *testing.T, p *cluster.Playground, id int32, d time.Duration) cluster.Result {
	t.Helper()
	return do(t, p, cluster.Action{Kind: cluster.ActDisk, Node: condition.NodeID(id), DelayMs: d.Milliseconds()})
}

// aFollower is a voter of v that does not lead: node 1 or node 2.
func aFollower(v view.View) int32 {
	if v.Nodes[0].ID == v.LeaderID {
		return v.Nodes[1].ID
	}
	return v.Nodes[0].ID
}

// nodeOf is node id of v, which the test knows exists.
func nodeOf(v *view.View, id int32) *view.Node {
	n, _ := v.Node(id)
	return n
}

// A follower with a slow disk lags while the leader and the other
// follower go on committing; with its disk normal again it catches up.
// Its view and the event stream say what its disk does.
func TestSlowDiskFollowerLagsAndCatchesUp(t *testing.T) {
	for _, mode := range []string{"pull", "push"} {
		t.Run(mode, func(t *testing.T) {
			p := openMode(t, mode)
			v := waitCond(t, p, "caught-up")
			slow := aFollower(v)
			do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1000, RecordBytes: 100})
			waitView(t, p, "the load committing", func(v *view.View) bool { return v.Load.Committed >= 100 })

			res := diskDelay(t, p, slow, 200*time.Millisecond)
			if !strings.Contains(res.Message, "200ms longer") {
				t.Errorf("disk message %q", res.Message)
			}
			v = p.View()
			if n, _ := v.Node(slow); n.DiskDelayMs != 200 {
				t.Errorf("node %d's view says disk delay %d ms, want 200", slow, n.DiskDelayMs)
			}
			hwm := v.HighWatermark
			// Commit goes on through the leader and the other follower,
			// while the slow one falls behind the leader's log.
			waitView(t, p, fmt.Sprintf("node %d lagging by 100 while the high watermark grows by 500", slow), func(v *view.View) bool {
				n, ok := v.Node(slow)
				return ok && v.HighWatermark >= hwm+500 && v.HighWatermark-n.LogEndOffset >= 100
			})

			// A push leader says where it stands with each follower; a
			// pull leader has nothing of the kind.
			v = p.View()
			if l, ok := v.Leader(); ok {
				for _, r := range l.Replicas {
					if r.NodeID == l.ID {
						continue
					}
					if (mode == "push") != (r.Push != "") {
						t.Errorf("%s: the leader's replica %d says push %q", mode, r.NodeID, r.Push)
					}
				}
			}

			diskDelay(t, p, slow, 0)
			if v := p.View(); nodeOf(&v, slow).DiskDelayMs != 0 {
				t.Errorf("node %d's view says disk delay %d ms after delay 0", slow, nodeOf(&v, slow).DiskDelayMs)
			}
			target := p.View().HighWatermark
			waitView(t, p, fmt.Sprintf("node %d caught up to offset %d", slow, target), func(v *view.View) bool {
				n, ok := v.Node(slow)
				return ok && n.LogEndOffset >= target
			})
			var saw []string
			for _, ev := range p.EventStream().Since(0) {
				if ev.Kind == cluster.EventDisk && ev.Node == slow {
					saw = append(saw, ev.Message)
				}
			}
			if len(saw) != 2 || !strings.Contains(saw[1], "normal again") {
				t.Errorf("disk events of node %d: %q, want slow then normal again", slow, saw)
			}
		})
	}
}

// A kill does not wait for a write held by a slow disk, nor does closing
// the playground while the cluster clock is paused; the delay stays with
// the node across the restart, as its hardware.
func TestSlowDiskDoesNotHoldAKill(t *testing.T) {
	p := openReal(t, 3, 0, "")
	v := waitCond(t, p, "caught-up")
	slow := aFollower(v)
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 200, RecordBytes: 100})
	diskDelay(t, p, slow, view.MaxDiskDelay)
	hwm := p.View().HighWatermark
	// The slow node's loop now sits in a write of ten seconds.
	waitView(t, p, "the slow node stuck behind", func(v *view.View) bool {
		n, _ := v.Node(slow)
		return v.HighWatermark >= hwm+100 && n.LogEndOffset < hwm+100
	})
	start := time.Now()
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(slow)})
	if took := time.Since(start); took >= view.MaxDiskDelay/2 {
		t.Errorf("the kill took %v: it waited for the slow disk", took)
	}
	do(t, p, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(slow)})
	if v := p.View(); nodeOf(&v, slow).DiskDelayMs != view.MaxDiskDelay.Milliseconds() {
		t.Errorf("after a restart node %d's disk delay is %d ms, want it kept", slow, nodeOf(&v, slow).DiskDelayMs)
	}
	// Bad delays are refused with the range.
	for _, ms := range []int64{-1, view.MaxDiskDelay.Milliseconds() + 1} {
		_, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActDisk, Node: condition.NodeID(slow), DelayMs: ms})
		if !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), "must be between 0 and 10s") {
			t.Errorf("disk delay %d ms: %v", ms, err)
		}
	}
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActDisk, Node: condition.NodeID(42), DelayMs: 10}); !errors.Is(err, condition.ErrUnknownNode) {
		t.Errorf("disk of an unknown node: %v", err)
	}

	// Paused, the restarted node's first writes wait on a clock that does
	// not move; closing must not.
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(view.MaxDiskDelay / 2):
		t.Fatal("closing the playground waited for the slow disk or the paused clock")
	}
}

// A push follower whose disk is slower than the leader's pushes come
// takes many queued AppendEntries in one pass of its loop, a write each.
// Each counts as heard from the leader when it is handled, not when the
// pass began: the follower stays Follower however long the pass, and
// never stands for election against a leader it keeps hearing from.
func TestSlowPushFollowerKeepsFollowing(t *testing.T) {
	cfg, err := cluster.NewConfig(3, 0, cluster.ProfileFast, []string{"kraftlab.quorum.replication=push", "controller.quorum.fetch.timeout.ms=1000", "controller.quorum.request.timeout.ms=2000"}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := openWith(t, cfg)
	v := waitCond(t, p, "caught-up")
	slow := aFollower(v)
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1000, RecordBytes: 100})
	diskDelay(t, p, slow, 50*time.Millisecond)
	hwm := p.View().HighWatermark
	// The leader waits 2 s for an answer before it probes again. Pushes
	// come every 10 ms and take the follower 50 ms or more each:
	// each pass takes what queued during the last, five times as many,
	// and passes run far over the 1 s fetch timeout before
	// the load committed 4,000 more records (at least 4 s).
	waitView(t, p, fmt.Sprintf("node %d lagging while 4000 more commit", slow), func(v *view.View) bool {
		n, ok := v.Node(slow)
		return ok && v.HighWatermark >= hwm+4000 && v.HighWatermark-n.LogEndOffset >= 500
	})
	diskDelay(t, p, slow, 0)
	var left []string
	following := false
	for _, ev := range p.EventStream().Since(0) {
		if ev.Kind != cluster.EventRoleChange || ev.Node != slow {
			continue
		}
		from, _, _ := strings.Cut(ev.Message, " -> ")
		if following && strings.HasPrefix(from, "Follower") {
			left = append(left, ev.Message)
		}
		following = following || strings.Contains(ev.Message, "-> Follower")
	}
	if len(left) > 0 {
		t.Errorf("the slow follower %d left its role: %q", slow, left)
	}
}
