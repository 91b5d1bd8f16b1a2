package cache

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeTopicPartitions(limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsRequest {
	r := kmsg.NewPtrDescribeTopicPartitionsRequest()
	r.ResponsePartitionLimit, r.Cursor = limit, cursor
	for _, t := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = t
		r.Topics = append(r.Topics, rt)
	}
	return r
}

// dtpLines prints an answer one partition (or topic error) a line.
func dtpLines(resp *kmsg.DescribeTopicPartitionsResponse) string {
	var b strings.Builder
	for _, t := range resp.Topics {
		if t.ErrorCode != 0 {
			fmt.Fprintf(&b, "%s: %s\n", *t.Topic, kerr.ErrorForCode(t.ErrorCode))
			continue
		}
		for _, p := range t.Partitions {
			fmt.Fprintf(&b, "%s-%d leader=%d replicas=%v isr=%v elr=%v lastKnownElr=%v offline=%v\n", *t.Topic, p.Partition,
				p.LeaderID, p.Replicas, p.ISR, p.EligibleLeaderReplicas, p.LastKnownELR, p.OfflineReplicas)
		}
	}
	if c := resp.NextCursor; c != nil {
		fmt.Fprintf(&b, "next: %s-%d\n", c.Topic, c.Partition)
	}
	return b.String()
}

func TestDescribeTopicPartitionsCarriesTheElr(t *testing.T) {
	ch := record.NewPartitionChangeRecord(ordersID, 0)
	ch.Version = record.PartitionChangeVersion
	ch.Leader, ch.Isr, ch.EligibleLeaderReplicas, ch.LastKnownElr = record.NoLeader, []int32{}, []int32{101, 102}, []int32{101}
	img := replay(t, testImage(t), ch)
	got := dtpLines(DescribeTopicPartitions(img, "PLAINTEXT", describeTopicPartitions(2000, nil, "orders", "nope", "bad/name")))
	want := `bad/name: INVALID_TOPIC_EXCEPTION: The request attempted to perform an operation on an invalid topic.
nope: UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition.
orders-0 leader=-1 replicas=[101 102 103] isr=[] elr=[101 102] lastKnownElr=[101] offline=[103]
orders-1 leader=103 replicas=[103 101] isr=[103 101] elr=[] lastKnownElr=[] offline=[103]
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	resp := DescribeTopicPartitions(img, "PLAINTEXT", describeTopicPartitions(2000, nil, "orders"))
	if p := resp.Topics[0]; p.TopicID != ordersID || p.AuthorizedOperations != topicOperations {
		t.Errorf("topic id %v, authorized operations %d", p.TopicID, p.AuthorizedOperations)
	}
}

// The partition limit pages the answer, as Kafka's cursor does: all topics
// are clicks-0, clicks-1, orders-0, orders-1.
func TestDescribeTopicPartitionsPages(t *testing.T) {
	img := testImage(t)
	var seen []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for range 10 {
		resp := DescribeTopicPartitions(img, "PLAINTEXT", describeTopicPartitions(3, cursor))
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				seen = append(seen, fmt.Sprintf("%s-%d", *tp.Topic, p.Partition))
			}
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	if want := []string{"clicks-0", "clicks-1", "orders-0", "orders-1"}; !slices.Equal(seen, want) {
		t.Errorf("pages gave %v, want %v", seen, want)
	}
	// A limit of 0 still answers one partition.
	if got := dtpLines(DescribeTopicPartitions(img, "PLAINTEXT", describeTopicPartitions(0, nil, "orders"))); !strings.HasSuffix(got, "next: orders-1\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("limit 0:\n%s", got)
	}
	for _, c := range []*kmsg.DescribeTopicPartitionsRequestCursor{{Topic: "clicks", Partition: 0}, {Topic: "orders", Partition: -1}} {
		resp := DescribeTopicPartitions(img, "PLAINTEXT", describeTopicPartitions(10, c, "orders"))
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("cursor %+v: %s", c, dtpLines(resp))
		}
	}
}
