package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// preferredAway makes partition 0 of a new topic of replication factor 3
// led by its second replica, with its preferred replica (the first) back
// in the ISR: the preferred replica's broker asks to be fenced (which
// moves the leadership), comes back, and the new leader adds it again.
func preferredAway(t *testing.T, cfg Config) (*harness, map[int32]int64, []int32) {
	t.Helper()
	h, epochs := cluster(t, 3, cfg)
	topic := h.createTopic("e", 1, 3)
	replicas := slices.Clone(topic.Partition(0).Replicas)
	preferred := replicas[0]
	fence := heartbeat(preferred, epochs[preferred], h.image().Provenance().LastContainedOffset)
	fence.WantFence = true
	h.do(fence)
	p := h.image().Topics().TopicByName("e").Partition(0)
	if p.Leader == preferred || p.InIsr(preferred) {
		t.Fatalf("fencing the preferred replica left leader %d isr %v", p.Leader, p.Isr)
	}
	if r := h.heartbeatCaughtUp(preferred, epochs[preferred]); r.IsFenced {
		t.Fatalf("broker %d still fenced", preferred)
	}
	isr := map[int32]int64{preferred: epochs[preferred]}
	for _, id := range p.Isr {
		isr[id] = epochs[id]
	}
	resp := h.do(alterPartition(p.Leader, epochs[p.Leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr)).(*kmsg.AlterPartitionResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("expansion: error %d", code)
	}
	return h, epochs, replicas
}

func electLeadersRequest(typ int8, topic string, partitions ...int32) *kmsg.ElectLeadersRequest {
	r := kmsg.NewPtrElectLeadersRequest()
	r.Version, r.ElectionType = 2, typ
	if topic != "" {
		t := kmsg.NewElectLeadersRequestTopic()
		t.Topic, t.Partitions = topic, partitions
		r.Topics = append(r.Topics, t)
	}
	return r
}

// ElectLeaders as kafka-leader-election sends it (Kafka's
// ReplicationControlManager.electLeaders): a preferred election gives the
// leadership back to the first replica, then is not needed; every
// partition at once leaves out those that need none; an unclean election
// is not needed where a leader exists; an unknown partition is named so.
func TestElectLeaders(t *testing.T) {
	h, _, replicas := preferredAway(t, Config{})
	code := func(r kmsg.Response, i int) int16 {
		return r.(*kmsg.ElectLeadersResponse).Topics[0].Partitions[i].ErrorCode
	}
	if c := code(h.do(electLeadersRequest(electionTypePreferred, "e", 0)), 0); c != 0 {
		t.Fatalf("preferred election: error %d", c)
	}
	if l := h.image().Topics().TopicByName("e").Partition(0).Leader; l != replicas[0] {
		t.Fatalf("leader %d after a preferred election, want %d", l, replicas[0])
	}
	if c := code(h.do(electLeadersRequest(electionTypePreferred, "e", 0, 7)), 0); c != kerr.ElectionNotNeeded.Code {
		t.Fatalf("second preferred election: error %d, want ELECTION_NOT_NEEDED", c)
	}
	if c := code(h.do(electLeadersRequest(electionTypePreferred, "e", 0, 7)), 1); c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: error %d", c)
	}
	all := h.do(electLeadersRequest(electionTypePreferred, "")).(*kmsg.ElectLeadersResponse)
	if len(all.Topics) != 1 || len(all.Topics[0].Partitions) != 0 {
		t.Fatalf("every partition at once answered %+v, want the topic with none listed", all.Topics)
	}
	if c := code(h.do(electLeadersRequest(electionTypeUnclean, "e", 0)), 0); c != kerr.ElectionNotNeeded.Code {
		t.Fatalf("unclean election with a leader: error %d", c)
	}
	if r := h.do(electLeadersRequest(3, "e", 0)).(*kmsg.ElectLeadersResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unknown election type: error %d", r.ErrorCode)
	}
}

// A preferred replica outside the ISR cannot take the leadership back.
func TestElectLeadersPreferredNotInIsr(t *testing.T) {
	h, epochs := cluster(t, 3, Config{})
	topic := h.createTopic("e", 1, 3)
	preferred := topic.Partition(0).Replicas[0]
	fence := heartbeat(preferred, epochs[preferred], h.image().Provenance().LastContainedOffset)
	fence.WantFence = true
	h.do(fence)
	r := h.do(electLeadersRequest(electionTypePreferred, "e", 0)).(*kmsg.ElectLeadersResponse)
	if c := r.Topics[0].Partitions[0].ErrorCode; c != kerr.PreferredLeaderNotAvailable.Code {
		t.Fatalf("error %d, want PREFERRED_LEADER_NOT_AVAILABLE", c)
	}
}

// With auto.leader.rebalance.enable the active controller gives the
// leadership back to the preferred replica by itself, at its next check
// (Kafka's maybeBalancePartitionLeaders); without it, never.
func TestAutoLeaderRebalance(t *testing.T) {
	h, epochs, replicas := preferredAway(t, Config{AutoLeaderRebalance: true, LeaderImbalanceCheckInterval: 10 * time.Second})
	h.tick(5 * time.Second)
	h.keepAlive(epochs)
	if l := h.image().Topics().TopicByName("e").Partition(0).Leader; l == replicas[0] {
		t.Fatal("rebalanced before the check interval")
	}
	poll.Until(t, 10*time.Second, "the preferred replica leading again", func() bool {
		h.tick(5 * time.Second)
		h.keepAlive(epochs)
		return h.image().Topics().TopicByName("e").Partition(0).Leader == replicas[0]
	})

	off, epochs, replicas := preferredAway(t, Config{})
	for range 20 {
		off.tick(5 * time.Second)
		off.keepAlive(epochs)
	}
	if l := off.image().Topics().TopicByName("e").Partition(0).Leader; l == replicas[0] {
		t.Fatal("rebalanced with auto.leader.rebalance.enable off")
	}
}
