package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

func openELR(t *testing.T, brokers int, overrides ...string) *cluster.Playground {
	t.Helper()
	cfg, err := cluster.NewConfig(1, brokers, cluster.ProfileFast, overrides, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	for i := range brokers {
		waitCond(t, p, fmt.Sprintf("unfenced %d", cluster.FirstBrokerID+i))
	}
	return p
}

// waitPartition polls topic-0 of the view until ok holds.
func waitPartition(t *testing.T, p *cluster.Playground, topic, what string, ok func(*view.Partition) bool) view.Partition {
	t.Helper()
	var last view.Partition
	poll.Until(t, 20*time.Second, what, func() bool {
		v := p.View()
		part, found := v.Partition(topic, 0)
		if !found {
			return false
		}
		last = *part
		return ok(part)
	}, func() string { return "last saw " + last.Summary() })
	return last
}

// ELR on the real engine, as Kafka 4.4 runs by default: a topic with
// min.insync.replicas=2 over two brokers. The follower is cut off from
// its leader, so the ISR shrinks below min ISR and the follower moves to
// the ELR (it keeps heartbeating). The leader, the last ISR member, is
// killed and fenced: the ISR empties into the ELR, and the follower, an
// eligible leader that is alive, is elected from it, with the ISR it
// alone and the fenced leader left in the ELR.
func TestRealEngineElectionFromElrAfterTheLastIsrMemberIsFenced(t *testing.T) {
	p := openELR(t, 2)
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "e", Partitions: 1, ReplicationFactor: 2,
		Configs: map[string]string{"min.insync.replicas": "2"}})
	part := waitPartition(t, p, "e", "both replicas in the ISR", func(p *view.Partition) bool { return len(p.Isr) == 2 })
	leader := part.Leader
	follower := part.Replicas[0]
	if follower == leader {
		follower = part.Replicas[1]
	}
	do(t, p, cluster.Action{Kind: cluster.ActPartition, Node: ref(fmt.Sprint(follower)), Peer: ref(fmt.Sprint(leader))})
	waitPartition(t, p, "e", "the cut-off follower out of the ISR, into the ELR", func(p *view.Partition) bool {
		return slices.Equal(p.Isr, []int32{leader}) && slices.Equal(p.Elr, []int32{follower})
	})
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref(fmt.Sprint(leader))})
	waitCond(t, p, fmt.Sprintf("fenced %d", leader))
	waitPartition(t, p, "e", "the follower elected from the ELR", func(p *view.Partition) bool {
		return p.Leader == follower && slices.Equal(p.Isr, []int32{follower}) && slices.Equal(p.Elr, []int32{leader})
	})
	waitElections(t, p, 1, 0)
}

// waitElections waits until the active controller counted fromElr
// elections from an ELR and unclean unclean ones.
func waitElections(t *testing.T, p *cluster.Playground, fromElr, unclean int64) {
	t.Helper()
	var saw string
	poll.Until(t, 10*time.Second, fmt.Sprintf("%d elections from the ELR, %d unclean", fromElr, unclean), func() bool {
		v := p.View()
		for _, n := range v.Nodes {
			if m := n.ControllerMetrics; m != nil && m.ActiveControllerCount == 1 {
				saw = fmt.Sprintf("%d from the ELR, %d unclean", m.ElectionFromEligibleLeaderReplicasPerSec, m.UncleanLeaderElectionsPerSec)
				return m.ElectionFromEligibleLeaderReplicasPerSec == fromElr && m.UncleanLeaderElectionsPerSec == unclean
			}
		}
		return false
	}, func() string { return "saw " + saw })
}

// A clean shutdown keeps the ELR: the follower is killed and fenced, then
// the leader, the last ISR member, is stopped gracefully. Its controlled
// shutdown empties the ISR into the ELR and leaves the partition
// leaderless, its last known leader the stopped broker. Started again, it
// registers with the epoch from its clean shutdown file, keeps its ELR
// place, and is elected from the ELR once unfenced: not as the last known
// leader, uncleanly, as after a crash.
func TestRealEngineCleanShutdownKeepsTheElr(t *testing.T) {
	p := openELR(t, 2)
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "c", Partitions: 1, ReplicationFactor: 2})
	part := waitPartition(t, p, "c", "both replicas in the ISR", func(p *view.Partition) bool { return len(p.Isr) == 2 })
	leader := part.Leader
	follower := part.Replicas[0]
	if follower == leader {
		follower = part.Replicas[1]
	}
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: ref(fmt.Sprint(follower))})
	waitPartition(t, p, "c", "the killed follower out of the ISR", func(p *view.Partition) bool {
		return slices.Equal(p.Isr, []int32{leader}) && len(p.Elr) == 0
	})
	do(t, p, cluster.Action{Kind: cluster.ActStop, Node: ref(fmt.Sprint(leader))})
	waitPartition(t, p, "c", "the stopped leader in the ELR, the partition leaderless", func(p *view.Partition) bool {
		return p.Leader == view.NoLeader && len(p.Isr) == 0 && slices.Equal(p.Elr, []int32{leader}) &&
			slices.Equal(p.LastKnownElr, []int32{leader})
	})
	do(t, p, cluster.Action{Kind: cluster.ActStart, Node: ref(fmt.Sprint(leader))})
	waitPartition(t, p, "c", "the restarted broker elected from the ELR", func(p *view.Partition) bool {
		return p.Leader == leader && slices.Equal(p.Isr, []int32{leader}) && len(p.Elr) == 0 && len(p.LastKnownElr) == 0
	})
	waitElections(t, p, 1, 0)
}
