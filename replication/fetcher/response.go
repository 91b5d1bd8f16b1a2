package fetcher

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errOffsetMismatch: the replica's log end moved away from the fetch
// offset behind the thread's back; appending would leave a gap or overlap.
var errOffsetMismatch = errors.New("fetch offset is not the log end offset")

// Next is what the driver of a Machine does after a fetch answer, in
// order: flush the replicas the answer appended to (before the next fetch,
// whose offsets acknowledge them), then find new offsets for the
// partitions the leader answered OFFSET_OUT_OF_RANGE for.
type Next struct {
	Flush      []FlushTarget
	OutOfRange []OutOfRange
}

// HandleFetchResponse applies the answer to f (or the error that took its
// place) to every partition it asked for, at now (the answer half of
// Kafka's AbstractFetcherThread.processFetchRequest).
func (m *Machine) HandleFetchResponse(f *Fetch, resp kmsg.Response, err error, now time.Time) Next {
	fr, ok := resp.(*kmsg.FetchResponse)
	if err == nil && (!ok || fr == nil) {
		err = fmt.Errorf("fetch answered with %T", resp)
	}
	if err == nil && fr.ErrorCode != 0 {
		err = fmt.Errorf("fetch response: %w", kerr.ErrorForCode(fr.ErrorCode))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	var next Next
	if err != nil {
		// The whole request failed: every partition in it backs off, as
		// Kafka does, so a dead leader is not hammered.
		m.errors++
		m.log.Warn("error in response for fetch request", "leader", m.leader, "err", err)
		for _, s := range sortedSent(f.sent) {
			m.delayLocked(s.tp, now, err.Error())
		}
		return next
	}
	m.lastResponse = now
	for i := range fr.Topics {
		rt := &fr.Topics[i]
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			s, ok := f.sent[partitionKey{rt.TopicID, rp.Partition}]
			if !ok {
				continue // not asked for: nothing to apply it to
			}
			st, ok := m.parts[s.tp]
			// The partition may have been removed, re-added or truncated
			// while the fetch was out: the answer applies only to the state
			// that asked for it.
			if !ok || st.FetchOffset != s.fetchOffset || st.CurrentLeaderEpoch != s.leaderEpoch || !st.IsReadyForFetch(now) {
				continue
			}
			st.lastFetch = now
			switch code := rp.ErrorCode; {
			case code == 0 && rp.DivergingEpoch.Epoch >= 0 && rp.DivergingEpoch.EndOffset < 0:
				// A divergence the leader cannot place: fetching again at
				// once would get the same answer at once, a hot loop.
				m.delayLocked(s.tp, now, fmt.Sprintf("leader found epoch %d diverging with no end offset", rp.DivergingEpoch.Epoch))
			case code == 0 && rp.DivergingEpoch.Epoch >= 0:
				// Records are not appended and the high watermark is not
				// moved until the truncation is done: the next fetch does it.
				m.truncateOnDivergingEpoch(s.tp, st, rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset)
			case code == 0:
				if m.processPartitionData(s.tp, st, rp, now) {
					next.Flush = append(next.Flush, FlushTarget{s, st.replica})
				}
			case code == kerr.OffsetOutOfRange.Code:
				next.OutOfRange = append(next.OutOfRange, OutOfRange{s})
			case code == kerr.FencedLeaderEpoch.Code:
				// Our epoch is the one the leader fenced (the request's, as
				// checked above): wait for metadata to bring a newer one.
				m.markFailedLocked(s.tp, fmt.Errorf("leader fenced epoch %d: %w", s.leaderEpoch, kerr.FencedLeaderEpoch))
			default:
				// NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH (the leader
				// is behind on metadata), unknown topic, and the rest: back
				// off and retry this partition only.
				m.delayLocked(s.tp, now, kerr.ErrorForCode(code).Error())
			}
		}
	}
	return next
}

// sortedSent is what a fetch asked for, in partition order, so that what
// is done for each does not follow the map's order.
func sortedSent(sent map[partitionKey]sentPartition) []sentPartition {
	out := make([]sentPartition, 0, len(sent))
	for _, s := range sent {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b sentPartition) int { return compareTopicPartitions(a.tp, b.tp) })
	return out
}

