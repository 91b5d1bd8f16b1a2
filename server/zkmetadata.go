package server

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaderDuringDelete is the leader UpdateMetadata names for a partition
// being deleted (Kafka's LeaderAndIsr.LeaderDuringDelete).
const leaderDuringDelete = -2

// zkPartition is one partition as the controller last pushed it.
type zkPartition struct {
	topicID             record.Uuid
	leader, leaderEpoch int32
	isr, replicas       []int32
	zkVersion           int32
	recovering          bool
}

// record is the partition as the record a KRaft broker would replay.
func (p zkPartition) record(partition int32) *record.PartitionRecord {
	pr := &record.PartitionRecord{PartitionID: partition, TopicID: p.topicID, Replicas: p.replicas, Isr: p.isr,
		Leader: p.leader, LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.zkVersion}
	if p.recovering {
		pr.LeaderRecoveryState = 1
	}
	return pr
}

// zkMetadata is a ZooKeeper-era broker's metadata (Kafka's
// ZkMetadataCache and the ReplicaManager's controller epoch): only what
// the controller pushed, LeaderAndIsr for the partitions the broker
// hosts and UpdateMetadata for every partition and the live brokers.
// Each accepted push makes a new image, which the ReplicaManager and the
// Metadata answers read as a KRaft broker's read the loader's: only the
// source differs. Its methods are safe for concurrent use.
type zkMetadata struct {
	id int32
	// publish hands a new image, and the delta that made it (nil for a
	// whole new image), to the ReplicaManager.
	publish func(*image.MetadataDelta, *image.MetadataImage)

	mu sync.Mutex
	// controllerID and controllerEpoch are of the newest controller
	// heard; a push from an older epoch is refused.
	controllerID, controllerEpoch int32
	brokers                       map[int32]record.RegisterBrokerRecord
	partitions                    map[fetcher.TopicPartition]zkPartition
	// brokerEpoch is this broker's own epoch (its registration's czxid),
	// unregisteredEpoch before this incarnation first registered; a push
	// naming an older one is for an earlier session or incarnation.
	brokerEpoch int64
	// pushes counts the accepted pushes, the image's "offset".
	pushes int64
	// img is the newest image made; changed are the partitions pushed
	// since, and brokersChanged says the live brokers were.
	img            *image.MetadataImage
	changed        map[fetcher.TopicPartition]bool
	brokersChanged bool
	// removed are the partitions deleted since, with their topic ids.
	removed map[fetcher.TopicPartition]record.Uuid
}

func newZkMetadata(id int32, publish func(*image.MetadataDelta, *image.MetadataImage)) *zkMetadata {
	return &zkMetadata{id: id, publish: publish, controllerID: -1, brokerEpoch: unregisteredEpoch, img: image.Empty, changed: map[fetcher.TopicPartition]bool{}, removed: map[fetcher.TopicPartition]record.Uuid{},
		brokers: map[int32]record.RegisterBrokerRecord{}, partitions: map[fetcher.TopicPartition]zkPartition{}}
}

// endpoint is the address of broker id's listener, as the last
// UpdateMetadata listed it.
func (m *zkMetadata) endpoint(id int32, listener string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.brokers[id].EndPoints {
		if e.Name == listener {
			return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), true
		}
	}
	return "", false
}

// controller is the controller the last push named, -1 before any.
func (m *zkMetadata) controller() int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.controllerID
}

// setBrokerEpoch records the broker's own epoch after a registration.
func (m *zkMetadata) setBrokerEpoch(e int64) {
	m.mu.Lock()
	m.brokerEpoch = e
	m.mu.Unlock()
}

// unregisteredEpoch is zkMetadata.brokerEpoch before the incarnation's
// first registration: no czxid is negative.
const unregisteredEpoch = -1

// fence checks a push's controller and broker epochs (Kafka's
// isBrokerEpochStale and the ReplicaManager's controller epoch), and
// adopts a newer controller. Called with mu held.
//
// A push for an older broker epoch is refused; one for this epoch, a
// newer one (the controller may learn it before the broker does) or none
// (-1) is taken, as Kafka 3.9's. Before the incarnation registered every
// push is refused: the broker's push gate holds them until then, so this
// only keeps a push that slipped past it from being taken for an
// incarnation whose epoch is not known.
func (m *zkMetadata) fence(controllerID, controllerEpoch int32, brokerEpoch int64) int16 {
	if m.brokerEpoch == unregisteredEpoch || brokerEpoch != -1 && brokerEpoch < m.brokerEpoch {
		return kerr.StaleBrokerEpoch.Code
	}
	if controllerEpoch < m.controllerEpoch {
		return kerr.StaleControllerEpoch.Code
	}
	m.controllerID, m.controllerEpoch = controllerID, controllerEpoch
	return 0
}

