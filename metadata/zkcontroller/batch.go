package zkcontroller

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The versions a Kafka 3.9 controller sends (its IBP 3.9 picks them).
const (
	leaderAndIsrVersion   int16 = 7
	updateMetadataVersion int16 = 8
	stopReplicaVersion    int16 = 4
)

// listenerName and plaintext are the one listener kraftlab's brokers
// register, and its security protocol's id.
const (
	listenerName        = "PLAINTEXT"
	plaintext     int16 = 0
	noLeader            = -1
	noBrokerEpoch       = -1
	// leaderDuringDelete is the leader UpdateMetadata names for a
	// partition being deleted (Kafka's LeaderAndIsr.LeaderDuringDelete).
	leaderDuringDelete = -2
)

// requestBatch gathers the requests one controller action sends, per
// broker, and sends them in Kafka's order: LeaderAndIsr, then
// UpdateMetadata, then StopReplica (ControllerBrokerRequestBatch).
type requestBatch struct {
	ctx *controllerContext
	id  int32
	// leaderAndIsr are the partitions each broker is told it leads or
	// follows, and whether the replica is new.
	leaderAndIsr map[int32]map[TopicPartition]bool
	// updateMetadata are the partitions each broker is told of; a broker
	// present with none still gets the live brokers.
	updateMetadata map[int32]map[TopicPartition]bool
	stopReplica    map[int32][]TopicPartition
	// deleting makes the StopReplica delete the replicas' logs.
	deleting bool
}

func newBatch(ctx *controllerContext, id int32) *requestBatch {
	return &requestBatch{ctx: ctx, id: id,
		leaderAndIsr:   map[int32]map[TopicPartition]bool{},
		updateMetadata: map[int32]map[TopicPartition]bool{},
		stopReplica:    map[int32][]TopicPartition{},
	}
}

// leaderAndIsrTo tells brokers tp's state, and every live broker too
// (Kafka's addLeaderAndIsrRequestForBrokers queues both).
func (b *requestBatch) leaderAndIsrTo(brokers []int32, tp TopicPartition, isNew bool) {
	for _, id := range brokers {
		if !b.ctx.isLive(id) {
			continue
		}
		if b.leaderAndIsr[id] == nil {
			b.leaderAndIsr[id] = map[TopicPartition]bool{}
		}
		b.leaderAndIsr[id][tp] = isNew
	}
	b.updateMetadataTo(b.ctx.liveIDs(), tp)
}

// updateMetadataTo tells brokers the live brokers and tps' states.
func (b *requestBatch) updateMetadataTo(brokers []int32, tps ...TopicPartition) {
	for _, id := range brokers {
		if b.updateMetadata[id] == nil {
			b.updateMetadata[id] = map[TopicPartition]bool{}
		}
		for _, tp := range tps {
			b.updateMetadata[id][tp] = true
		}
	}
}

// stopReplicaTo tells broker id to stop tp's replica, keeping its log.
func (b *requestBatch) stopReplicaTo(id int32, tp TopicPartition) {
	b.stopReplica[id] = append(b.stopReplica[id], tp)
}

// send queues the batch on the brokers' senders.
func (b *requestBatch) send(ch *channelManager, done func(to int32, resp kmsg.Response)) {
	for _, id := range slices.Sorted(maps.Keys(b.leaderAndIsr)) {
		ch.enqueue(id, b.leaderAndIsrRequest(id), func(r kmsg.Response) { done(id, r) })
	}
	for _, id := range slices.Sorted(maps.Keys(b.updateMetadata)) {
		if b.ctx.isLive(id) {
			ch.enqueue(id, b.updateMetadataRequest(id), func(r kmsg.Response) { done(id, r) })
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.stopReplica)) {
		ch.enqueue(id, b.stopReplicaRequest(id), func(r kmsg.Response) { done(id, r) })
	}
}

func (b *requestBatch) brokerEpoch(id int32) int64 {
	if br, ok := b.ctx.live[id]; ok {
		return br.Epoch
	}
	return noBrokerEpoch
}

