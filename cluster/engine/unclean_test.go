package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// An unclean leader election on the real engine, allowed by the cluster
// default from --set: the follower is cut off from its leader (so it
// leaves the ISR but keeps heartbeating), then the leader is killed and
// fenced; with no ISR member alive the controller elects the follower,
// outside the ISR, and the event log says so.
func TestRealEngineUncleanLeaderElection(t *testing.T) {
	cfg, err := cluster.NewConfig(1, 2, cluster.ProfileFast, []string{"unclean.leader.election.enable=true"}, "")
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
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "u", Partitions: 1, ReplicationFactor: 2})
	v := waitCond(t, p, "isr u-0 size >= 2")
	part, _ := v.Partition("u", 0)
	leader := part.Leader
	follower := part.Replicas[0]
	if follower == leader {
		follower = part.Replicas[1]
	}
	do(t, p, cluster.Action{Kind: cluster.ActPartition, Node: ref(fmt.Sprint(follower)), Peer: ref(fmt.Sprint(leader))})
	poll.Until(t, 15*time.Second, "the cut-off follower out of the ISR", func() bool {
		v := p.View()
		part, ok := v.Partition("u", 0)
		return ok && slices.Equal(part.Isr, []int32{leader})
	})
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref(fmt.Sprint(leader))})
	waitCond(t, p, fmt.Sprintf("fenced %d", leader))
	poll.Until(t, 15*time.Second, "the follower elected unclean", func() bool {
		v := p.View()
		part, ok := v.Partition("u", 0)
		return ok && part.Leader == follower && slices.Equal(part.Isr, []int32{follower})
	})
	// The controller tells its event when the election's batch commits,
	// which the brokers may see first.
	want := fmt.Sprintf("u-0: UNCLEAN leader election: no member of isr [%d] alive, so broker %d, outside it, leads with isr [%d]", leader, follower, follower)
	var saw []string
	poll.Until(t, 15*time.Second, "the unclean election in the event log", func() bool {
		saw = nil
		for ev, err := range p.Events(context.Background(), 0, false) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == cluster.EventPartitionChange && strings.Contains(ev.Message, want) {
				return true
			}
			if strings.Contains(ev.Message, "u-0") {
				saw = append(saw, ev.Message)
			}
		}
		return false
	}, func() string { return "u-0's events: " + strings.Join(saw, "; ") })
}
