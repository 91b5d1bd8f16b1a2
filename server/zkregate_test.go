package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// A ZooKeeper-era partition leader killed and started again at once,
// while ZooKeeper still holds its previous session's registration, takes
// none of the controller's pushes before this incarnation registers: a
// LeaderAndIsr naming it leader in the leader epoch its previous
// incarnation led in (what a controller that still counts that session
// sends, at a failover or on its queue's retries), an UpdateMetadata and
// a StopReplica, addressed to the previous incarnation's broker epoch,
// wait unanswered, as Kafka 3.9's broker serves no request before it
// registered, and once it has they are refused with STALE_BROKER_EPOCH.
// Taken, the LeaderAndIsr would make it lead in the old epoch with a log
// the kill may have cut short. The broker comes back as a replica in a
// newer leader epoch, from the pushes for its new broker epoch.
func TestZkRestartedBrokerTakesNoPushBeforeItRegisters(t *testing.T) {
	// Long enough that the restarted broker stays unregistered while the
	// pushes are sent.
	c := startZkClusterWith(t, 6*time.Second, 1, 2, 3)
	ctlID := c.controller(t, -1)
	var x int32 = 1
	for x == ctlID {
		x++
	}
	replicas := []int32{x}
	for _, id := range []int32{1, 2, 3} {
		if id != x {
			replicas = append(replicas, id)
		}
	}

	const topic = "zkgate"
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds()...), kgo.MetadataMinAge(50*time.Millisecond), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	create := kmsg.NewPtrCreateTopicsRequest()
	create.TimeoutMillis = 10000
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	ct.ReplicaAssignment = append(ct.ReplicaAssignment, ra)
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s led by %d: %v %+v", topic, x, err, resp)
	}

	ctl := c.group.Server(ctlID).ZkBrokerServer()
	// The partition as the controller pushes it.
	state := func() (*image.PartitionRegistration, record.Uuid) {
		tp := ctl.Image().Topics().TopicByName(topic)
		if tp == nil {
			return nil, record.ZeroUuid
		}
		return tp.Partition(0), tp.ID()
	}
	poll.Until(t, 30*time.Second, fmt.Sprintf("broker %d leading %s-0 with every replica in the ISR", x, topic), func() bool {
		p, _ := state()
		r, ok := zkReplica(c.group.Server(x), topic, 0)
		return p != nil && p.Leader == x && len(p.Isr) == len(replicas) && ok && r.Role == partition.RoleLeader
	})
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p, topicID := state()
	oldEpoch := c.group.Server(x).ZkBrokerServer().BrokerEpoch()

	srv := c.group.Server(x)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := srv.ZkBrokerServer()
	unregistered := func(when string) {
		t.Helper()
		if e := b.BrokerEpoch(); e != -1 {
			t.Fatalf("%s, the restarted broker %d registered already (epoch %d): the restart did not come within its previous session", when, x, e)
		}
	}
	unregistered("before the pushes")

	controllerEpoch := ctl.Controller().Status().Epoch
	leaderAndIsr := func(brokerEpoch int64) *kmsg.LeaderAndISRRequest {
		req := kmsg.NewPtrLeaderAndISRRequest()
		req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 7, ctlID, controllerEpoch, brokerEpoch
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic, ts.TopicID = topic, topicID
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Topic, ps.Partition, ps.Leader, ps.LeaderEpoch = topic, 0, p.Leader, p.LeaderEpoch
		ps.ISR, ps.Replicas, ps.ZKVersion = slices.Clone(p.Isr), slices.Clone(p.Replicas), p.PartitionEpoch
		ts.PartitionStates = append(ts.PartitionStates, ps)
		req.TopicStates = append(req.TopicStates, ts)
		return req
	}
	updateMetadata := func(brokerEpoch int64) *kmsg.UpdateMetadataRequest {
		req := kmsg.NewPtrUpdateMetadataRequest()
		req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 8, ctlID, controllerEpoch, brokerEpoch
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = topic, topicID
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Topic, ps.Partition, ps.Leader, ps.LeaderEpoch = topic, 0, p.Leader, p.LeaderEpoch
		ps.ISR, ps.Replicas, ps.ZKVersion = slices.Clone(p.Isr), slices.Clone(p.Replicas), p.PartitionEpoch
		ts.PartitionStates = append(ts.PartitionStates, ps)
		req.TopicStates = append(req.TopicStates, ts)
		return req
	}
	stopReplica := func(brokerEpoch int64) *kmsg.StopReplicaRequest {
		req := kmsg.NewPtrStopReplicaRequest()
		req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 4, ctlID, controllerEpoch, brokerEpoch
		rt := kmsg.NewStopReplicaRequestTopic()
		rt.Topic = topic
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.LeaderEpoch = 0, p.LeaderEpoch
		rt.PartitionStates = append(rt.PartitionStates, ps)
		req.Topics = append(req.Topics, rt)
		return req
	}
	// push sends req from the controller broker, as its channel to x
	// does, and delivers the answer's top-level error code on the
	// channel it returns.
	push := func(req kmsg.Request) <-chan int16 {
		answer := make(chan int16, 1)
		go func() {
			resp, err := ctl.pushes.send(ctx, x, req)
			switch r := resp.(type) {
			case *kmsg.LeaderAndISRResponse:
				answer <- r.ErrorCode
			case *kmsg.UpdateMetadataResponse:
				answer <- r.ErrorCode
			case *kmsg.StopReplicaResponse:
				answer <- r.ErrorCode
			default:
				// No answer (err says why): never a Kafka error code.
				_ = err
				answer <- -1
			}
		}()
		return answer
	}
	pushes := []kmsg.Request{leaderAndIsr(oldEpoch), updateMetadata(oldEpoch), stopReplica(oldEpoch)}
	var answers []<-chan int16
	for _, req := range pushes {
		answers = append(answers, push(req))
	}
	// Until the gate holds them all: nothing answered, nothing hosted.
	taken := func() {
		t.Helper()
		if r, ok := zkReplica(srv, topic, 0); ok {
			t.Fatalf("before it registered, restarted broker %d hosts %s-0 as %v in leader epoch %d, its previous incarnation's %d", x, topic, r.Role, r.LeaderEpoch, p.LeaderEpoch)
		}
		for i, a := range answers {
			select {
			case code := <-a:
				t.Fatalf("before it registered, broker %d answered a %s for its previous incarnation's epoch %d (error %d)", x, kmsg.NameForKey(pushes[i].Key()), oldEpoch, code)
			default:
			}
		}
	}
	poll.Until(t, 10*time.Second, fmt.Sprintf("restarted broker %d holding the %d pushes", x, len(pushes)), func() bool {
		taken()
		return b.gate.holding() == len(pushes)
	})
	taken()
	if img := b.Image(); img.Topics().TopicByName(topic) != nil || b.ControllerID() != -1 {
		t.Errorf("before it registered, restarted broker %d's metadata took a push: controller %d, topic %v", x, b.ControllerID(), img.Topics().TopicByName(topic) != nil)
	}
	unregistered("after the pushes")

	poll.Until(t, 30*time.Second, fmt.Sprintf("broker %d registered with a new epoch", x), func() bool { return b.BrokerEpoch() > oldEpoch })
	for i, a := range answers {
		select {
		case code := <-a:
			if code != kerr.StaleBrokerEpoch.Code {
				t.Errorf("once registered, broker %d answered a %s for its previous incarnation's epoch with error %d, want STALE_BROKER_EPOCH (%d)", x, kmsg.NameForKey(pushes[i].Key()), code, kerr.StaleBrokerEpoch.Code)
			}
		case <-ctx.Done():
			t.Fatalf("broker %d never answered the %s it held", x, kmsg.NameForKey(pushes[i].Key()))
		}
	}
	if code := <-push(leaderAndIsr(oldEpoch)); code != kerr.StaleBrokerEpoch.Code {
		t.Errorf("once registered, broker %d answered a LeaderAndIsr for its previous incarnation's epoch with error %d, want STALE_BROKER_EPOCH", x, code)
	}
	poll.Until(t, 30*time.Second, fmt.Sprintf("broker %d back as a replica of %s-0 in a leader epoch above %d", x, topic, p.LeaderEpoch), func() bool {
		r, ok := zkReplica(srv, topic, 0)
		if ok && r.LeaderEpoch <= p.LeaderEpoch {
			t.Fatalf("restarted broker %d hosts %s-0 as %v in leader epoch %d, its previous incarnation's", x, topic, r.Role, r.LeaderEpoch)
		}
		return ok && r.Role != partition.RoleNone
	})
}

// zkReplica is broker s's replica of topic-idx, if it hosts one.
func zkReplica(s *Server, topic string, idx int32) (ReplicaStats, bool) {
	rm := s.ReplicaManager()
	if rm == nil {
		return ReplicaStats{}, false
	}
	for _, r := range rm.Stats().Partitions {
		if r.Topic == topic && r.Partition == idx {
			return r, true
		}
	}
	return ReplicaStats{}, false
}
