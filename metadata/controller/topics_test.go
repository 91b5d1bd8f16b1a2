package controller

import (
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCreateTopicPlacesReplicasOverUnfencedBrokers(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	resp := h.do(createTopic("orders", 6, 3)).(*kmsg.CreateTopicsResponse)
	rt := resp.Topics[0]
	if rt.ErrorCode != 0 || rt.NumPartitions != 6 || rt.ReplicationFactor != 3 || rt.TopicID == [16]byte{} {
		t.Fatalf("response %+v", rt)
	}
	topic := h.image().Topics().TopicByName("orders")
	if topic == nil || topic.ID() != record.Uuid(rt.TopicID) || topic.NumPartitions() != 6 {
		t.Fatalf("committed topic %v", topic)
	}
	leaders := map[int32]int{}
	for _, id := range topic.PartitionIDs() {
		p := topic.Partition(id)
		r := slices.Clone(p.Replicas)
		slices.Sort(r)
		if !slices.Equal(r, []int32{101, 102, 103}) {
			t.Fatalf("partition %d replicas %v", id, p.Replicas)
		}
		if p.Leader != p.Replicas[0] || !slices.Equal(p.Isr, p.Replicas) || p.LeaderEpoch != 0 {
			t.Fatalf("partition %d: leader %d isr %v replicas %v", id, p.Leader, p.Isr, p.Replicas)
		}
		if len(p.Directories) != 3 || p.Directories[0] != record.Uuid(logDir(p.Replicas[0])) {
			t.Fatalf("partition %d directories %v", id, p.Directories)
		}
		leaders[p.Leader]++
	}
	for id, n := range leaders {
		if n != 2 {
			t.Fatalf("broker %d leads %d of 6 partitions, want 2 each: %v", id, n, leaders)
		}
	}
	if m := h.ctl.Metrics(); m.GlobalTopicCount != 1 || m.GlobalPartitionCount != 6 || m.OfflinePartitionsCount != 0 {
		t.Fatalf("metrics %+v", m)
	}
	var parts int
	for _, r := range h.records() {
		if p, ok := r.(*record.PartitionRecord); ok {
			parts++
			if p.Version != record.PartitionVersion {
				t.Fatalf("PartitionRecord v%d, want v%d", p.Version, record.PartitionVersion)
			}
		}
	}
	if parts != 6 {
		t.Fatalf("%d PartitionRecords", parts)
	}
}

func TestCreateTopicDefaultsAndValidateOnly(t *testing.T) {
	h, _ := cluster(t, 3, Config{DefaultNumPartitions: 4, DefaultReplicationFactor: 2})
	r := createTopic("dry", -1, -1)
	r.ValidateOnly = true
	rt := h.do(r).(*kmsg.CreateTopicsResponse).Topics[0]
	if rt.ErrorCode != 0 || rt.NumPartitions != 4 || rt.ReplicationFactor != 2 {
		t.Fatalf("validate-only %+v", rt)
	}
	if h.image().Topics().TopicByName("dry") != nil {
		t.Fatal("validate-only created the topic")
	}
	topic := h.createTopic("wet", -1, -1)
	if topic.NumPartitions() != 4 || len(topic.Partition(0).Replicas) != 2 {
		t.Fatalf("defaults not applied: %d partitions", topic.NumPartitions())
	}
}

func TestCreateTopicsErrors(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	h.createTopic("exists", 1, 1)
	h.createTopic("a.b", 1, 1)
	assign := func(name string, reps ...[]int32) kmsg.CreateTopicsRequestTopic {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
		for i, r := range reps {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), r
			t.ReplicaAssignment = append(t.ReplicaAssignment, a)
		}
		return t
	}
	for _, tc := range []struct {
		name  string
		topic kmsg.CreateTopicsRequestTopic
		want  *kerr.Error
	}{
		{"empty name", createTopic("", 1, 1).Topics[0], kerr.InvalidTopicException},
		{"dot", createTopic(".", 1, 1).Topics[0], kerr.InvalidTopicException},
		{"bad char", createTopic("a/b", 1, 1).Topics[0], kerr.InvalidTopicException},
		{"too long", createTopic(string(make([]byte, 250)), 1, 1).Topics[0], kerr.InvalidTopicException},
		{"collides", createTopic("a_b", 1, 1).Topics[0], kerr.InvalidTopicException},
		{"exists", createTopic("exists", 1, 1).Topics[0], kerr.TopicAlreadyExists},
		{"the metadata log's own name", createTopic("__cluster_metadata", 1, 1).Topics[0], kerr.InvalidRequest},
		{"zero partitions", createTopic("z", 0, 1).Topics[0], kerr.InvalidPartitions},
		{"negative partitions", createTopic("z", -7, 1).Topics[0], kerr.InvalidPartitions},
		{"zero rf", createTopic("z", 1, 0).Topics[0], kerr.InvalidReplicationFactor},
		{"rf above the unfenced brokers", createTopic("z", 1, 4).Topics[0], kerr.InvalidReplicationFactor},
		{"assignment with partitions", func() kmsg.CreateTopicsRequestTopic {
			t := assign("z", []int32{101})
			t.NumPartitions = 1
			return t
		}(), kerr.InvalidRequest},
		{"unknown broker", assign("z", []int32{101, 999}), kerr.InvalidReplicaAssignment},
		{"duplicate replica", assign("z", []int32{101, 101}), kerr.InvalidReplicaAssignment},
		{"uneven assignment", assign("z", []int32{101, 102}, []int32{101}), kerr.InvalidReplicaAssignment},
		{"empty assignment", assign("z", []int32{}), kerr.InvalidReplicaAssignment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kmsg.NewPtrCreateTopicsRequest()
			r.Version = 7
			r.Topics = append(r.Topics, tc.topic)
			rt := h.do(r).(*kmsg.CreateTopicsResponse).Topics[0]
			if rt.ErrorCode != tc.want.Code {
				t.Fatalf("error %d (%v), want %s", rt.ErrorCode, rt.ErrorMessage, tc.want.Message)
			}
		})
	}
	t.Run("duplicate in one request", func(t *testing.T) {
		r := createTopic("twice", 1, 1)
		r.Topics = append(r.Topics, r.Topics[0])
		for _, rt := range h.do(r).(*kmsg.CreateTopicsResponse).Topics {
			if rt.ErrorCode != kerr.InvalidRequest.Code {
				t.Fatalf("error %d, want INVALID_REQUEST", rt.ErrorCode)
			}
		}
	})
	t.Run("too many partitions", func(t *testing.T) {
		r := createTopic("huge", 1<<30, 1)
		if rt := h.do(r).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != kerr.PolicyViolation.Code {
			t.Fatalf("error %d, want POLICY_VIOLATION", rt.ErrorCode)
		}
	})
	t.Run("one bad topic does not stop the others", func(t *testing.T) {
		r := createTopic("good", 1, 1)
		r.Topics = append(r.Topics, createTopic("exists", 1, 1).Topics[0])
		resp := h.do(r).(*kmsg.CreateTopicsResponse)
		if resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.TopicAlreadyExists.Code {
			t.Fatalf("%+v", resp.Topics)
		}
		if h.image().Topics().TopicByName("good") == nil {
			t.Fatal("good topic not created")
		}
	})
	if n := h.image().Topics().Len(); n != 3 {
		t.Fatalf("%d topics after the refusals, want 3", n)
	}
}

