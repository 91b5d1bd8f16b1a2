package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// A partition's preferred replica comes back after a failover and the
// leadership returns to it: by an elect-leaders action (ElectLeaders, as
// kafka-leader-election sends it), and, with auto.leader.rebalance.enable,
// by the controller on its own.
func TestRealEnginePreferredLeaderReturns(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto=%v", auto), func(t *testing.T) {
			var sets []string
			if auto {
				sets = []string{"auto.leader.rebalance.enable=true", "leader.imbalance.check.interval.seconds=1"}
			}
			cfg, err := cluster.NewConfig(1, 3, cluster.ProfileFast, sets, "")
			if err != nil {
				t.Fatal(err)
			}
			p := openWith(t, cfg)
			for _, b := range []string{"101", "102", "103"} {
				waitCond(t, p, "unfenced "+b)
			}
			do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "e", Partitions: 1, ReplicationFactor: 3})
			v := waitCond(t, p, "isr e-0 size == 3")
			part, _ := v.Partition("e", 0)
			preferred := part.Replicas[0]
			if part.Leader != preferred {
				t.Fatalf("leader %d is not the preferred replica %d", part.Leader, preferred)
			}
			act(t, p, fmt.Sprintf("kill %d", preferred))
			waitCond(t, p, fmt.Sprintf("partition-leader e-0 != %d", preferred))
			act(t, p, fmt.Sprintf("start %d", preferred))
			waitCond(t, p, "isr e-0 size == 3")
			if !auto {
				res := do(t, p, cluster.Action{Kind: cluster.ActElectLeaders, TopicPartitions: []string{"e-0"}})
				t.Log(res.Message)
			}
			poll.Until(t, 15*time.Second, "the preferred replica leading again", func() bool {
				v := p.View()
				part, _ := v.Partition("e", 0)
				return part.Leader == preferred
			}, func() string { return describeNodes(p) })
		})
	}
}

// A voter left alone tells why it cannot be elected: its pre-vote finds no
// majority, who did not answer, and when it tries again.
func TestRealEngineLostElectionExplainsItself(t *testing.T) {
	p := openReal(t, 3, 0, "")
	v := waitCond(t, p, "leader")
	l, _ := v.Leader()
	var alone int32
	for _, id := range []int32{1, 2, 3} {
		if id != l.ID && alone == 0 {
			alone = id
			continue
		}
		if id != l.ID {
			act(t, p, fmt.Sprintf("kill %d", id))
		}
	}
	act(t, p, fmt.Sprintf("kill %d", l.ID))
	var saw string
	poll.Until(t, 15*time.Second, "the lone voter's lost election in the event log", func() bool {
		for _, ev := range p.EventStream().Since(0) {
			if ev.Kind == cluster.EventElection && ev.Node == alone && strings.Contains(ev.Message, "found no majority") {
				saw = ev.Message
				return true
			}
		}
		return false
	}, func() string { return describeNodes(p) })
	if !strings.Contains(saw, fmt.Sprintf("granted by %d (itself)", alone)) || !strings.Contains(saw, "no answer from") ||
		!strings.Contains(saw, "again") {
		t.Fatalf("lost election told as %q", saw)
	}
	t.Log(saw)
}
