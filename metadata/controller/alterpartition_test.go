package controller

import (
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func alterPartition(broker int32, epoch int64, topic *image.TopicImage, p int32, leaderEpoch, partitionEpoch int32, isr map[int32]int64) *kmsg.AlterPartitionRequest {
	r := kmsg.NewPtrAlterPartitionRequest()
	r.Version = 3
	r.BrokerID, r.BrokerEpoch = broker, epoch
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.TopicID = topic.ID()
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = p, leaderEpoch, partitionEpoch
	ids := make([]int32, 0, len(isr))
	for id := range isr {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		rp.NewEpochISR = append(rp.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: id, BrokerEpoch: isr[id]})
	}
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return r
}

func TestAlterPartitionShrinksAndExpandsTheIsr(t *testing.T) {
	h, epochs := cluster(t, 3, Config{})
	topic := h.createTopic("t", 1, 3)
	p := topic.Partition(0)
	leader := p.Leader
	var follower int32
	for _, r := range p.Replicas {
		if r != leader {
			follower = r
			break
		}
	}
	shrunk := map[int32]int64{}
	for _, r := range p.Replicas {
		if r != follower {
			shrunk[r] = epochs[r]
		}
	}
	resp := h.do(alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, shrunk)).(*kmsg.AlterPartitionResponse)
	rp := resp.Topics[0].Partitions[0]
	if resp.ErrorCode != 0 || rp.ErrorCode != 0 || len(rp.ISR) != 2 || slices.Contains(rp.ISR, follower) ||
		rp.LeaderID != leader || rp.LeaderEpoch != p.LeaderEpoch || rp.PartitionEpoch != p.PartitionEpoch+1 {
		t.Fatalf("shrink answered %+v", rp)
	}
	got := h.image().Topics().TopicByName("t").Partition(0)
	if !slices.Equal(got.Isr, rp.ISR) || got.PartitionEpoch != rp.PartitionEpoch {
		t.Fatalf("committed %+v, answered %+v", got, rp)
	}
	// The answer is the state: expanding from it works, the old epoch does not.
	resp = h.do(alterPartition(leader, epochs[leader], topic, 0, got.LeaderEpoch, got.PartitionEpoch, epochs)).(*kmsg.AlterPartitionResponse)
	if rp := resp.Topics[0].Partitions[0]; rp.ErrorCode != 0 || len(rp.ISR) != 3 {
		t.Fatalf("expand answered %+v", rp)
	}
	resp = h.do(alterPartition(leader, epochs[leader], topic, 0, got.LeaderEpoch, got.PartitionEpoch, epochs)).(*kmsg.AlterPartitionResponse)
	if rp := resp.Topics[0].Partitions[0]; rp.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("stale partition epoch answered %+v, want INVALID_UPDATE_VERSION", rp)
	}
}

func TestAlterPartitionErrors(t *testing.T) {
	h, epochs := cluster(t, 3, Config{})
	topic := h.createTopic("t", 1, 2)
	p := topic.Partition(0)
	leader := p.Leader
	var other int32 // the broker without a replica
	for id := range epochs {
		if !p.HasReplica(id) {
			other = id
		}
	}
	follower := p.Replicas[1]
	isr := func(ids ...int32) map[int32]int64 {
		m := map[int32]int64{}
		for _, id := range ids {
			m[id] = epochs[id]
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		req       *kmsg.AlterPartitionRequest
		top, want *kerr.Error
	}{
		{"stale broker epoch", alterPartition(leader, epochs[leader]-1, topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr(leader)), kerr.StaleBrokerEpoch, nil},
		{"unknown partition", alterPartition(leader, epochs[leader], topic, 5, 0, 0, isr(leader)), nil, kerr.UnknownTopicOrPartition},
		{"old leader epoch", alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch-1, p.PartitionEpoch, isr(leader)), nil, kerr.FencedLeaderEpoch},
		{"newer leader epoch", alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch+1, p.PartitionEpoch, isr(leader)), nil, kerr.NotController},
		{"not the leader", alterPartition(follower, epochs[follower], topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr(leader)), nil, kerr.InvalidRequest},
		{"isr without the leader", alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr(follower)), nil, kerr.InvalidRequest},
		{"isr with a non-replica", alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr(leader, other)), nil, kerr.InvalidRequest},
		{"stale member epoch", alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, map[int32]int64{leader: epochs[leader], follower: epochs[follower] - 1}), nil, kerr.IneligibleReplica},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.do(tc.req).(*kmsg.AlterPartitionResponse)
			if tc.top != nil {
				if resp.ErrorCode != tc.top.Code {
					t.Fatalf("error %d, want %s", resp.ErrorCode, tc.top.Message)
				}
				return
			}
			if got := resp.Topics[0].Partitions[0].ErrorCode; resp.ErrorCode != 0 || got != tc.want.Code {
				t.Fatalf("error %d/%d, want %s", resp.ErrorCode, got, tc.want.Message)
			}
		})
	}
	t.Run("unknown topic id", func(t *testing.T) {
		r := alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr(leader))
		r.Topics[0].TopicID = [16]byte{9}
		if got := h.do(r).(*kmsg.AlterPartitionResponse).Topics[0].Partitions[0].ErrorCode; got != kerr.UnknownTopicID.Code {
			t.Fatalf("error %d, want UNKNOWN_TOPIC_ID", got)
		}
	})
	t.Run("fenced member", func(t *testing.T) {
		f := heartbeat(follower, epochs[follower], h.image().Provenance().LastContainedOffset)
		f.WantFence = true
		h.do(f)
		q := h.image().Topics().TopicByName("t").Partition(0)
		r := alterPartition(leader, epochs[leader], topic, 0, q.LeaderEpoch, q.PartitionEpoch, isr(leader, follower))
		if got := h.do(r).(*kmsg.AlterPartitionResponse).Topics[0].Partitions[0].ErrorCode; got != kerr.IneligibleReplica.Code {
			t.Fatalf("error %d, want INELIGIBLE_REPLICA", got)
		}
	})
	if got := h.image().Topics().TopicByName("t").Partition(0); got.PartitionEpoch > p.PartitionEpoch+1 {
		t.Fatalf("refused requests changed the partition: %+v", got)
	}
}
