package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

func nodeHWM(p *cluster.Playground, id int32) int64 {
	v := p.View()
	n, _ := v.Node(id)
	return n.HighWatermark
}

// Paused, a 3-controller playground's leader appends (the load's tick
// fires on clock advance) and its Fetch messages wait at the links. Stepped
// one by one, the Fetch responses carry the records and then the new high
// watermark to a follower: the follower's high watermark moves with the
// step of the response that carries it, not before.
func TestRealEngineStepFetchCarriesHighWatermark(t *testing.T) {
	p := openReal(t, 3, 0, "")
	v := waitCond(t, p, "leader")
	var leader int32
	// Every voter follows the leader (an early election may still move
	// it) with a high watermark; settle, paused, makes them equal.
	poll.Until(t, 15*time.Second, "every voter following with a high watermark", func() bool {
		v = p.View()
		if leader = v.LeaderID; leader == view.NoLeader {
			return false
		}
		for _, n := range v.Nodes {
			if n.HighWatermark <= 0 || (n.ID != leader && n.LeaderID != leader) {
				return false
			}
		}
		return true
	}, func() string { return describeNodes(p) })
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	defer p.Do(context.Background(), cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})

	// Step and drop need a paused clock and a match. (Not Vote: an
	// election a loaded machine starts at the pause would send one.)
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActStep, API: "DescribeQuorum"}); err == nil {
		t.Fatal("stepped a DescribeQuorum nobody sent")
	}
	hwm := settle(t, p)

	// The load's tick fires on advance: the leader appends.
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1000, RecordBytes: 100})
	poll.Until(t, 10*time.Second, "the leader's append", func() bool {
		// The load arms its tick on its own goroutine: advance until
		// it fired.
		do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 10})
		v := p.View()
		n, _ := v.Node(leader)
		return n.LogEndOffset > hwm
	})
	// The append waits out controller.quorum.append.linger.ms before it
	// reaches the log and the parked fetches.
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 10})

	// Step the Fetch messages one at a time, oldest first, until one
	// response carries the new high watermark to a follower.
	var carried bool
	var follower int32
	var carries int64
	for step := 0; step < 40 && !carried; step++ {
		next := awaitHeld(t, p, "Fetch")
		if next.Direction == view.MessageResponse && next.To != leader {
			var err error
			follower = next.To
			carries, err = strconv.ParseInt(next.Field("high watermark"), 10, 64)
			if err != nil {
				t.Fatalf("held Fetch response without a high watermark: %+v", next)
			}
			if was := nodeHWM(p, follower); carries > was {
				if was != hwm {
					t.Fatalf("follower %d's high watermark moved to %d before the response carrying it was stepped", follower, was)
				}
				carried = true
			}
		}
		res := do(t, p, cluster.Action{Kind: cluster.ActStep, MessageID: next.ID})
		t.Log(res.Message)
		if got := res.Messages[len(res.Messages)-1]; got.ID != next.ID {
			t.Fatalf("stepped %+v, want message %d", res.Messages, next.ID)
		}
	}
	if !carried {
		t.Fatalf("no Fetch response carried a new high watermark: %s", describeNodes(p))
	}
	poll.Until(t, 10*time.Second, fmt.Sprintf("follower %d's high watermark %d", follower, carries), func() bool {
		return nodeHWM(p, follower) == carries
	}, func() string { return describeNodes(p) })
}

// awaitHeld waits for a message of api at the links and returns the
// oldest.
func awaitHeld(t *testing.T, p *cluster.Playground, api string) view.Message {
	t.Helper()
	var m view.Message
	poll.Until(t, 15*time.Second, "a held "+api, func() bool {
		res := do(t, p, cluster.Action{Kind: cluster.ActMessages, API: api})
		if len(res.Messages) == 0 {
			return false
		}
		m = res.Messages[0]
		return true
	}, func() string {
		return fmt.Sprintf("held: %s\n%s", do(t, p, cluster.Action{Kind: cluster.ActMessages}).Message, describeNodes(p))
	})
	return m
}

// settle lets what was in flight at a pause go, until the links are
// quiet and every node has the leader's high watermark twice in a row
// (a delivered message is handled a moment after its step), and returns
// that high watermark.
func settle(t *testing.T, p *cluster.Playground) int64 {
	t.Helper()
	var v view.View
	quiet := 0
	poll.Until(t, 15*time.Second, "a quiet paused quorum", func() bool {
		if v = p.View(); v.HeldMessages > 0 {
			do(t, p, cluster.Action{Kind: cluster.ActStep, All: true})
			quiet = 0
			return false
		}
		for _, n := range v.Nodes {
			if n.HighWatermark != v.HighWatermark {
				quiet = 0
				return false
			}
		}
		quiet++
		return quiet >= 2
	}, func() string { return describeNodes(p) })
	return v.HighWatermark
}

