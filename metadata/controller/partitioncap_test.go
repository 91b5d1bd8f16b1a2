package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// max.broker.partitions bounds the replicas a broker hosts, counted over
// the image and the request's earlier topics: CreateTopics and
// CreatePartitions past it are refused with POLICY_VIOLATION and write
// nothing, and what fits is still created.
func TestMaxBrokerPartitions(t *testing.T) {
	h, _ := cluster(t, 3, Config{MaxBrokerPartitions: 10})
	h.createTopic("a", 6, 3) // 6 replicas on each broker
	r := createTopic("b", 3, 3)
	big := kmsg.NewCreateTopicsRequestTopic()
	big.Topic, big.NumPartitions, big.ReplicationFactor = "c", 2, 3
	r.Topics = append(r.Topics, big) // 6 + 3 + 2 > 10
	resp := h.do(r).(*kmsg.CreateTopicsResponse)
	if resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.PolicyViolation.Code {
		t.Fatalf("b %+v, c %+v", resp.Topics[0], resp.Topics[1])
	}
	t.Logf("refusal: %s", *resp.Topics[1].ErrorMessage)
	if h.image().Topics().TopicByName("c") != nil {
		t.Fatal("the refused topic was created")
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	ct := kmsg.NewCreatePartitionsRequestTopic()
	ct.Topic, ct.Count = "a", 8 // 9 + 2 > 10
	cp.Topics = append(cp.Topics, ct)
	pr := h.do(cp).(*kmsg.CreatePartitionsResponse)
	if pr.Topics[0].ErrorCode != kerr.PolicyViolation.Code {
		t.Fatalf("CreatePartitions past the cap: %+v", pr.Topics[0])
	}
	if n := h.image().Topics().TopicByName("a").NumPartitions(); n != 6 {
		t.Fatalf("a has %d partitions after the refusal", n)
	}
	cp.Topics[0].Count = 7 // 9 + 1 = 10
	if pr = h.do(cp).(*kmsg.CreatePartitionsResponse); pr.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreatePartitions up to the cap: %+v", pr.Topics[0])
	}
	// One replica per partition: a broker fills alone.
	if resp = h.do(createTopic("d", 1, 1)).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != kerr.PolicyViolation.Code {
		t.Fatalf("a full cluster took another partition: %+v", resp.Topics[0])
	}
}