func TestDeleteTopicsByNameAndID(t *testing.T) {
	h, _ := cluster(t, 1, Config{})
	a := h.createTopic("a", 2, 1)
	h.createTopic("b", 1, 1)
	r := kmsg.NewPtrDeleteTopicsRequest()
	r.Version = 6
	byID := kmsg.NewDeleteTopicsRequestTopic()
	byID.TopicID = a.ID()
	byName := kmsg.NewDeleteTopicsRequestTopic()
	byName.Topic = kmsg.StringPtr("b")
	unknownName := kmsg.NewDeleteTopicsRequestTopic()
	unknownName.Topic = kmsg.StringPtr("nope")
	unknownID := kmsg.NewDeleteTopicsRequestTopic()
	unknownID.TopicID = record.NewUuid(42, 42)
	both := kmsg.NewDeleteTopicsRequestTopic()
	both.Topic, both.TopicID = kmsg.StringPtr("x"), record.NewUuid(1, 1)
	r.Topics = []kmsg.DeleteTopicsRequestTopic{byID, byName, unknownName, unknownID, both}
	resp := h.do(r).(*kmsg.DeleteTopicsResponse)
	want := []int16{0, 0, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code, kerr.InvalidRequest.Code}
	for i, rt := range resp.Topics {
		if rt.ErrorCode != want[i] {
			t.Fatalf("topic %d: error %d, want %d", i, rt.ErrorCode, want[i])
		}
	}
	if resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != "a" {
		t.Fatalf("delete by id answers name %v", resp.Topics[0].Topic)
	}
	if n := h.image().Topics().Len(); n != 0 {
		t.Fatalf("%d topics left", n)
	}
	if m := h.ctl.Metrics(); m.GlobalTopicCount != 0 || m.GlobalPartitionCount != 0 {
		t.Fatalf("metrics %+v", m)
	}
	// v5 names topics only.
	old := kmsg.NewPtrDeleteTopicsRequest()
	old.Version, old.TopicNames = 5, []string{"a"}
	if rt := h.do(old).(*kmsg.DeleteTopicsResponse).Topics[0]; rt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("deleting a deleted topic: error %d", rt.ErrorCode)
	}
}

