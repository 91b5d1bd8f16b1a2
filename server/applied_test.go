package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// earliestOffsetCode is the error code of broker b's ListOffsets (as a
// consumer, earliest, current leader epoch 0) for topic's partition idx.
func earliestOffsetCode(b *Server, topic string, idx int32) int16 {
	r := kmsg.NewPtrListOffsetsRequest()
	r.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = idx, -2, 0
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return b.ReplicaManager().listOffsets(r, false).Topics[0].Partitions[0].ErrorCode
}

// A broker's Metadata names it the leader of a new partition only once
// it serves the partition: a consumer that lists the offsets of a fresh
// topic right after its Metadata never hears NOT_LEADER_OR_FOLLOWER or
// UNKNOWN_TOPIC_OR_PARTITION from the leader it was given (franz-go
// would wait a second before listing again).
func TestMetadataNamesALeaderOnlyOnceItServes(t *testing.T) {
	ts := replicatedCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.brokerAddrs(101, 102, 103)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for round := range 4 {
		topic := fmt.Sprintf("fresh-%d", round)
		created := make(chan error, 1)
		go func() {
			_, err := adm.CreateTopic(ctx, 3, 3, nil, topic)
			created <- err
		}()
		served := map[int32]bool{}
		waitFor(t, topic+" served by each of its leaders", func() bool {
			for _, id := range []int32{101, 102, 103} {
				b := ts.byID[id]
				tp := b.servedImage().Topics().TopicByName(topic)
				if tp == nil || served[id] {
					continue
				}
				for idx := range int32(3) {
					if tp.Partition(idx).Leader != id {
						continue
					}
					if code := earliestOffsetCode(b, topic, idx); code != 0 {
						t.Fatalf("broker %d's Metadata names it leader of %s-%d, but its ListOffsets answers error %d", id, topic, idx, code)
					}
					served[id] = true
				}
			}
			return len(served) == 3
		})
		if err := <-created; err != nil {
			t.Fatalf("CreateTopic %s: %v", topic, err)
		}
	}
}

// An image that changes no replica is served at once, unless one that
// does waits for its reconciliation: then both wait, and the newer one is
// reconciled too.
func TestAppliedImageWaitsForReconciliation(t *testing.T) {
	next := func(img *image.MetadataImage) *image.MetadataImage {
		return image.NewMetadataDelta(img).Apply(image.EmptyProvenance)
	}
	var newest *image.MetadataImage
	a := appliedImage{img: image.Empty}
	publish := func(img *image.MetadataImage, reconcile bool) { a.published(img, reconcile, func() { newest = img }) }
	load := func() *image.MetadataImage { return newest }

	quiet := next(image.Empty)
	publish(quiet, false)
	if a.load() != quiet {
		t.Fatal("an image that changes no replica was not served at once")
	}
	topics, after := next(quiet), next(next(quiet))
	publish(topics, true)
	publish(after, false)
	if a.load() != quiet {
		t.Fatal("an image was served before the reconciliation it waits for")
	}
	if a.reconciled(topics, load) {
		t.Fatal("reconciling an older image reported the newest reconciled")
	}
	if a.load() != topics {
		t.Fatal("the reconciled image is not served")
	}
	if !a.reconciled(after, load) || a.load() != after {
		t.Fatal("the newest image, reconciled, is not served")
	}
	if publish(next(after), false); a.load() == after {
		t.Fatal("with nothing pending, a quiet image waited")
	}
}
