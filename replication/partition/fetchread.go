package partition

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FetchPart is one partition of a Fetch as its leader reads it: the
// answer it fills in, the replica (nil when the request names none this
// broker hosts; the answer then holds its error already) and the read's
// parameters.
type FetchPart struct {
	Resp   *kmsg.FetchResponseTopicPartition
	P      *Partition
	Params FetchParams
	// Throttled: the leader's replication quota held this follower's
	// records back at the last read.
	Throttled bool
}

// FetchHooks is what a broker adds to ReadFetch.
type FetchHooks struct {
	// Throttle, when set, says whether the leader's replication quota
	// holds back a follower's read of n bytes of p (Kafka's
	// shouldLeaderThrottle), and counts the bytes when it does not.
	Throttle func(p *Partition, replicaID int32, n int, now time.Time) bool
	// FollowerFetched records a follower's fetch offset as its
	// acknowledgement; an error (a stale incarnation's fetch) answers the
	// partition.
	FollowerFetched func(p *Partition, params FetchParams, now time.Time) error
}

// ReadFetch reads every partition of a fetch into its answer as Kafka's
// ReplicaManager.readFromLog does: each partition gets at most its own
// PartitionMaxBytes and what is left of maxBytes, and until one returned
// records the first batch comes whole however large (minOneMessage);
// after that a partition whose first batch does not fit returns none. So
// an answer holds at most maxBytes plus one batch. It returns the bytes
// read and whether the fetch must be answered at once: an error or a
// diverging log the fetcher must hear of. record says whether a
// follower's fetch offset counts as its acknowledgement now, which it
// does when the fetch arrives, not when it leaves purgatory.
func ReadFetch(parts []FetchPart, maxBytes int, now time.Time, record bool, hooks FetchHooks) (total int, urgent bool) {
	for i := range parts {
		part := &parts[i]
		rp, p := part.Resp, part.P
		if p == nil {
			urgent = urgent || rp.ErrorCode != 0
			continue
		}
		params := part.Params
		params.MaxBytes = min(params.MaxBytes, max(maxBytes-total, 0))
		if total > 0 {
			params.Fitting = true
			if params.MaxBytes <= 0 {
				// Full: the partition's positions, and no records.
				rp.ErrorCode, rp.RecordBatches = 0, nil
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = p.HighWatermark(), p.HighWatermark(), p.LogStartOffset()
				continue
			}
		}
		res, err := p.Read(params)
		if err != nil {
			rp.ErrorCode, rp.RecordBatches = ErrorCode(err), nil
			urgent = true
			continue
		}
		rp.ErrorCode = 0
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
		part.Throttled = false
		if params.ReplicaID >= 0 && len(res.Records) > 0 && hooks.Throttle != nil && hooks.Throttle(p, params.ReplicaID, len(res.Records), now) {
			// Kafka's readFromLog with shouldLeaderThrottle: the
			// positions, no records.
			res.Records, part.Throttled = nil, true
		}
		rp.RecordBatches = res.Records
		total += len(res.Records)
		if res.DivergingEpoch != nil {
			rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = res.DivergingEpoch.Epoch, res.DivergingEpoch.EndOffset
			urgent = true
			continue
		}
		if params.ReplicaID >= 0 && record && hooks.FollowerFetched != nil {
			if err := hooks.FollowerFetched(p, params, now); err != nil {
				// Kafka's fetchRecords: a fetch the leader cannot record
				// (a stale incarnation's) answers its error, no records.
				total -= len(rp.RecordBatches)
				rp.ErrorCode, rp.RecordBatches = ErrorCode(err), nil
				urgent = true
			}
		}
	}
	return total, urgent
}
