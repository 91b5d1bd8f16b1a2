package engine_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTopicPartitions (KIP-966) is open to anyone, as on a Kafka
// listener without an authorizer. A stranger's extreme values — a cursor
// at the last partition number, limits of MaxInt32 and below zero, a
// request naming 50,000 topics — are each answered within what the frame
// and max.request.partition.size.limit (2000) allow, and the cluster
// serves after them.
func TestHostileDescribeTopicPartitions(t *testing.T) {
	ht := openHostile(t)
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "victim"); err != nil {
		t.Fatal(err)
	}
	named := func(names ...string) []kmsg.DescribeTopicPartitionsRequestTopic {
		out := make([]kmsg.DescribeTopicPartitionsRequestTopic, len(names))
		for i, n := range names {
			out[i].Topic = n
		}
		return out
	}
	var many []string
	for i := range 50_000 {
		many = append(many, fmt.Sprintf("t%d", i))
	}
	for _, c := range []struct {
		name   string
		topics []string
		limit  int32
		cursor *kmsg.DescribeTopicPartitionsRequestCursor
		most   int // partitions answered at most
	}{
		{"cursor at MaxInt32", []string{"victim"}, 10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "victim", Partition: math.MaxInt32}, 0},
		{"limit MaxInt32", nil, math.MaxInt32, nil, 2000},
		{"negative limit", nil, -5, nil, 1},
		{"50,000 names", many, 10, nil, 0},
	} {
		r := kmsg.NewPtrDescribeTopicPartitionsRequest()
		r.Topics, r.ResponsePartitionLimit, r.Cursor = named(c.topics...), c.limit, c.cursor
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := 0
		for _, tp := range resp.Topics {
			n += len(tp.Partitions)
		}
		if n > c.most {
			t.Errorf("%s: %d partitions answered, at most %d expected", c.name, n, c.most)
		}
	}
	ht.checkServing(t, "after the DescribeTopicPartitions requests")
}