func TestCreatePartitions(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	h.createTopic("t", 2, 2)
	req := func(name string, count int32, assign ...[]int32) *kmsg.CreatePartitionsRequest {
		r := kmsg.NewPtrCreatePartitionsRequest()
		r.Version = 3
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, count
		for _, a := range assign {
			rt.Assignment = append(rt.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: a})
		}
		r.Topics = append(r.Topics, rt)
		return r
	}
	if rt := h.do(req("t", 5)).(*kmsg.CreatePartitionsResponse).Topics[0]; rt.ErrorCode != 0 {
		t.Fatalf("grow: %+v", rt)
	}
	topic := h.image().Topics().TopicByName("t")
	if topic.NumPartitions() != 5 || len(topic.Partition(4).Replicas) != 2 {
		t.Fatalf("after growing: %d partitions", topic.NumPartitions())
	}
	if rt := h.do(req("t", 6, []int32{103, 101})).(*kmsg.CreatePartitionsResponse).Topics[0]; rt.ErrorCode != 0 {
		t.Fatalf("grow with assignment: %+v", rt)
	}
	if p := h.image().Topics().TopicByName("t").Partition(5); !slices.Equal(p.Replicas, []int32{103, 101}) || p.Leader != 103 {
		t.Fatalf("assigned partition %+v", p)
	}
	for _, tc := range []struct {
		name string
		req  *kmsg.CreatePartitionsRequest
		want *kerr.Error
	}{
		{"unknown topic", req("nope", 3), kerr.UnknownTopicOrPartition},
		{"same count", req("t", 6), kerr.InvalidPartitions},
		{"fewer", req("t", 2), kerr.InvalidPartitions},
		{"assignment count", req("t", 8, []int32{101, 102}), kerr.InvalidReplicaAssignment},
		{"unknown broker", req("t", 7, []int32{101, 999}), kerr.InvalidReplicaAssignment},
		{"too many", req("t", 1<<30), kerr.PolicyViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rt := h.do(tc.req).(*kmsg.CreatePartitionsResponse).Topics[0]; rt.ErrorCode != tc.want.Code {
				t.Fatalf("error %d, want %s", rt.ErrorCode, tc.want.Message)
			}
		})
	}
}

// Kafka's admin client reads every result's configs (v5+): a null list,
// on a created topic or a refused one, fails the whole createTopics call.
func TestCreateTopicsAnswersConfigsNeverNull(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	r := createTopic("withconfig", 1, 1)
	v := "1000"
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "retention.ms", &v
	r.Topics[0].Configs = append(r.Topics[0].Configs, c)
	r.Topics = append(r.Topics, createTopic("plain", 1, 1).Topics[0], createTopic("toowide", 1, 4).Topics[0])
	r.Version = 7
	resp := h.do(r).(*kmsg.CreateTopicsResponse)
	resp.Version = 7 // h.do answers without going through the wire
	decoded := kmsg.NewPtrCreateTopicsResponse()
	decoded.Version = 7
	if err := decoded.ReadFrom(resp.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	for _, rt := range decoded.Topics {
		if rt.Configs == nil {
			t.Errorf("topic %s: null configs on the wire", rt.Topic)
		}
	}
	if got := decoded.Topics[0].Configs; len(got) != 1 || got[0].Name != "retention.ms" || *got[0].Value != "1000" || got[0].Source != 1 {
		t.Errorf("withconfig configs %+v, want retention.ms=1000 from DYNAMIC_TOPIC_CONFIG", got)
	}
	if got := decoded.Topics[1].Configs; len(got) != 0 {
		t.Errorf("plain configs %+v, want none", got)
	}
	// Kafka's wording, which kafka-topics prints as it is.
	want := "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered and unfenced."
	if rt := decoded.Topics[2]; rt.ErrorCode != kerr.InvalidReplicationFactor.Code || rt.ErrorMessage == nil || *rt.ErrorMessage != want {
		t.Errorf("toowide: error %d %v, want %q", rt.ErrorCode, rt.ErrorMessage, want)
	}
}
