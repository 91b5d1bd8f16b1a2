package server

import (
	crand "crypto/rand"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// zkAPIs are the APIs only a ZooKeeper-era broker serves: the
// controller's pushes, and the requests for the controller, which the
// broker that is the controller answers. The cluster's own go to members
// only. The versions start where the fields kraftlab reads exist and end
// at Kafka 3.9's.
var zkAPIs = []wire.APIRange{
	{Key: kmsg.LeaderAndISR.Int16(), MinVersion: 2, MaxVersion: 7, MembersOnly: true},
	{Key: kmsg.UpdateMetadata.Int16(), MinVersion: 5, MaxVersion: 8, MembersOnly: true},
	{Key: kmsg.StopReplica.Int16(), MinVersion: 3, MaxVersion: 4, MembersOnly: true},
	{Key: kmsg.ControlledShutdown.Int16(), MinVersion: 2, MaxVersion: 3, MembersOnly: true},
	{Key: kmsg.AlterPartition.Int16(), MinVersion: 2, MaxVersion: 3, MembersOnly: true},
	{Key: kmsg.AllocateProducerIDs.Int16(), MinVersion: 0, MaxVersion: 0, MembersOnly: true},
	{Key: kmsg.CreateTopics.Int16(), MinVersion: 2, MaxVersion: 7},
	{Key: kmsg.DeleteTopics.Int16(), MinVersion: 1, MaxVersion: 6},
	{Key: kmsg.CreatePartitions.Int16(), MinVersion: 0, MaxVersion: 3},
}

// register serves zkAPIs on mux.
func (b *ZkBrokerServer) register(mux *wire.Mux) error {
	for _, api := range zkAPIs {
		if err := mux.Handle(api, wire.HandlerFunc(b.serve)); err != nil {
			return err
		}
	}
	return nil
}

func (b *ZkBrokerServer) serve(req *wire.Request) {
	switch req.Body.(type) {
	case *kmsg.LeaderAndISRRequest, *kmsg.UpdateMetadataRequest, *kmsg.StopReplicaRequest:
		if b.gate.admit(req) {
			b.wg.Add(1)
			go b.awaitRegistration(req)
		}
	default:
		// The controller's and CreateTopics' answers wait: on the
		// controller's event loop, or for the topic's leaders.
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			req.Respond(b.answer(req.Body))
		}()
	}
}

// applyPush hands a controller's push to the broker's metadata and
// answers it (the push gate lets it through).
func (b *ZkBrokerServer) applyPush(req *wire.Request) {
	var resp kmsg.Response
	var brokerEpoch int64
	var code int16
	switch body := req.Body.(type) {
	case *kmsg.LeaderAndISRRequest:
		r := b.meta.leaderAndIsr(body)
		resp, brokerEpoch, code = r, body.BrokerEpoch, r.ErrorCode
	case *kmsg.UpdateMetadataRequest:
		r := b.meta.updateMetadata(body)
		resp, brokerEpoch, code = r, body.BrokerEpoch, r.ErrorCode
	case *kmsg.StopReplicaRequest:
		r := b.meta.stopReplica(body)
		resp, brokerEpoch, code = r, body.BrokerEpoch, r.ErrorCode
	}
	if code == kerr.StaleBrokerEpoch.Code {
		// As Kafka's KafkaApis logs it: a push for a previous session
		// or incarnation.
		b.s.log.Info("refused a push for an older broker epoch", "api", kmsg.NameForKey(req.Key()),
			"request_broker_epoch", brokerEpoch, "broker_epoch", b.epoch.Load())
	}
	req.Respond(resp)
}

// awaitRegistration answers a push the gate holds with
// STALE_BROKER_EPOCH if the incarnation has not registered within the
// controller's wait for an answer, or stops first; once it registered,
// the gate has let the push through.
func (b *ZkBrokerServer) awaitRegistration(req *wire.Request) {
	defer b.wg.Done()
	t := b.s.cfg.Clock.NewTimer(controllerSocketTimeout)
	defer t.Stop()
	select {
	case <-b.gate.opened:
		return
	case <-b.ctx.Done():
	case <-t.C:
	}
	b.gate.refuse(req)
}