// Paused, a topic creation waits on its forwarded request at the links;
// the time actions must not wait behind it, or nothing could let it go.
// Stepped, the forwarded CreateTopics reaches the controller and the
// creation ends once the clock moves past the controller's linger.
func TestPausedTopicCreationWaitsForItsMessages(t *testing.T) {
	p := openReal(t, 3, 1, "")
	waitCond(t, p, "leader")
	waitCond(t, p, "unfenced 101")
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	defer p.Do(context.Background(), cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})
	settle(t, p)
	// A mark records the baseline, and names no target.
	do(t, p, cluster.Action{Kind: cluster.ActMark})
	waitCond(t, p, "hwm == baseline")
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActKill, Node: ref("target")}); !errors.Is(err, condition.ErrNoBaseline) || !strings.Contains(err.Error(), "the last mark acted on no node") {
		t.Fatalf("kill target after a clock pause: %v", err)
	}

	created := make(chan error, 1)
	go func() {
		_, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActCreateTopic, Topic: "held", Partitions: 1, ReplicationFactor: 1})
		created <- err
	}()
	forward := awaitHeld(t, p, "CreateTopics")
	if forward.From != 101 || forward.Direction != view.MessageRequest {
		t.Fatalf("held CreateTopics %+v: want broker 101's forwarded request", forward)
	}
	select {
	case err := <-created:
		t.Fatalf("the creation ended while its request was held: %v", err)
	default:
	}
	// Deliver every held message, and move the clock on by a little (the
	// controller's append waits controller.quorum.append.linger.ms), until
	// the creation answers.
	poll.Until(t, 20*time.Second, "the topic creation's answer", func() bool {
		select {
		case err := <-created:
			if err != nil {
				t.Fatalf("create topic: %v", err)
			}
			return true
		default:
		}
		if p.View().HeldMessages > 0 {
			do(t, p, cluster.Action{Kind: cluster.ActStep, All: true})
		} else {
			do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 5})
		}
		return false
	})
}

// Paused just after the leader answered its parked fetches, the quorum's
// Fetch cycle is in flight: responses and requests wait at the links.
// step --until parked delivers them until every follower's and observer's
// Fetch waits at the leader again, and stops there.
func TestStepUntilParkedBringsThePausedQuorumToRest(t *testing.T) {
	p := openReal(t, 3, 1, "")
	waitCond(t, p, "leader")
	waitCond(t, p, "unfenced 101")
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	defer p.Do(context.Background(), cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})

	for _, bad := range []cluster.Action{
		{Kind: cluster.ActStep, Until: "parkd"},
		{Kind: cluster.ActStep, Until: "parked", All: true},
		{Kind: cluster.ActDrop, Until: "parked"},
	} {
		if _, err := p.Do(context.Background(), bad); !errors.Is(err, cluster.ErrBadAction) {
			t.Errorf("%s: %v, want a bad action", bad, err)
		}
	}
	// Past the parked fetches' max wait, the leader answers them empty:
	// the answers wait at the links, so nothing is parked.
	maxWait := p.View().Settings["kraftlab.quorum.fetch.max.wait.ms"]
	ms, err := strconv.ParseInt(maxWait, 10, 64)
	if err != nil {
		t.Fatalf("kraftlab.quorum.fetch.max.wait.ms %q: %v", maxWait, err)
	}
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: ms + 1})
	awaitHeld(t, p, "Fetch")
	if v := p.View(); mustEval(t, "parked", &v) {
		t.Fatal("parked while Fetch messages wait at the links")
	}

	res := do(t, p, cluster.Action{Kind: cluster.ActStep, Until: "parked"})
	t.Log(res.Message)
	if len(res.Messages) == 0 || !strings.Contains(res.Message, "ok: parked: leader") {
		t.Fatalf("step --until parked: %q, want deliveries and the condition", res.Message)
	}
	// At rest, paused: it stays so, and a second step --until delivers nothing.
	v := p.View()
	if !mustEval(t, "parked", &v) {
		t.Fatalf("not parked after step --until parked: %s", describeNodes(p))
	}
	if res := do(t, p, cluster.Action{Kind: cluster.ActStep, Until: "parked"}); len(res.Messages) != 0 {
		t.Fatalf("a quorum at rest: step --until parked delivered %q", res.Message)
	}
}

func mustEval(t *testing.T, cond string, v *view.View) bool {
	t.Helper()
	c, err := condition.Parse(cond)
	if err != nil {
		t.Fatal(err)
	}
	ok, _, err := c.Eval(v)
	if err != nil {
		t.Fatalf("%s: %v", cond, err)
	}
	return ok
}
