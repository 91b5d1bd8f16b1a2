package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// keepAlive heartbeats every broker but skip at the committed offset.
func (h *harness) keepAlive(epochs map[int32]int64, skip ...int32) {
	h.t.Helper()
	for id, e := range epochs {
		if slices.Contains(skip, id) {
			continue
		}
		if r := h.heartbeatCaughtUp(id, e); r.ErrorCode != 0 {
			h.t.Fatalf("heartbeat of %d: %+v", id, r)
		}
	}
}

func TestStaleBrokerIsFencedRemovedFromIsrsAndLosesLeadership(t *testing.T) {
	h, epochs := cluster(t, 3, Config{SessionTimeout: 9 * time.Second})
	before := h.createTopic("t", 6, 3)
	led := map[int32]int32{} // partition -> old leader epoch, for those 103 led
	for _, id := range before.PartitionIDs() {
		if p := before.Partition(id); p.Leader == 103 {
			led[id] = p.LeaderEpoch
		}
	}
	if len(led) == 0 {
		t.Fatal("broker 103 leads nothing; placement broke")
	}
	// 101 and 102 heartbeat through the session; 103 stays silent.
	for range 5 {
		h.tick(2 * time.Second)
		h.keepAlive(epochs, 103)
	}
	poll.Until(t, 10*time.Second, "broker 103 fenced", func() bool {
		b := h.image().Cluster().Broker(103)
		return b != nil && b.Fenced
	})
	for _, b := range []int32{101, 102} {
		if h.image().Cluster().Broker(b).Fenced {
			t.Fatalf("live broker %d fenced", b)
		}
	}
	after := h.image().Topics().TopicByName("t")
	for _, id := range after.PartitionIDs() {
		p := after.Partition(id)
		if p.InIsr(103) || p.Leader == 103 {
			t.Fatalf("partition %d still has 103: leader %d isr %v", id, p.Leader, p.Isr)
		}
		if len(p.Isr) != 2 {
			t.Fatalf("partition %d isr %v, want the two live brokers", id, p.Isr)
		}
		if old, ok := led[id]; ok && (p.LeaderEpoch != old+1 || !slices.Contains([]int32{101, 102}, p.Leader)) {
			t.Fatalf("partition %d: leader %d epoch %d (was %d)", id, p.Leader, p.LeaderEpoch, old)
		}
		if p.PartitionEpoch != before.Partition(id).PartitionEpoch+1 {
			t.Fatalf("partition %d epoch %d, want one bump", id, p.PartitionEpoch)
		}
	}
	poll.Until(t, 10*time.Second, "timed-out count", func() bool { return h.ctl.Metrics().TimedOutBrokerHeartbeatCount == 1 })
	if m := h.ctl.Metrics(); m.FencedBrokerCount != 1 || m.ActiveBrokerCount != 2 {
		t.Fatalf("metrics %+v", m)
	}
	if evs := h.eventsOf(EventBrokerSessionTimedOut); len(evs) != 1 || evs[0].Broker != 103 {
		t.Fatalf("timed-out events %+v", evs)
	}
	// Kafka's order: the partitions first, then the fence record.
	recs := h.records()
	last, ok := recs[len(recs)-1].(*record.BrokerRegistrationChangeRecord)
	if !ok || last.BrokerID != 103 || last.Fenced != record.FencingFence {
		t.Fatalf("last record %#v, want the fence of 103", recs[len(recs)-1])
	}
}

func TestOneStaleBrokerIsFencedPerCheck(t *testing.T) {
	h, _ := cluster(t, 3, Config{SessionTimeout: 9 * time.Second})
	h.clock.Advance(10 * time.Second)
	h.sync()
	poll.Until(t, 10*time.Second, "one broker fenced", func() bool { return h.ctl.Metrics().FencedBrokerCount == 1 })
	h.sync()
	if n := h.ctl.Metrics().FencedBrokerCount; n != 1 {
		t.Fatalf("%d brokers fenced by one check, want 1", n)
	}
	for range 3 {
		h.tick(h.ctl.tickEvery)
	}
	poll.Until(t, 10*time.Second, "every broker fenced", func() bool { return h.ctl.Metrics().FencedBrokerCount == 3 })
}

