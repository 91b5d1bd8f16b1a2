package fetcher

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionKey is how a Fetch response names a partition: by topic id.
type partitionKey struct {
	topicID   [16]byte
	partition int32
}

// sentPartition is what a request asked for one partition, to tell later
// whether the answer still applies.
type sentPartition struct {
	tp          TopicPartition
	fetchOffset int64
	leaderEpoch int32
}

// Fetch is one Fetch request a Machine built, and what it asked for each
// partition, to tell when its answer comes whether it still applies.
type Fetch struct {
	// Request is the request to send to the source broker.
	Request *kmsg.FetchRequest
	sent    map[partitionKey]sentPartition
}

// BuildFetch builds one Fetch with every partition that is ready and not
// throttled at now, or returns nil when there is none (Kafka's
// RemoteLeaderEndPoint.buildFetch, without fetch sessions: every request is
// a full, sessionless one).
func (m *Machine) BuildFetch(now time.Time) *Fetch {
	m.mu.Lock()
	defer m.mu.Unlock()
	req := kmsg.NewPtrFetchRequest()
	req.Version = m.cfg.FetchVersion
	req.ReplicaID = m.cfg.BrokerID
	req.ReplicaState.ID = m.cfg.BrokerID
	req.ReplicaState.Epoch = m.cfg.BrokerEpoch()
	req.MaxWaitMillis = int32(m.cfg.FetchWaitMax.Milliseconds())
	req.MinBytes = m.cfg.FetchMinBytes
	req.MaxBytes = m.cfg.FetchResponseMaxBytes
	req.SessionID = 0
	req.SessionEpoch = -1 // FINAL_EPOCH with session 0: a sessionless full fetch
	sent := map[partitionKey]sentPartition{}
	topicIndex := map[[16]byte]int{}
	exceeded := m.cfg.Quota != nil && m.cfg.Quota.IsQuotaExceeded(now)
	for _, tp := range m.order {
		st := m.parts[tp]
		if !st.IsReadyForFetch(now) || m.shouldFollowerThrottle(tp, st, exceeded) {
			continue
		}
		i, ok := topicIndex[st.TopicID]
		if !ok {
			i = len(req.Topics)
			topicIndex[st.TopicID] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = tp.Topic, st.TopicID
			req.Topics = append(req.Topics, rt)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = tp.Partition
		p.CurrentLeaderEpoch = st.CurrentLeaderEpoch
		p.FetchOffset = st.FetchOffset
		p.LastFetchedEpoch = st.LastFetchedEpoch
		p.LogStartOffset = st.replica.LogStartOffset()
		p.PartitionMaxBytes = m.cfg.FetchMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		sent[partitionKey{st.TopicID, tp.Partition}] = sentPartition{tp, st.FetchOffset, st.CurrentLeaderEpoch}
	}
	if len(sent) == 0 {
		return nil
	}
	return &Fetch{Request: req, sent: sent}
}

// shouldFollowerThrottle: a throttled partition that is not in sync sits
// out while the quota is exceeded; one in sync never does, so a throttle
// does not push replicas out of the ISR.
func (m *Machine) shouldFollowerThrottle(tp TopicPartition, st *partitionState, exceeded bool) bool {
	return exceeded && !st.IsReplicaInSync() && m.cfg.Quota.IsThrottled(tp)
}
