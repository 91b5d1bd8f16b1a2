package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// CreatePartitions in the ZooKeeper era: the controller broker grows the
// topic's assignment in ZooKeeper, the controller's watch on the topic
// makes the new partitions, and they take records; a shrink, a
// non-increase and a wrong replica count are refused with Kafka's words.
func TestZkCreatePartitions(t *testing.T) {
	c := startZkCluster(t, 1, 2, 3)
	c.controller(t, -1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds()...), kgo.MetadataMinAge(50*time.Millisecond), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 2, 2, nil, "grow"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	rs, err := adm.UpdatePartitions(ctx, 4, "grow")
	if err != nil || rs.Error() != nil {
		t.Fatalf("grow to 4 partitions: %v %v", err, rs.Error())
	}
	poll.Until(t, 30*time.Second, "4 partitions with leaders on every broker", func() bool {
		for _, s := range c.group.Servers() {
			tp := s.servedImage().Topics().TopicByName("grow")
			if tp == nil || tp.NumPartitions() != 4 {
				return false
			}
			for _, p := range tp.PartitionIDs() {
				if part := tp.Partition(p); part.Leader < 0 || len(part.Replicas) != 2 {
					return false
				}
			}
		}
		return true
	})
	for p := range int32(4) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "grow", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("produce to partition %d: %v", p, err)
		}
	}
	for _, bad := range []struct {
		count int
		want  error
		says  string
	}{
		{3, kerr.InvalidPartitions, "which is higher than the requested 3"},
		{4, kerr.InvalidPartitions, "already has 4 partitions"},
	} {
		rs, err := adm.UpdatePartitions(ctx, bad.count, "grow")
		if err != nil {
			t.Fatal(err)
		}
		r := rs["grow"]
		if r.Err != bad.want || !strings.Contains(r.ErrMessage, bad.says) {
			t.Errorf("to %d partitions: %v %q, want %v saying %q", bad.count, r.Err, r.ErrMessage, bad.want, bad.says)
		}
	}
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 5000
	for _, name := range []string{"missing", "grow", "grow"} {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, 9
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{"missing": kerr.UnknownTopicOrPartition.Code, "grow": kerr.InvalidRequest.Code}
	for _, r := range resp.Topics {
		if r.ErrorCode != want[r.Topic] {
			t.Errorf("%s: error %d, want %d (a missing topic; a topic named twice)", r.Topic, r.ErrorCode, want[r.Topic])
		}
	}
}