func TestLastIsrMemberStaysAndPartitionGoesOfflineThenRecovers(t *testing.T) {
	h, epochs := cluster(t, 2, Config{SessionTimeout: 9 * time.Second})
	topic := h.createTopic("solo", 1, 1)
	owner := topic.Partition(0).Leader
	h.tick(10 * time.Second)
	h.tick(h.ctl.tickEvery) // one broker per check: both are stale
	poll.Until(t, 10*time.Second, "owner fenced", func() bool { return h.image().Cluster().Broker(owner).Fenced })
	p := h.image().Topics().TopicByName("solo").Partition(0)
	if p.Leader != record.NoLeader || !slices.Equal(p.Isr, []int32{owner}) {
		t.Fatalf("offline partition: leader %d isr %v, want -1 and [%d] (ELR off keeps the last member)", p.Leader, p.Isr, owner)
	}
	poll.Until(t, 10*time.Second, "offline count", func() bool { return h.ctl.Metrics().OfflinePartitionsCount == 1 })
	// The owner comes back: unfencing elects it again.
	if r := h.heartbeatCaughtUp(owner, epochs[owner]); r.IsFenced {
		t.Fatalf("owner still fenced: %+v", r)
	}
	p = h.image().Topics().TopicByName("solo").Partition(0)
	if p.Leader != owner {
		t.Fatalf("leader %d after the owner's return, want %d", p.Leader, owner)
	}
	poll.Until(t, 10*time.Second, "no offline partition", func() bool { return h.ctl.Metrics().OfflinePartitionsCount == 0 })
}

func TestControlledShutdownMovesLeadershipsThenShutsDown(t *testing.T) {
	h, epochs := cluster(t, 3, Config{})
	h.createTopic("t", 3, 3)
	r := heartbeat(101, epochs[101], h.image().Provenance().LastContainedOffset)
	r.WantShutdown = true
	resp := h.do(r).(*kmsg.BrokerHeartbeatResponse)
	if resp.ErrorCode != 0 || resp.IsFenced || resp.ShouldShutdown {
		t.Fatalf("first shutdown heartbeat %+v, want unfenced and not yet shut down", resp)
	}
	img := h.image()
	if b := img.Cluster().Broker(101); !b.InControlledShutdown || b.Fenced {
		t.Fatalf("broker 101 %+v, want in controlled shutdown", b)
	}
	for _, id := range img.Topics().TopicByName("t").PartitionIDs() {
		if p := img.Topics().TopicByName("t").Partition(id); p.Leader == 101 || p.InIsr(101) {
			t.Fatalf("partition %d still led by or in sync with 101: %+v", id, p)
		}
	}
	// Once the others have seen the change, the next heartbeat may shut
	// down: fenced, ShouldShutDown.
	h.keepAlive(epochs, 101)
	r.CurrentMetadataOffset = h.image().Provenance().LastContainedOffset
	final := h.do(r).(*kmsg.BrokerHeartbeatResponse)
	if !final.ShouldShutdown || !final.IsFenced {
		t.Fatalf("heartbeat after the leaderships moved: %+v, want ShouldShutdown", final)
	}
	poll.Until(t, 10*time.Second, "broker 101 fenced after shutdown", func() bool { return h.image().Cluster().Broker(101).Fenced })
}

func TestWantFenceAndShutdownShutsDownAtOnce(t *testing.T) {
	h, epochs := cluster(t, 2, Config{})
	h.createTopic("t", 2, 2)
	r := heartbeat(101, epochs[101], h.image().Provenance().LastContainedOffset)
	r.WantFence, r.WantShutdown = true, true
	resp := h.do(r).(*kmsg.BrokerHeartbeatResponse)
	if !resp.ShouldShutdown || !resp.IsFenced {
		t.Fatalf("%+v, want ShouldShutdown", resp)
	}
	if !h.image().Cluster().Broker(101).Fenced {
		t.Fatal("not fenced")
	}
}

func TestANewActiveControllerStartsEverySessionAfresh(t *testing.T) {
	h, epochs := cluster(t, 3, Config{SessionTimeout: 9 * time.Second})
	h.createTopic("t", 3, 3)
	r := heartbeat(101, epochs[101], h.image().Provenance().LastContainedOffset)
	r.WantShutdown = true
	h.do(r)
	if !h.image().Cluster().Broker(101).InControlledShutdown {
		t.Fatal("broker 101 not in controlled shutdown")
	}
	// Another controller leads for a while, then this one again: nobody
	// heartbeated to it meanwhile, yet no session is stale at activation.
	h.follow(2, 2)
	h.clock.Advance(time.Minute)
	h.lead(3)
	h.sync()
	if m := h.ctl.Metrics(); m.FencedBrokerCount != 0 || m.TimedOutBrokerHeartbeatCount != 0 {
		t.Fatalf("metrics after failover %+v: sessions were not restarted", m)
	}
	// The broker in controlled shutdown may still finish it.
	h.keepAlive(epochs, 101)
	r.CurrentMetadataOffset = h.image().Provenance().LastContainedOffset
	if resp := h.do(r).(*kmsg.BrokerHeartbeatResponse); !resp.ShouldShutdown {
		t.Fatalf("controlled shutdown after failover: %+v", resp)
	}
}
