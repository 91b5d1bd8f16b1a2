package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// pausedFor watches a paused playground for d of wall time, calling check
// on a view every few milliseconds; check fails the test on what must not
// happen while paused.
func pausedFor(t *testing.T, p *cluster.Playground, d time.Duration, check func(v view.View)) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		check(p.View())
		time.Sleep(20 * time.Millisecond)
	}
}

// quorumState is what must not move while the clock is paused: each
// node's role, epoch and leader, each broker's registration and fencing,
// the partition's leader, epoch and ISR.
func quorumState(v view.View, topic string) string {
	var b strings.Builder
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "node %d %s %s epoch %d leader %d", n.ID, n.State, n.Role, n.Epoch, n.LeaderID)
		if br := n.Broker; br != nil {
			fmt.Fprintf(&b, " broker %s epoch %d fenced %v", br.State, br.BrokerEpoch, br.Fenced)
		}
		b.WriteString("\n")
	}
	if topic != "" {
		if part, ok := v.Partition(topic, 0); ok {
			fmt.Fprintf(&b, "%s-0 leader %d epoch %d isr %v\n", topic, part.Leader, part.LeaderEpoch, part.Isr)
		}
	}
	return b.String()
}

// timedOut are the events that only a timeout makes.
var timedOut = []cluster.EventKind{cluster.EventElection, cluster.EventBrokerFenced, cluster.EventPartitionChange}

// cpuTime is the process's user and system time.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A playground under topic load is paused for longer than every timeout of
// the fast profile: nothing times out (no election, no fencing, no ISR
// shrink, no load acknowledged, since every message waits at the links),
// the views still answer, and on resume the run goes on where it stood.
func TestRealEngineClockPauseTimesNothingOut(t *testing.T) {
	p := openReal(t, 3, 3, "")
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b)
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "held", Partitions: 1, ReplicationFactor: 3})
	waitCond(t, p, "isr held-0 size == 3")
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 200, RecordBytes: 100, Topic: "held"})
	poll.Until(t, 15*time.Second, "100 records acknowledged", func() bool { return heldLoad(p.View()).Acked >= 100 })
	runCPU, runWall := cpuTime(t), time.Now()
	for time.Since(runWall) < time.Second {
		p.View()
		time.Sleep(20 * time.Millisecond)
	}
	runCPU, ranFor := cpuTime(t)-runCPU, time.Since(runWall)

	res := do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	if !strings.Contains(res.Message, "paused the cluster clock") {
		t.Fatalf("pause: %q", res.Message)
	}
	// What was in flight at the pause may still land: a handler runs
	// while paused, and a response read before it goes on. Then nothing.
	var before view.View
	var stable time.Time
	poll.Until(t, 5*time.Second, "the paused playground settled", func() bool {
		v := p.View()
		if quorumState(v, "held") != quorumState(before, "held") || heldLoad(v).Acked != heldLoad(before).Acked {
			stable = time.Now()
		}
		before = v
		return time.Since(stable) > 300*time.Millisecond
	})
	events := len(p.EventStream().Since(0))
	// Every timeout that matters in the fast profile is at most
	// replica.lag.time.max.ms (1.5 s): wait 3 s longer.
	cpu0, wall0 := cpuTime(t), time.Now()
	lag := before.Clock.LagMs
	pausedFor(t, p, 4500*time.Millisecond, func(v view.View) {
		if got, want := quorumState(v, "held"), quorumState(before, "held"); got != want {
			t.Fatalf("the cluster moved while paused:\n%s\nwas:\n%s", got, want)
		}
		if heldLoad(v).Acked != heldLoad(before).Acked || heldLoad(v).Failed != heldLoad(before).Failed {
			t.Fatalf("load went on while paused: %+v, was %+v", heldLoad(v), heldLoad(before))
		}
		// Views are made afresh: the lag behind the wall grows, cluster
		// time stands.
		if !v.Clock.Paused || v.Clock.LagMs < lag || v.Timestamp != before.Timestamp {
			t.Fatalf("view while paused: clock %+v, timestamp %d, was %d with lag %d", v.Clock, v.Timestamp, before.Timestamp, lag)
		}
		lag = v.Clock.LagMs
	})
	cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
	t.Logf("CPU of the process: %v in %v running under load, %v in %v paused (views polled every 20ms, the kgo client's own timers)", runCPU, ranFor, cpu, wall)
	// Paused, nothing of the cluster wakes: a bound far above what the
	// views and the client cost, far below a goroutine that spins.
	if cpu > wall/4 {
		t.Errorf("the process used %v of CPU in %v paused", cpu, wall)
	}
	if v := p.View(); v.Clock.LagMs < 4000 {
		t.Fatalf("views did not move on while paused: clock %+v", v.Clock)
	}
	for _, ev := range p.EventStream().Since(0)[events:] {
		if slices.Contains(timedOut, ev.Kind) {
			t.Fatalf("while paused: %+v", ev)
		}
	}
	show := do(t, p, cluster.Action{Kind: cluster.ActClock})
	if !strings.Contains(show.Message, "paused since") || !strings.Contains(show.Message, "behind the wall") {
		t.Fatalf("clock: %q", show.Message)
	}

	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})
	acked := heldLoad(before).Acked
	poll.Until(t, 15*time.Second, "the load going on after the resume", func() bool { return heldLoad(p.View()).Acked >= acked+100 }, func() string { return describeNodes(p) })
	v := p.View()
	if v.LeaderID != before.LeaderID || v.LeaderEpoch != before.LeaderEpoch {
		t.Fatalf("leader %d epoch %d after the resume, %d epoch %d before", v.LeaderID, v.LeaderEpoch, before.LeaderID, before.LeaderEpoch)
	}
	was, _ := before.Partition("held", 0)
	now, _ := v.Partition("held", 0)
	if now.Leader != was.Leader || now.LeaderEpoch != was.LeaderEpoch || len(now.Isr) != 3 {
		t.Fatalf("held-0 after the resume: %+v, before %+v", now, was)
	}
	if heldLoad(v).Failed != 0 {
		t.Fatalf("load failed records: %+v", heldLoad(v))
	}
	for _, ev := range p.EventStream().Since(0)[events:] {
		if ev.Kind == cluster.EventElection || ev.Kind == cluster.EventBrokerFenced {
			t.Fatalf("after the resume: %+v", ev)
		}
	}
}

