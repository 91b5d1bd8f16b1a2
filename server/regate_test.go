package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
)

// A partition leader's broker killed and started again at once, while the
// controller still counts its previous incarnation's session, leads
// nothing in the leader epoch its previous incarnation led in: the
// controller refuses its registration until that session expires, fences
// the previous incarnation and moves its leaderships, and the restarted
// broker's ReplicaManager applies no metadata before it holds this
// incarnation's registration. Led at once in the old epoch, its log (cut
// by a kill to what it flushed) could take records at offsets a follower
// holds others at. Afterwards no acknowledged record is lost and every
// replica ends at the same offsets.
func TestRestartedBrokerLeadsNothingBeforeItRegisters(t *testing.T) {
	brokers := []int32{101, 102, 103}
	ts := startClusterWith(t, 600*time.Millisecond, brokers, func(c *Config) {
		// Long enough that the restart comes within the session.
		c.Settings.BrokerSessionTimeout = 3 * time.Second
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
		c.Settings.ReplicaFetchWaitMax = 100 * time.Millisecond
	})
	for _, id := range brokers {
		waitFor(t, fmt.Sprintf("broker %d RUNNING", id), func() bool { return ts.byID[id].Lifecycle().State() == BrokerRunning })
	}
	const topic = "regate"
	cl := acksAllProducer(t, ts.brokerAddrs(brokers...))
	createReplicated(t, ts, cl, topic, brokers)
	vs := values("before", 200)
	acked := produceValues(t, cl, topic, vs)
	if len(acked) != len(vs) {
		t.Fatalf("%d of %d records acknowledged with every broker up", len(acked), len(vs))
	}
	ctl := ts.byID[1]
	reg := func() (leader, epoch int32, isr []int32) {
		p := ctl.image().Topics().TopicByName(topic).Partition(0)
		return p.Leader, p.LeaderEpoch, p.Isr
	}
	waitFor(t, "every broker in the ISR", func() bool { _, _, isr := reg(); return len(isr) == len(brokers) })
	leader, epoch, _ := reg()

	b := ts.byID[leader]
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	lm := b.Lifecycle()
	// The gate's own question: does the image hold this incarnation's
	// registration? (Not the lifecycle's epoch: the registration record
	// can commit and reach the image before the answer reaches the
	// lifecycle.)
	registered := func() bool {
		r := b.image().Cluster().Broker(leader)
		return r != nil && r.IncarnationID == lm.IncarnationID()
	}
	waitFor(t, fmt.Sprintf("broker %d back as a replica in a leader epoch above %d", leader, epoch), func() bool {
		r, ok := ts.replica(leader, topic, 0)
		if ok && r.Role == partition.RoleLeader && r.LeaderEpoch <= epoch {
			t.Fatalf("restarted broker %d leads %s-0 in leader epoch %d, its previous incarnation's (registered: %v)", leader, topic, r.LeaderEpoch, registered())
		}
		if ok && r.Role != partition.RoleNone && !registered() {
			t.Fatalf("restarted broker %d hosts %s-0 as %v before its image holds its registration", leader, topic, r.Role)
		}
		return ok && r.Role != partition.RoleNone && r.LeaderEpoch > epoch
	})
	if n := lm.Failures().Registrations; n == 0 {
		t.Fatalf("broker %d registered at once: the restart did not come within its previous session", leader)
	}

	after := values("after", 100)
	for v := range produceValues(t, cl, topic, after) {
		acked[v] = true
	}
	if len(acked) != len(vs)+len(after) {
		t.Fatalf("%d of %d records acknowledged after the restart", len(acked)-len(vs), len(after))
	}
	waitFor(t, "every broker back in the ISR", func() bool { _, _, isr := reg(); return len(isr) == len(brokers) })
	var ends []ReplicaStats
	waitFor(t, "every replica at the same log end and high watermark", func() bool {
		ends = ends[:0]
		for _, id := range brokers {
			r, ok := ts.replica(id, topic, 0)
			if !ok {
				return false
			}
			ends = append(ends, r)
		}
		return slices.IndexFunc(ends, func(r ReplicaStats) bool {
			return r.LogEndOffset != ends[0].LogEndOffset || r.HighWatermark != ends[0].LogEndOffset
		}) < 0
	})
	seen := consumeAll(t, ts.brokerAddrs(brokers...), topic, len(acked))
	for v := range acked {
		if seen[v] == 0 {
			t.Fatalf("acknowledged %s lost", v)
		}
	}
}
