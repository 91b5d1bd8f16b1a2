package server

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// The replication throttle configs (Kafka's QuotaConfig).
const (
	leaderThrottledRate       = "leader.replication.throttled.rate"
	followerThrottledRate     = "follower.replication.throttled.rate"
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// replicationQuotas are a broker's two replication quotas (Kafka's
// ReplicationQuotaManager of type LeaderReplication and
// FollowerReplication). The follower quota is the fetchers'; the leader
// quota leaves a throttled partition out of a lagging follower's fetch
// answers while the bytes sent for throttled partitions are above
// leader.replication.throttled.rate.
type replicationQuotas struct {
	leader, follower *fetcher.Quota
}

func newReplicationQuotas() replicationQuotas {
	return replicationQuotas{leader: fetcher.NewQuota(0), follower: fetcher.NewQuota(0)}
}

// applyQuotaConfigs sets both quotas from img's configs, as Kafka's
// DynamicConfigPublisher hands broker and topic config changes to the
// quota managers: a rate is this broker's dynamic config, else the
// cluster default, else unlimited; the throttled partitions are the
// entries of each topic's throttled-replicas list that name this broker,
// or all of the topic's partitions for "*".
func (rm *ReplicaManager) applyQuotaConfigs(img *image.MetadataImage) {
	rm.quotas.leader.SetRate(throttleRate(img, rm.id, leaderThrottledRate))
	rm.quotas.follower.SetRate(throttleRate(img, rm.id, followerThrottledRate))
	rm.quotas.leader.SetThrottled(false, throttledPartitions(img, rm.id, leaderThrottledReplicas)...)
	rm.quotas.follower.SetThrottled(false, throttledPartitions(img, rm.id, followerThrottledReplicas)...)
}

// throttleRate is broker id's rate for key in bytes/s, <= 0 for none. A
// rate of 0 stops throttled replication in Kafka after the first bytes;
// the quota's smallest bound, 1 B/s, does the same within a window.
func throttleRate(img *image.MetadataImage, id int32, key string) int64 {
	for _, name := range []string{strconv.Itoa(int(id)), ""} {
		c := img.Configs().Resource(image.ConfigResource{Type: record.ResourceBroker, Name: name})
		if c == nil {
			continue
		}
		v, ok := c.Get(key)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0 // the controller refuses it; nothing to throttle by
		}
		return max(n, 1)
	}
	return 0
}

// throttledPartitions are the partitions key's lists throttle on broker
// id (Kafka's parseThrottledPartitions).
func throttledPartitions(img *image.MetadataImage, id int32, key string) []fetcher.TopicPartition {
	var out []fetcher.TopicPartition
	for res, cfg := range img.Configs().Resources() {
		if res.Type != record.ResourceTopic {
			continue
		}
		v, ok := cfg.Get(key)
		if !ok {
			continue
		}
		topic := img.Topics().TopicByName(res.Name)
		if topic == nil {
			continue
		}
		if strings.TrimSpace(v) == "*" {
			for _, p := range topic.PartitionIDs() {
				out = append(out, fetcher.TopicPartition{Topic: res.Name, Partition: p})
			}
			continue
		}
		for _, entry := range strings.Split(v, ",") {
			ps, bs, ok := strings.Cut(strings.TrimSpace(entry), ":")
			if !ok {
				continue
			}
			p, err1 := strconv.ParseInt(ps, 10, 32)
			b, err2 := strconv.ParseInt(bs, 10, 32)
			if err1 == nil && err2 == nil && int32(b) == id {
				out = append(out, fetcher.TopicPartition{Topic: res.Name, Partition: int32(p)})
			}
		}
	}
	return out
}

// shouldLeaderThrottle is Kafka's ReplicaManager.shouldLeaderThrottle: a
// follower outside the ISR fetching a throttled partition gets no records
// while the leader quota is exceeded. A follower in the ISR is never held
// back, so a throttle cannot shrink the ISR.
func (rm *ReplicaManager) shouldLeaderThrottle(p *partition.Partition, replicaID int32, now time.Time) bool {
	q := rm.quotas.leader
	tp := fetcher.TopicPartition{Topic: p.Topic(), Partition: p.Index()}
	if !q.IsThrottled(tp) || slices.Contains(p.State().ISR, replicaID) {
		return false
	}
	return q.IsQuotaExceeded(now)
}

// isLeaderThrottled reports whether the leader quota counts p's bytes.
func (rm *ReplicaManager) isLeaderThrottled(p *partition.Partition) bool {
	return rm.quotas.leader.IsThrottled(fetcher.TopicPartition{Topic: p.Topic(), Partition: p.Index()})
}