// leaderAndIsr applies a LeaderAndIsr: each partition whose leader epoch
// is newer than the one held becomes this broker's to lead or follow
// (Kafka's becomeLeaderOrFollower).
func (m *zkMetadata) leaderAndIsr(req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
	resp := kmsg.NewPtrLeaderAndISRResponse()
	m.mu.Lock()
	// Published under mu, so that images reach the ReplicaManager in the
	// order they were made; the publisher does not block.
	defer m.mu.Unlock()
	if resp.ErrorCode = m.fence(req.ControllerID, req.ControllerEpoch, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	for _, t := range req.TopicStates {
		rt := kmsg.NewLeaderAndISRResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.PartitionStates {
			rp := kmsg.NewLeaderAndISRResponseTopicPartition()
			rp.Topic, rp.Partition = t.Topic, p.Partition
			tp := fetcher.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			cur, known := m.partitions[tp]
			switch {
			case known && cur.topicID != record.Uuid(t.TopicID) && cur.topicID != record.ZeroUuid:
				rp.ErrorCode = kerr.InconsistentTopicID.Code
			case known && p.LeaderEpoch <= cur.leaderEpoch:
				rp.ErrorCode = kerr.StaleControllerEpoch.Code
			case !slices.Contains(p.Replicas, m.id):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				m.partitions[tp] = zkPartition{topicID: record.Uuid(t.TopicID), leader: p.Leader, leaderEpoch: p.LeaderEpoch,
					isr: slices.Clone(p.ISR), replicas: slices.Clone(p.Replicas), zkVersion: p.ZKVersion,
					recovering: p.LeaderRecoveryState == 1}
				m.changed[tp] = true
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	m.publishLocked()
	return resp
}

// updateMetadata applies an UpdateMetadata: the live brokers, and each
// partition's state unless this broker holds a newer one.
func (m *zkMetadata) updateMetadata(req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse {
	resp := kmsg.NewPtrUpdateMetadataResponse()
	m.mu.Lock()
	// Published under mu, so that images reach the ReplicaManager in the
	// order they were made; the publisher does not block.
	defer m.mu.Unlock()
	if resp.ErrorCode = m.fence(req.ControllerID, req.ControllerEpoch, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	m.brokers = map[int32]record.RegisterBrokerRecord{}
	m.brokersChanged = true
	for _, b := range req.LiveBrokers {
		reg := record.RegisterBrokerRecord{BrokerID: b.ID, BrokerEpoch: -1, Rack: b.Rack}
		for _, e := range b.Endpoints {
			if e.Port < 0 || e.Port > 65535 {
				continue
			}
			reg.EndPoints = append(reg.EndPoints, record.BrokerEndpoint{Name: e.ListenerName, Host: e.Host, Port: uint16(e.Port), SecurityProtocol: e.SecurityProtocol})
		}
		m.brokers[b.ID] = reg
	}
	for _, t := range req.TopicStates {
		for _, p := range t.PartitionStates {
			tp := fetcher.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if p.Leader == leaderDuringDelete {
				// The topic is being deleted: the partition leaves the
				// broker's metadata (ZkMetadataCache.removePartitionInfo).
				if cur, ok := m.partitions[tp]; ok {
					delete(m.partitions, tp)
					delete(m.changed, tp)
					m.removed[tp] = cur.topicID
				}
				continue
			}
			if cur, ok := m.partitions[tp]; ok && (p.LeaderEpoch < cur.leaderEpoch || p.LeaderEpoch == cur.leaderEpoch && p.ZKVersion < cur.zkVersion) {
				continue
			}
			m.partitions[tp] = zkPartition{topicID: record.Uuid(t.TopicID), leader: p.Leader, leaderEpoch: p.LeaderEpoch,
				isr: slices.Clone(p.ISR), replicas: slices.Clone(p.Replicas), zkVersion: p.ZKVersion}
			m.changed[tp] = true
		}
	}
	m.publishLocked()
	return resp
}

// stopReplica applies a StopReplica. A partition to delete leaves the
// broker's metadata, so the ReplicaManager deletes its replica; one
// stopped for a controlled shutdown is kept, as the broker stops anyway
// (Kafka stops its fetcher at once).
func (m *zkMetadata) stopReplica(req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse {
	resp := kmsg.NewPtrStopReplicaResponse()
	m.mu.Lock()
	// Published under mu, so that images reach the ReplicaManager in the
	// order they were made; the publisher does not block.
	defer m.mu.Unlock()
	if resp.ErrorCode = m.fence(req.ControllerID, req.ControllerEpoch, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	changed := false
	for _, t := range req.Topics {
		for _, p := range t.PartitionStates {
			rp := kmsg.NewStopReplicaResponsePartition()
			rp.Topic, rp.Partition = t.Topic, p.Partition
			tp := fetcher.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			cur, ok := m.partitions[tp]
			switch {
			case ok && p.LeaderEpoch >= 0 && p.LeaderEpoch < cur.leaderEpoch:
				rp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case ok && (p.Delete || req.DeletePartitions):
				delete(m.partitions, tp)
				delete(m.changed, tp)
				m.removed[tp] = cur.topicID
				changed = true
			}
			resp.Partitions = append(resp.Partitions, rp)
		}
	}
	if changed {
		m.publishLocked()
	}
	return resp
}

// publishLocked makes the next image from the last and what changed
// since, and hands it on; called with mu held. A change a delta cannot
// carry (a topic that lost only some of its partitions) makes the image
// anew.
func (m *zkMetadata) publishLocked() {
	d, err := m.deltaLocked()
	m.changed, m.brokersChanged = map[fetcher.TopicPartition]bool{}, false
	m.removed = map[fetcher.TopicPartition]record.Uuid{}
	if err != nil {
		m.img = m.imageLocked()
		m.publish(nil, m.img)
		return
	}
	m.pushes++
	m.img = d.Apply(image.MetadataProvenance{LastContainedOffset: m.pushes - 1, LastContainedEpoch: m.controllerEpoch})
	m.publish(d, m.img)
}

// deltaLocked is what changed since the last image, as records: the
// live brokers, and each changed partition (its topic's record first if
// the topic is new). Called with mu held.
func (m *zkMetadata) deltaLocked() (*image.MetadataDelta, error) {
	d := image.NewMetadataDelta(m.img)
	if m.brokersChanged {
		for _, id := range m.img.Cluster().BrokerIDs() {
			if _, ok := m.brokers[id]; !ok {
				if err := d.Replay(&record.UnregisterBrokerRecord{BrokerID: id, BrokerEpoch: m.img.Cluster().Broker(id).Epoch}); err != nil {
					return nil, err
				}
			}
		}
		for _, id := range slices.Sorted(maps.Keys(m.brokers)) {
			reg := m.brokers[id]
			if err := d.Replay(&reg); err != nil {
				return nil, err
			}
		}
	}
	// A deleted topic goes whole; a delta cannot take one partition out.
	gone := map[record.Uuid]bool{}
	for _, id := range m.removed {
		gone[id] = true
	}
	for _, p := range m.partitions {
		if gone[p.topicID] {
			return nil, fmt.Errorf("topic id %s lost only some of its partitions", p.topicID)
		}
	}
	for _, id := range slices.SortedFunc(maps.Keys(gone), func(a, b record.Uuid) int { return strings.Compare(a.String(), b.String()) }) {
		if m.img.Topics().Topic(id) == nil {
			continue
		}
		if err := d.Replay(&record.RemoveTopicRecord{TopicID: id}); err != nil {
			return nil, err
		}
	}
	added := map[record.Uuid]bool{}
	for _, tp := range slices.SortedFunc(maps.Keys(m.changed), func(a, b fetcher.TopicPartition) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return int(a.Partition - b.Partition)
	}) {
		p := m.partitions[tp]
		if p.topicID == record.ZeroUuid {
			continue
		}
		if t := m.img.Topics().Topic(p.topicID); t == nil && !added[p.topicID] {
			if err := d.Replay(&record.TopicRecord{Name: tp.Topic, TopicID: p.topicID}); err != nil {
				return nil, err
			}
			added[p.topicID] = true
		} else if t != nil && t.Name() != tp.Topic {
			return nil, fmt.Errorf("topic id %s is %s, pushed as %s", p.topicID, t.Name(), tp.Topic)
		}
		if err := d.Replay(p.record(tp.Partition)); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// imageLocked builds the image of what the broker holds, as the records
// a KRaft broker would have replayed. Called with mu held.
func (m *zkMetadata) imageLocked() *image.MetadataImage {
	m.pushes++
	d := image.NewMetadataDelta(image.Empty)
	for _, id := range slices.Sorted(maps.Keys(m.brokers)) {
		reg := m.brokers[id]
		_ = d.Replay(&reg)
	}
	byTopic := map[string][]fetcher.TopicPartition{}
	for tp := range m.partitions {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp)
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		tps := byTopic[topic]
		id := m.partitions[tps[0]].topicID
		if id == record.ZeroUuid {
			continue
		}
		if err := d.Replay(&record.TopicRecord{Name: topic, TopicID: id}); err != nil {
			continue
		}
		for _, tp := range tps {
			_ = d.Replay(m.partitions[tp].record(tp.Partition))
		}
	}
	m.img = d.Apply(image.MetadataProvenance{LastContainedOffset: m.pushes - 1, LastContainedEpoch: m.controllerEpoch})
	return m.img
}

// image is the newest image the pushes made.
func (m *zkMetadata) image() *image.MetadataImage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.img
}

// controllerEpoch is the newest controller epoch heard.
func (m *zkMetadata) epoch() int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.controllerEpoch
}
