package fetcher

import "time"

// Record counts n bytes of throttled replication at now. The fetchers
// record what they fetch themselves; a leader using a Quota for
// leader.replication.throttled.rate records what it sends, since Kafka's
// ReplicationQuotaManager has the same shape on both sides.
func (q *Quota) Record(now time.Time, n int64) { q.record(now, n) }