// With the leader killed while the clock is paused, no election comes
// however long the wall waits; advancing the clock past the fetch timeout
// starts one (the followers' fetch timers fire), and once the clock runs
// again, the held votes go through and a new leader is elected.
func TestRealEngineClockAdvanceStartsElection(t *testing.T) {
	p := openReal(t, 3, 0, "")
	v := waitCond(t, p, "leader")
	old := v.LeaderID
	poll.Until(t, 15*time.Second, "both followers following", func() bool {
		v := p.View()
		for _, n := range v.Nodes {
			if n.ID != old && (n.Role != view.RoleFollower || n.LeaderID != old) {
				return false
			}
		}
		return v.LeaderID == old
	}, func() string { return describeNodes(p) })
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	epoch := p.View().LeaderEpoch
	act(t, p, fmt.Sprintf("kill %d", old))
	// The fast profile's fetch timeout is 200 ms; the wall waits 1 s.
	pausedFor(t, p, time.Second, func(v view.View) {
		for _, n := range v.Nodes {
			if n.ID != old && (n.Role != view.RoleFollower || n.Epoch != epoch) {
				t.Fatalf("node %d is %s in epoch %d while paused", n.ID, n.Role, n.Epoch)
			}
		}
	})
	res := do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 250})
	if !strings.Contains(res.Message, "advanced the cluster clock by 250ms") {
		t.Fatalf("advance: %q", res.Message)
	}
	poll.Until(t, 15*time.Second, "a voter's fetch timeout firing while paused", func() bool {
		for _, n := range p.View().Nodes {
			if n.ID != old && (n.Role == view.RoleProspective || n.Role == view.RoleCandidate) {
				return true
			}
		}
		return false
	}, func() string { return describeNodes(p) })
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})
	poll.Until(t, 15*time.Second, "a new leader", func() bool {
		v := p.View()
		return v.LeaderID != view.NoLeader && v.LeaderID != old && v.LeaderEpoch > epoch
	}, func() string { return describeNodes(p) })
}

// Advancing works only while paused, and bad clock actions are refused
// with a clear error that changes nothing.
func TestRealEngineClockRefusals(t *testing.T) {
	p := openReal(t, 1, 0, "")
	waitCond(t, p, "leader")
	for _, a := range []cluster.Action{
		{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 100},
		{Kind: cluster.ActClock, Clock: cluster.ClockSlow, Slow: 0},
		{Kind: cluster.ActClock, Clock: cluster.ClockSlow, Slow: 100000},
		{Kind: cluster.ActClock, Clock: "rewind"},
		{Kind: cluster.ActClock, Clock: cluster.ClockPause, Slow: 3},
	} {
		if _, err := p.Do(t.Context(), a); err == nil {
			t.Errorf("%s accepted", a)
		}
	}
	if v := p.View(); v.Clock.Paused || v.Clock.Slow != 1 {
		t.Fatalf("refusals changed the clock: %+v", v.Clock)
	}
	res := do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockSlow, Slow: 10})
	if !strings.Contains(res.Message, "slow ×10") || p.View().Clock.Slow != 10 {
		t.Fatalf("slow: %q", res.Message)
	}
	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockSlow, Slow: 1})
	waitCond(t, p, "leader")
}

// heldLoad is the load of topic held, zero when none runs.
func heldLoad(v view.View) view.TopicLoad {
	l, _ := v.TopicLoad("held")
	return l
}