// answer is the answer to a request for the controller.
func (b *ZkBrokerServer) answer(body kmsg.Request) kmsg.Response {
	ctl := b.controller.Load()
	if ctl == nil || !ctl.Status().Active {
		return notController(body)
	}
	ctx, cancel := b.s.cfg.Clock.WithTimeout(b.ctx, controllerSocketTimeout)
	defer cancel()
	var resp kmsg.Response
	var err error
	switch r := body.(type) {
	case *kmsg.ControlledShutdownRequest:
		resp, err = ctl.ControlledShutdown(ctx, r)
	case *kmsg.AlterPartitionRequest:
		resp, err = ctl.AlterPartition(ctx, r)
	case *kmsg.AllocateProducerIDsRequest:
		resp, err = ctl.AllocateProducerIDs(ctx, r)
	case *kmsg.CreateTopicsRequest:
		return b.createTopics(r)
	case *kmsg.DeleteTopicsRequest:
		return b.deleteTopics(r)
	case *kmsg.CreatePartitionsRequest:
		return b.createPartitions(r)
	}
	if err != nil {
		return notController(body)
	}
	return resp
}

// notController is body's answer from a broker that is not the
// controller.
func notController(body kmsg.Request) kmsg.Response {
	code := kerr.NotController.Code
	switch r := body.(type) {
	case *kmsg.ControlledShutdownRequest:
		resp := kmsg.NewPtrControlledShutdownResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.AlterPartitionRequest:
		resp := kmsg.NewPtrAlterPartitionResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.AllocateProducerIDsRequest:
		resp := kmsg.NewPtrAllocateProducerIDsResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.CreateTopicsRequest:
		resp := kmsg.NewPtrCreateTopicsResponse()
		for _, t := range r.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = t.Topic, code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.CreatePartitionsRequest:
		resp := kmsg.NewPtrCreatePartitionsResponse()
		for _, t := range r.Topics {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = t.Topic, code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.DeleteTopicsRequest:
		resp := kmsg.NewPtrDeleteTopicsResponse()
		for _, t := range deleteTopicsNamed(r) {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	return nil
}

// Kafka's num.partitions and default.replication.factor defaults.
const (
	defaultNumPartitions     = 1
	defaultReplicationFactor = 1
)

// createTopics is CreateTopics on the controller broker (Kafka's
// ZkAdminManager): each topic's assignment is written to ZooKeeper, the
// controller's watch makes its partitions, and the answer waits until
// this broker's metadata shows a leader for each, up to the request's
// timeout.
func (b *ZkBrokerServer) createTopics(req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := kmsg.NewPtrCreateTopicsResponse()
	c := b.zk.Load()
	img := b.s.servedImage()
	live := img.Cluster().BrokerIDs()
	var created []string
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		// Never null: Kafka's admin client (v5+) reads every result's
		// list, and a null one fails kafka-topics --create.
		rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
		a, code, msg := b.assign(t, img, live)
		switch {
		case code != 0:
		case req.ValidateOnly:
		default:
			if err := c.CreateTopic(a); err != nil {
				code, msg = kerr.TopicAlreadyExists.Code, err.Error()
				if !errors.Is(err, kafkazk.ErrTopicExists) {
					code = kerr.UnknownServerError.Code
				}
				break
			}
			created = append(created, t.Topic)
			rt.TopicID = a.ID
		}
		rt.ErrorCode = code
		if msg != "" {
			rt.ErrorMessage = &msg
		}
		if code == 0 {
			rt.NumPartitions, rt.ReplicationFactor = int32(len(a.Replicas)), int16(len(a.Replicas[0]))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(created) == 0 {
		return resp
	}
	if !b.awaitMetadata(req.TimeoutMillis, func() bool { return b.leadersKnown(created, nil) }) {
		markTimedOut(resp, created)
	}
	return resp
}

// awaitMetadata waits, up to timeoutMs, until ready says this broker's
// metadata shows what a request made (Kafka's DelayedCreatePartitions):
// false if it did not in time.
func (b *ZkBrokerServer) awaitMetadata(timeoutMs int32, ready func() bool) bool {
	if timeoutMs <= 0 {
		return false
	}
	deadline := b.s.cfg.Clock.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	for !ready() {
		if !b.s.cfg.Clock.Now().Before(deadline) {
			return false
		}
		select {
		case <-b.ctx.Done():
			return false
		case <-b.s.cfg.Clock.After(20 * time.Millisecond):
		}
	}
	return true
}

// leadersKnown reports whether this broker's metadata has a leader for
// every partition of topics, and at least counts[topic] partitions where
// counts names one.
func (b *ZkBrokerServer) leadersKnown(topics []string, counts map[string]int32) bool {
	img := b.s.servedImage()
	for _, name := range topics {
		t := img.Topics().TopicByName(name)
		if t == nil || int32(t.NumPartitions()) < counts[name] {
			return false
		}
		for _, p := range t.PartitionIDs() {
			if t.Partition(p).Leader < 0 {
				return false
			}
		}
	}
	return true
}

func markTimedOut(resp *kmsg.CreateTopicsResponse, topics []string) {
	for i := range resp.Topics {
		if slices.Contains(topics, resp.Topics[i].Topic) {
			resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
		}
	}
}

// assign checks one topic of a CreateTopics and gives it its replicas:
// the ones the request names, or Kafka's rack-unaware spread over the
// live brokers.
func (b *ZkBrokerServer) assign(t kmsg.CreateTopicsRequestTopic, img *image.MetadataImage, live []int32) (kafkazk.Assignment, int16, string) {
	if err := controller.ValidateTopicName(t.Topic); err != nil {
		return kafkazk.Assignment{}, kerr.InvalidTopicException.Code, err.Error()
	}
	if img.Topics().TopicByName(t.Topic) != nil {
		return kafkazk.Assignment{}, kerr.TopicAlreadyExists.Code, "Topic '" + t.Topic + "' already exists."
	}
	a := kafkazk.Assignment{Topic: t.Topic, Replicas: map[int32][]int32{}}
	if _, err := crand.Read(a.ID[:]); err != nil {
		return a, kerr.UnknownServerError.Code, err.Error()
	}
	if len(t.ReplicaAssignment) > 0 {
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return a, kerr.InvalidRequest.Code, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."
		}
		for _, ra := range t.ReplicaAssignment {
			if len(ra.Replicas) == 0 || ra.Partition < 0 {
				return a, kerr.InvalidReplicaAssignment.Code, "a partition has no replicas"
			}
			a.Replicas[ra.Partition] = ra.Replicas
		}
		return a, 0, ""
	}
	n, rf := t.NumPartitions, int32(t.ReplicationFactor)
	if n == -1 {
		n = defaultNumPartitions
	}
	if rf == -1 {
		rf = defaultReplicationFactor
	}
	switch {
	case n <= 0:
		return a, kerr.InvalidPartitions.Code, "Number of partitions must be larger than 0."
	case rf <= 0:
		return a, kerr.InvalidReplicationFactor.Code, "Replication factor must be larger than 0."
	case int(rf) > len(live):
		return a, kerr.InvalidReplicationFactor.Code, "Replication factor: " + itoa(rf) + " larger than available brokers: " + itoa(int32(len(live))) + "."
	case n > int32(b.s.cfg.Settings.MaxBrokerPartitions)*int32(len(live)) && b.s.cfg.Settings.MaxBrokerPartitions > 0:
		return a, kerr.InvalidPartitions.Code, "too many partitions for the live brokers"
	}
	a.Replicas = spreadReplicas(live, n, rf)
	return a, 0, ""
}

// spreadReplicas is Kafka's rack-unaware assignment
// (AdminUtils.assignReplicasToBrokersRackUnaware) of a new topic's
// partitions, from a random broker at a random shift.
func spreadReplicas(brokers []int32, partitions, rf int32) map[int32][]int32 {
	n := int32(len(brokers))
	return spreadReplicasFrom(brokers, 0, partitions, rf, rand.Int32N(n), rand.Int32N(n))
}

// spreadReplicasFrom assigns partitions from..from+count-1: partition
// p's first replica is broker (p+start) mod n, and the others follow at
// a shift that grows each time the partitions went once round the
// brokers, so that the followers of one broker's leaders spread too.
func spreadReplicasFrom(brokers []int32, from, count, rf, start, shift int32) map[int32][]int32 {
	n := int32(len(brokers))
	out := make(map[int32][]int32, count)
	for p := from; p < from+count; p++ {
		if p > 0 && p%n == 0 {
			shift++
		}
		lead := (p + start) % n
		rs := []int32{brokers[lead]}
		for j := range rf - 1 {
			rs = append(rs, brokers[(lead+1+(shift+j)%(n-1))%n])
		}
		out[p] = rs
	}
	return out
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
