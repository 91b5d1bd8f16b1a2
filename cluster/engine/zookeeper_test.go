package engine_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
)

// A zk-mode playground runs brokers on a real ZooKeeper: one wins
// /controller and says what its failover read; a topic created through
// the brokers gets leaders pushed to every broker; a killed controller's
// session expires and another broker takes over, the partitions it led
// moving to live replicas; restarted, it registers again in a new session
// and rejoins the ISRs.
func TestRealEngineZooKeeperMode(t *testing.T) {
	if _, err := zookeeper.Find(); err != nil {
		t.Skip(err)
	}
	cfg, err := cluster.NewConfigMode(cluster.ModeZK, 0, 3, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	p := openWith(t, cfg)
	v := waitCond(t, p, "node controller role Controller")
	if v.ZooKeeper == nil || v.ZooKeeper.State != view.StateRunning || v.ZooKeeper.ControllerEpoch < 1 {
		t.Fatalf("zookeeper view: %+v", v.ZooKeeper)
	}
	first := v.ZooKeeper.ControllerID
	poll.Until(t, 15*time.Second, "ZooKeeper's own count of the sessions and znodes", func() bool {
		z := p.View().ZooKeeper
		return z.Sessions >= 3 && z.Ephemerals >= 4 && z.Znodes > 10 && z.Watches > 0
	})
	for _, n := range v.Nodes {
		if n.Kind != view.KindBroker {
			t.Fatalf("node %d is a %s in zk mode", n.ID, n.Kind)
		}
	}
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b) // registered with the controller
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "z", Partitions: 3, ReplicationFactor: 3})
	v = waitCond(t, p, "isr z-0 size == 3")
	if tp, ok := v.Topic("z"); !ok || len(tp.OnBrokers) != 3 {
		t.Fatalf("topic z on brokers: %+v", tp)
	}

	act(t, p, "kill controller")
	poll.Until(t, 15*time.Second, "another controller done with its failover", func() bool {
		v = p.View()
		z := v.ZooKeeper
		return z.ControllerID != first && z.ControllerID != view.NoLeader && z.LastFailover != nil && z.LastFailover.Epoch == z.ControllerEpoch
	})
	if v.ZooKeeper.ControllerID == first || v.ZooKeeper.ControllerEpoch < 2 || v.ZooKeeper.LastFailover == nil || v.ZooKeeper.LastFailover.Partitions != 3 {
		t.Fatalf("after the kill: %+v %+v", v.ZooKeeper, v.ZooKeeper.LastFailover)
	}
	waitNotLed(t, p, "z", 3, first)
	act(t, p, "start "+itoa(first))
	waitCond(t, p, "isr z-0 size == 3")
	waitCond(t, p, "isr z-1 size == 3")

	// ZooKeeper itself dies and comes back: the sessions wait for it, and
	// the cluster goes on with the same controller.
	act(t, p, "kill zk")
	if v = p.View(); v.ZooKeeper.State != view.StateKilled {
		t.Fatalf("ZooKeeper after kill zk: %s", v.ZooKeeper.State)
	}
	act(t, p, "start zk")
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "after-zk", Partitions: 1, ReplicationFactor: 3})
	waitCond(t, p, "isr after-zk-0 size == 3")
	if v = p.View(); v.ZooKeeper.State != view.StateRunning || v.ZooKeeper.ControllerEpoch != 2 {
		t.Fatalf("after ZooKeeper's restart: %+v", v.ZooKeeper)
	}

	// A topic deleted through /admin/delete_topics leaves every broker.
	do(t, p, cluster.Action{Kind: cluster.ActDeleteTopic, Topic: "after-zk"})
	poll.Until(t, 15*time.Second, "after-zk gone", func() bool {
		v := p.View()
		_, ok := v.Topic("after-zk")
		return !ok
	})

	// A broker cut off from ZooKeeper serves on, but its session expires:
	// the controller takes it out of every ISR. Healed, it registers
	// again in a new session and rejoins.
	var cut int32
	for _, n := range v.Nodes {
		if n.ID != v.ZooKeeper.ControllerID && n.Live() {
			cut = n.ID
		}
	}
	act(t, p, "partition "+itoa(cut)+" zk")
	waitCond(t, p, "isr z-0 size == 2")
	if v = p.View(); !slices.Contains(v.ZooKeeper.CutOff, cut) {
		t.Fatalf("the view does not say %d is cut off: %v", cut, v.ZooKeeper.CutOff)
	}
	act(t, p, "heal "+itoa(cut)+" zk")
	waitCond(t, p, "isr z-0 size == 3")

	// A graceful stop: the controlled shutdown moves the controller's
	// leaderships first, and its session ends at once, so the next
	// controller needs no session timeout.
	second := v.ZooKeeper.ControllerID
	act(t, p, "stop controller")
	poll.Until(t, 15*time.Second, "a third controller", func() bool {
		v = p.View()
		z := v.ZooKeeper
		return z.ControllerID != second && z.ControllerID != view.NoLeader && z.ControllerEpoch > 2
	})
	waitNotLed(t, p, "z", 3, second)
}

func itoa(id int32) string { return strconv.Itoa(int(id)) }

// waitNotLed waits until no partition of topic is led by broker: the
// new controller queued the new leaders before it said it manages, and
// they reach the brokers' metadata, which the view reads, just after.
func waitNotLed(t *testing.T, p *cluster.Playground, topic string, partitions int, broker int32) {
	t.Helper()
	poll.Until(t, 15*time.Second, fmt.Sprintf("no partition of %s led by broker %d", topic, broker), func() bool {
		v := p.View()
		for i := range partitions {
			part, ok := v.Partition(topic, int32(i))
			if !ok || part.Leader == broker || part.Leader == view.NoLeader {
				return false
			}
		}
		return true
	})
}
