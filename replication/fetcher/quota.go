package fetcher

import (
	"sync"
	"time"
)

// Quota is the follower-side replication quota (Kafka's
// ReplicationQuotaManager for FollowerReplication): the bytes fetched for
// throttled partitions are measured, and while their rate is above
// follower.replication.throttled.rate a throttled partition that is not in
// sync is left out of fetches. In-sync partitions are never held back, so a
// throttle cannot shrink the ISR.
type Quota struct {
	meter *meter

	mu        sync.Mutex
	rate      int64 // bytes/s; <= 0 is unlimited (Kafka's Long.MAX_VALUE)
	all       bool
	throttled map[TopicPartition]bool
}

// NewQuota returns a quota of rate bytes per second
// (follower.replication.throttled.rate) that throttles no partition yet.
func NewQuota(rate int64) *Quota {
	return &Quota{
		meter:     newMeter(DefaultReplicationQuotaWindowNum, DefaultReplicationQuotaWindowSize),
		rate:      rate,
		throttled: map[TopicPartition]bool{},
	}
}

// SetRate changes follower.replication.throttled.rate; <= 0 is unlimited.
func (q *Quota) SetRate(rate int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rate = rate
}

// SetThrottled sets the partitions follower.replication.throttled.replicas
// names for this broker; all is its "*".
func (q *Quota) SetThrottled(all bool, partitions ...TopicPartition) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.all = all
	q.throttled = make(map[TopicPartition]bool, len(partitions))
	for _, tp := range partitions {
		q.throttled[tp] = true
	}
}

// IsThrottled reports whether tp's replication counts against the quota.
func (q *Quota) IsThrottled(tp TopicPartition) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.all || q.throttled[tp]
}

// IsQuotaExceeded reports whether the measured rate is above the bound.
func (q *Quota) IsQuotaExceeded(now time.Time) bool {
	q.mu.Lock()
	rate := q.rate
	q.mu.Unlock()
	return rate > 0 && q.meter.rate(now) > float64(rate)
}

// Rate is the measured replication rate of throttled partitions, bytes/s.
func (q *Quota) Rate(now time.Time) float64 { return q.meter.rate(now) }

func (q *Quota) record(now time.Time, n int64) { q.meter.record(now, n) }