func (b *requestBatch) leaderAndIsrRequest(to int32) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = leaderAndIsrVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = b.id, b.ctx.seat.Epoch, b.brokerEpoch(to)
	leaders := map[int32]bool{}
	byTopic := map[string][]kmsg.LeaderAndISRRequestTopicPartition{}
	parts := b.leaderAndIsr[to]
	for _, tp := range sortedKeys(parts) {
		s := b.ctx.states[tp]
		p := kmsg.NewLeaderAndISRRequestTopicPartition()
		p.Topic, p.Partition = tp.Topic, tp.Partition
		p.ControllerEpoch, p.Leader, p.LeaderEpoch = s.ControllerEpoch, s.Leader, s.LeaderEpoch
		p.ISR, p.ZKVersion, p.Replicas = slices.Clone(s.ISR), s.ZkVersion, slices.Clone(b.ctx.replicas(tp))
		p.IsNew = parts[tp]
		if s.Recovering {
			p.LeaderRecoveryState = 1
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], p)
		if s.Leader >= 0 {
			leaders[s.Leader] = true
		}
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		t := kmsg.NewLeaderAndISRRequestTopicState()
		t.Topic, t.TopicID, t.PartitionStates = topic, b.ctx.topicID(topic), byTopic[topic]
		req.TopicStates = append(req.TopicStates, t)
	}
	for _, id := range slices.Sorted(maps.Keys(leaders)) {
		br, ok := b.ctx.live[id]
		if !ok {
			continue
		}
		ep, ok := br.Endpoint(listenerName)
		if !ok {
			continue
		}
		l := kmsg.NewLeaderAndISRRequestLiveLeader()
		l.BrokerID, l.Host, l.Port = id, ep.Host, ep.Port
		req.LiveLeaders = append(req.LiveLeaders, l)
	}
	return req
}

func (b *requestBatch) updateMetadataRequest(to int32) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = updateMetadataVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = b.id, b.ctx.seat.Epoch, b.brokerEpoch(to)
	byTopic := map[string][]kmsg.UpdateMetadataRequestTopicPartition{}
	for _, tp := range sortedKeys(b.updateMetadata[to]) {
		s, ok := b.ctx.states[tp]
		if !ok {
			continue
		}
		p := kmsg.NewUpdateMetadataRequestTopicPartition()
		p.Topic, p.Partition = tp.Topic, tp.Partition
		p.ControllerEpoch, p.Leader, p.LeaderEpoch = s.ControllerEpoch, s.Leader, s.LeaderEpoch
		p.ISR, p.ZKVersion = slices.Clone(s.ISR), s.ZkVersion
		p.Replicas = slices.Clone(b.ctx.replicas(tp))
		for _, r := range p.Replicas {
			if !b.ctx.isLive(r) {
				p.OfflineReplicas = append(p.OfflineReplicas, r)
			}
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], p)
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		t := kmsg.NewUpdateMetadataRequestTopicState()
		t.Topic, t.TopicID, t.PartitionStates = topic, b.ctx.topicID(topic), byTopic[topic]
		req.TopicStates = append(req.TopicStates, t)
	}
	for _, id := range b.ctx.liveIDs() {
		br := b.ctx.live[id]
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		if br.Rack != "" {
			rack := br.Rack
			lb.Rack = &rack
		}
		for _, ep := range br.Endpoints {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.Host, e.Port, e.ListenerName, e.SecurityProtocol = ep.Host, ep.Port, ep.Listener, plaintext
			lb.Endpoints = append(lb.Endpoints, e)
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}

func (b *requestBatch) stopReplicaRequest(to int32) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = stopReplicaVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = b.id, b.ctx.seat.Epoch, b.brokerEpoch(to)
	byTopic := map[string][]kmsg.StopReplicaRequestTopicPartitionState{}
	for _, tp := range b.stopReplica[to] {
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.LeaderEpoch, ps.Delete = tp.Partition, b.ctx.states[tp].LeaderEpoch, b.deleting
		if b.deleting {
			ps.LeaderEpoch = leaderDuringDelete
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], ps)
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		t := kmsg.NewStopReplicaRequestTopic()
		t.Topic, t.PartitionStates = topic, byTopic[topic]
		req.Topics = append(req.Topics, t)
	}
	return req
}

func sortedKeys(m map[TopicPartition]bool) []TopicPartition {
	tps := slices.Collect(maps.Keys(m))
	sortPartitions(tps)
	return tps
}