// processPartitionData appends one partition's records and takes the
// leader's high watermark (ReplicaFetcherThread.processPartitionData). It
// reports whether it appended: the replica then needs a flush before the
// next fetch acknowledges the records.
func (m *Machine) processPartitionData(tp TopicPartition, st *partitionState, rp *kmsg.FetchResponseTopicPartition, now time.Time) (appended bool) {
	if leo := st.replica.LogEndOffset(); leo != st.FetchOffset {
		m.markFailedLocked(tp, fmt.Errorf("%w: fetched %d, log end %d", errOffsetMismatch, st.FetchOffset, leo))
		return false
	}
	batches, records, err := batchesUpToEpoch(rp.RecordBatches, st.CurrentLeaderEpoch)
	if err == nil && len(batches) > 0 {
		err = st.replica.AppendAsFollower(batches)
	}
	if err != nil {
		if errors.Is(err, storage.ErrCorruptBatch) || errors.Is(err, storage.ErrShortBatch) || errors.Is(err, storage.ErrUnexpectedOffset) {
			// Possibly transient (a log truncated under the read): retry
			// this partition after the backoff, without stopping the others.
			m.log.Warn("invalid records in fetch", "partition", tp, "offset", st.FetchOffset, "err", err)
			m.delayLocked(tp, now, err.Error())
			return false
		}
		m.markFailedLocked(tp, fmt.Errorf("append to %s at %d: %w", tp, st.FetchOffset, err))
		return false
	}
	st.replica.UpdateHighWatermark(rp.HighWatermark)
	st.highWater = rp.HighWatermark
	next := st.replica.LogEndOffset()
	st.Lag, st.HasLag = max(0, rp.HighWatermark-next), true
	st.lastError = ""
	if n := int64(len(batches)); n > 0 {
		st.FetchOffset = next
		st.LastFetchedEpoch = st.replica.LastFetchedEpoch()
		st.records += records
		st.bytes += n
		st.bytesPerSec.record(now, n)
		m.bytes += n
		m.moveToEnd(tp)
	}
	if q := m.cfg.Quota; q != nil && q.IsThrottled(tp) {
		q.record(now, int64(len(batches)))
	}
	return len(batches) > 0
}

// batchesUpToEpoch returns the whole batches at the start of b whose leader
// epoch is at most epoch, and how many records they hold. Batches written
// in a later epoch than the one this fetch was made in could belong to a
// log the follower has not yet been told to follow (Kafka, KAFKA-18723). A
// partial batch at the end is dropped: the leader may cut its answer at a
// size limit, and the rest comes in the next fetch.
func batchesUpToEpoch(b []byte, epoch int32) ([]byte, int64, error) {
	var pos int
	var records int64
	for pos < len(b) {
		base, last, e, size, err := storage.PeekBatch(b[pos:])
		if errors.Is(err, storage.ErrShortBatch) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		if e > epoch {
			break
		}
		records += last - base + 1
		pos += size
	}
	return b[:pos], records, nil
}

// truncateOnDivergingEpoch truncates a partition the leader found diverging
// (Kafka's getOffsetTruncationState with the epoch and end offset from
// DivergingEpoch) and keeps it Fetching: if the follower does not know the
// leader's epoch, it truncates to the end of its own largest earlier epoch
// and the next fetch, with that epoch as its last fetched, finds the rest.
func (m *Machine) truncateOnDivergingEpoch(tp TopicPartition, st *partitionState, epoch int32, endOffset int64) {
	leo := st.replica.LogEndOffset()
	var offset int64
	switch followerEnd, followerEpoch, ok := st.replica.EndOffsetForEpoch(epoch); {
	case !ok:
		offset = min(endOffset, leo)
	case followerEpoch != epoch:
		offset = min(followerEnd, leo)
	default:
		offset = min(followerEnd, endOffset, leo)
	}
	if err := st.replica.TruncateTo(offset); err != nil {
		m.markFailedLocked(tp, fmt.Errorf("truncate %s to %d: %w", tp, offset, err))
		return
	}
	m.log.Info("truncated on diverging epoch", "partition", tp, "divergingEpoch", epoch, "divergingEndOffset", endOffset, "offset", offset)
	st.FetchOffset = offset
	st.LastFetchedEpoch = st.replica.LastFetchedEpoch()
	st.State = Fetching
	st.truncations++
}
