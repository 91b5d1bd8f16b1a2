package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heldCluster is an active controller with one unfenced broker whose
// raft holds appends until the test commits them.
func heldCluster(t *testing.T) *harness {
	h := newHarness(t, harnessOpts{hold: true})
	h.lead(1)
	h.commit(true)
	ch := h.send(registration(101))
	h.sync()
	h.commit(true)
	epoch := h.wait(ch).(*kmsg.BrokerRegistrationResponse).BrokerEpoch
	ch = h.send(heartbeat(101, epoch, h.image().Provenance().LastContainedOffset))
	h.sync()
	h.commit(true)
	if r := h.wait(ch).(*kmsg.BrokerHeartbeatResponse); r.IsFenced {
		t.Fatalf("broker not unfenced: %+v", r)
	}
	return h
}

func TestRequestsWaitForTheirRecordsToCommit(t *testing.T) {
	h := heldCluster(t)
	ch := h.send(createTopic("t", 1, 1))
	h.sync()
	select {
	case r := <-ch:
		t.Fatalf("answered before its records committed: %+v", r)
	default:
	}
	// The next request already sees the uncommitted topic.
	dup := h.send(createTopic("t", 1, 1))
	h.sync()
	h.commit(false)
	if rt := h.wait(ch).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 {
		t.Fatalf("create: %+v", rt)
	}
	if rt := h.wait(dup).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("second create of a pending topic: error %d, want TOPIC_ALREADY_EXISTS", rt.ErrorCode)
	}
}

func TestLostLeadershipMidRequestAnswersNotControllerAndRevertsToCommitted(t *testing.T) {
	for _, how := range []string{"append fails", "another leader"} {
		t.Run(how, func(t *testing.T) {
			h := heldCluster(t)
			ch := h.send(createTopic("t", 1, 1))
			h.sync()
			if h.ctl.Metrics().GlobalTopicCount != 1 {
				t.Fatal("the pending topic is not in the working image")
			}
			if how == "append fails" {
				h.fail(errors.Join(quorum.ErrNotLeader))
			} else {
				h.follow(2, 2)
			}
			if rt := h.wait(ch).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != kerr.NotController.Code {
				t.Fatalf("error %d, want NOT_CONTROLLER", rt.ErrorCode)
			}
			poll.Until(t, 10*time.Second, "inactive", func() bool { _, ok := h.ctl.Active(); return !ok })
			h.sync()
			if m := h.ctl.Metrics(); m.GlobalTopicCount != 0 || m.ActiveControllerCount != 0 {
				t.Fatalf("metrics %+v, want the committed state without the topic", m)
			}
			// Leading again, it serves from the committed image.
			h.lead(3)
			again := h.send(createTopic("t", 1, 1))
			h.sync()
			h.commit(true)
			if rt := h.wait(again).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 {
				t.Fatalf("create in the new epoch: error %d", rt.ErrorCode)
			}
		})
	}
}

func TestCommittedImageAndCommitCompletionInEitherOrder(t *testing.T) {
	for _, imageFirst := range []bool{true, false} {
		name := map[bool]string{true: "image first", false: "commit first"}[imageFirst]
		t.Run(name, func(t *testing.T) {
			h := heldCluster(t)
			ch := h.send(createTopic("a", 1, 1))
			h.sync()
			if imageFirst {
				h.publishOnly()
				h.sync()
				// The image holds "a" and the batch is still pending: the
				// controller must not replay it twice.
				dup := h.send(createTopic("a", 1, 1))
				h.sync()
				h.completeOnly()
				if rt := h.wait(dup).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != kerr.TopicAlreadyExists.Code {
					t.Fatalf("error %d, want TOPIC_ALREADY_EXISTS", rt.ErrorCode)
				}
			} else {
				h.commit(false)
			}
			if rt := h.wait(ch).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 {
				t.Fatalf("create: %+v", rt)
			}
			// A foreign writer's record lands in between.
			v := "1"
			h.commitRecords([]record.Record{&record.ConfigRecord{ResourceType: record.ResourceBroker, Name: "background", Value: &v}})
			next := h.send(createTopic("b", 1, 1))
			h.sync()
			h.commit(imageFirst)
			if rt := h.wait(next).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 {
				t.Fatalf("create after a foreign record: %+v", rt)
			}
			poll.Until(t, 10*time.Second, "no pending batch", func() bool {
				done := make(chan int, 1)
				h.ctl.box.post(func() { done <- len(h.ctl.st.pending) })
				return <-done == 0
			})
			img := h.image()
			if img.Topics().TopicByName("a") == nil || img.Topics().TopicByName("b") == nil {
				t.Fatal("topics missing from the committed image")
			}
			if cfg := img.Configs(); cfg.IsEmpty() {
				t.Fatal("foreign config lost")
			}
		})
	}
}

// A request that writes nothing waits for what is pending; a batch whose
// commit completed before the committed image holds it is no longer
// pending for that purpose, or a heartbeat arriving in that window would
// never be answered (the broker then stays fenced for good).
func TestRequestWithoutRecordsAfterACommitTheImageHasNotReached(t *testing.T) {
	h := heldCluster(t)
	ch := h.send(createTopic("a", 1, 1))
	h.sync()
	h.completeOnly()
	if rt := h.wait(ch).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 {
		t.Fatalf("create: %+v", rt)
	}
	hb := h.send(heartbeat(101, h.image().Cluster().Broker(101).Epoch, h.image().Provenance().LastContainedOffset))
	h.sync()
	if r := h.wait(hb).(*kmsg.BrokerHeartbeatResponse); r.ErrorCode != 0 || r.IsFenced {
		t.Fatalf("heartbeat: %+v", r)
	}
}

func TestNoOpEveryInterval(t *testing.T) {
	h, _ := cluster(t, 1, Config{NoOpInterval: 500 * time.Millisecond})
	count := func() int {
		n := 0
		for _, r := range h.records() {
			if _, ok := r.(*record.NoOpRecord); ok {
				n++
			}
		}
		return n
	}
	before := count()
	h.tick(499 * time.Millisecond)
	if count() != before {
		t.Fatal("no-op before the idle interval")
	}
	h.tick(time.Millisecond)
	poll.Until(t, 10*time.Second, "a no-op record", func() bool { return count() == before+1 })
	// Another write does not postpone the next one, as in Kafka.
	h.createTopic("t", 1, 1)
	h.tick(500 * time.Millisecond)
	poll.Until(t, 10*time.Second, "a second no-op record", func() bool { return count() == before+2 })
}

func TestCloseAnswersNotControllerAndIsIdempotent(t *testing.T) {
	h := heldCluster(t)
	ch := h.send(createTopic("t", 1, 1))
	h.sync()
	h.ctl.Close()
	h.ctl.Close()
	if rt := h.wait(ch).(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != kerr.NotController.Code {
		t.Fatalf("error %d after close, want NOT_CONTROLLER", rt.ErrorCode)
	}
	if _, ok := h.ctl.Active(); ok {
		t.Fatal("active after close")
	}
}
