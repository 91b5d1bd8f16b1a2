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

type replicaFetch struct {
	req  *kmsg.FetchRequest
	sent map[partitionKey]sentPartition
}

// buildFetch builds one Fetch with every partition that is ready and not
// throttled, or returns nil when there is none (Kafka's
// RemoteLeaderEndPoint.buildFetch, without fetch sessions: every request is
// a full, sessionless one).
func (t *Thread) buildFetch(now time.Time) *replicaFetch {
	t.mu.Lock()
	defer t.mu.Unlock()
	req := kmsg.NewPtrFetchRequest()
	req.Version = t.cfg.FetchVersion
	req.ReplicaID = t.cfg.BrokerID
	req.ReplicaState.ID = t.cfg.BrokerID
	req.ReplicaState.Epoch = t.cfg.BrokerEpoch()
	req.MaxWaitMillis = int32(t.cfg.FetchWaitMax.Milliseconds())
	req.MinBytes = t.cfg.FetchMinBytes
	req.MaxBytes = t.cfg.FetchResponseMaxBytes
	req.SessionID = 0
	req.SessionEpoch = -1 // FINAL_EPOCH with session 0: a sessionless full fetch
	sent := map[partitionKey]sentPartition{}
	topicIndex := map[[16]byte]int{}
	exceeded := t.cfg.Quota != nil && t.cfg.Quota.IsQuotaExceeded(now)
	for _, tp := range t.order {
		st := t.parts[tp]
		if !st.IsReadyForFetch(now) || t.shouldFollowerThrottle(tp, st, exceeded) {
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
		p.PartitionMaxBytes = t.cfg.FetchMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		sent[partitionKey{st.TopicID, tp.Partition}] = sentPartition{tp, st.FetchOffset, st.CurrentLeaderEpoch}
	}
	if len(sent) == 0 {
		return nil
	}
	return &replicaFetch{req: req, sent: sent}
}

// shouldFollowerThrottle: a throttled partition that is not in sync sits
// out while the quota is exceeded; one in sync never does, so a throttle
// does not push replicas out of the ISR.
func (t *Thread) shouldFollowerThrottle(tp TopicPartition, st *partitionState, exceeded bool) bool {
	return exceeded && !st.IsReplicaInSync() && t.cfg.Quota.IsThrottled(tp)
}
