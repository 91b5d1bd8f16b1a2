package partition

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AppendInfo is what a leader's append did.
type AppendInfo struct {
	// FirstOffset and LastOffset are the offsets the batch took.
	FirstOffset, LastOffset int64
	// LogStartOffset is the log start offset after the append.
	LogStartOffset int64
	// LeaderEpoch is the epoch the batch was stamped with.
	LeaderEpoch int32
	// HighWatermarkMoved: the append moved the high watermark (an ISR of
	// the leader alone), so delayed operations may complete.
	HighWatermarkMoved bool
	// Duplicate: the batch was a producer's retry of one the log already
	// holds; nothing was appended, and the offsets are the original's.
	Duplicate bool
}

// AppendAsLeader appends one producer batch (Kafka's appendRecordsToLeader).
// requiredAcks is the produce's acks: 0, 1 or -1 (all). The batch is checked
// (validateProducerBatch: INVALID_RECORD, CORRUPT_MESSAGE,
// MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE; every record is read, a
// compressed batch decompressed as a stream), an acks=-1 produce is
// refused with NOT_ENOUGH_REPLICAS while the committed ISR is smaller
// than the effective min.insync.replicas (capped at the replication
// factor, as Kafka's appendRecordsToLeader caps it), and the log
// assigns the offsets and stamps the leader epoch, rewriting batch in place
// (the CRC does not cover either). An idempotent producer's batch is checked
// against its producer state first (see producerStateManager.duplicateOrCheck:
// INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_TXN_STATE),
// and a retry of one of its last NumBatchesToRetain batches is not appended
// again: it answers with the original's offsets and Duplicate set. With
// acks=-1 the caller waits for the high watermark to pass LastOffset
// (CheckEnoughReplicasReachOffset, DelayedProduce), a duplicate's too: the
// original may not be committed yet. Under FlushNever the append is
// flushed as written (flushOnWrite), so a kill of the leader keeps it; a
// failed flush answers KAFKA_STORAGE_ERROR.
func (p *Partition) AppendAsLeader(batch []byte, requiredAcks int16, now time.Time) (AppendInfo, error) {
	if requiredAcks != 0 && requiredAcks != 1 && requiredAcks != -1 {
		return AppendInfo{}, fmt.Errorf("partition %s: acks %d: %w", p.name, requiredAcks, kerr.InvalidRequiredAcks)
	}
	if err := validateProducerBatch(batch, batchLimits{maxMessageBytes: p.cfg.MaxMessageBytes, segmentBytes: p.cfg.Log.SegmentBytes}); err != nil {
		return AppendInfo{}, fmt.Errorf("partition %s: %w", p.name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleLeader {
		return AppendInfo{}, fmt.Errorf("partition %s: broker %d does not lead: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	if requiredAcks == -1 && len(p.isr.committed) < p.effectiveMinIsr() {
		return AppendInfo{}, fmt.Errorf("partition %s: ISR %v is smaller than %s: %w",
			p.name, p.isr.committed, p.minIsrWords(), kerr.NotEnoughReplicas)
	}
	h := readProducerHeader(batch)
	dup, isDup, err := p.producers.duplicateOrCheck(h)
	if err != nil {
		return AppendInfo{}, fmt.Errorf("partition %s: %w", p.name, err)
	}
	if isDup {
		return AppendInfo{
			FirstOffset: dup.FirstOffset, LastOffset: dup.LastOffset, LogStartOffset: p.log.LogStartOffset(),
			LeaderEpoch: p.leaderEpoch, Duplicate: true,
		}, nil
	}
	first, last, err := p.log.AppendBatchesAsLeader(batch, p.leaderEpoch)
	if err != nil {
		return AppendInfo{}, fmt.Errorf("partition %s: append: %w", p.name, storageError(err))
	}
	p.producers.update(h, first, last)
	p.tail.Add(batch)
	if err := p.flushWritten(); err != nil {
		return AppendInfo{}, err
	}
	return AppendInfo{
		FirstOffset: first, LastOffset: last, LogStartOffset: p.log.LogStartOffset(), LeaderEpoch: p.leaderEpoch,
		HighWatermarkMoved: p.maybeIncrementHighWatermark(now),
	}, nil
}

// UpdateFollowerFetch records a fetch from follower replicaID at
// fetchOffset (Kafka's updateFollowerFetchState): the fetch offset is the
// follower's log end offset, and the fetch its acknowledgement of what lies
// below. Call it after Read answered the fetch without a DivergingEpoch (a
// diverging follower's offset says nothing about what it holds). It reports
// whether the high watermark moved. A replica outside the assignment, or a
// partition it does not lead, is NOT_LEADER_OR_FOLLOWER; so is a fetch
// whose brokerEpoch (the follower's, -1 if it did not say) is older than
// the one the metadata holds for that broker: it comes from an incarnation
// that is gone (Kafka's Replica.updateFetchStateOrThrow, KIP-903).
func (p *Partition) UpdateFollowerFetch(replicaID int32, brokerEpoch, fetchOffset int64, now time.Time) (hwmMoved bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleLeader {
		return false, fmt.Errorf("partition %s: broker %d does not lead: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	r, ok := p.remotes[replicaID]
	if !ok {
		return false, fmt.Errorf("partition %s: broker %d is not a follower of %v: %w", p.name, replicaID, p.replicas, errNotLeaderOrFollower)
	}
	if brokerEpoch != -1 && p.cfg.AliveBrokerEpoch != nil {
		if cached, ok := p.cfg.AliveBrokerEpoch(replicaID); ok && cached > brokerEpoch {
			return false, fmt.Errorf("partition %s: stale fetch from broker %d: broker epoch %d, the metadata's %d: %w",
				p.name, replicaID, brokerEpoch, cached, errNotLeaderOrFollower)
		}
	}
	leo := p.log.LogEndOffset()
	if fetchOffset < 0 || fetchOffset > leo {
		return false, fmt.Errorf("partition %s: fetch offset %d outside [0, %d]: %w", p.name, fetchOffset, leo, kerr.OffsetOutOfRange)
	}
	r.updateFetch(fetchOffset, leo, brokerEpoch, now)
	return p.maybeIncrementHighWatermark(now), nil
}

// maybeIncrementHighWatermark is Kafka's maybeIncrementLeaderHW: the high
// watermark becomes the smallest log end offset among the leader (what it
// flushed, under a deferred flush), the
// maximal ISR, and the replicas caught up and eligible to join (so that it
// never passes a replica about to enter the ISR). It only moves forward,
// and not at all while the committed ISR is below the effective
// min.insync.replicas (Kafka's maybeIncrementLeaderHW returns early when
// isUnderMinIsr, KAFKA-15583): records written then, with acks=1 or 0,
// stay unreadable until enough replicas are back in the ISR, so that a
// consumer never reads what fewer than min.insync.replicas brokers hold.
func (p *Partition) maybeIncrementHighWatermark(now time.Time) bool {
	if p.role != RoleLeader || p.underMinIsr() {
		return false
	}
	leo := p.log.LogEndOffset()
	hw := p.localEnd()
	for id, r := range p.remotes {
		if r.leo >= hw {
			continue
		}
		if p.isr.inMaximal(id) || (r.caughtUp(leo, now, p.cfg.ReplicaLagTimeMax) && p.eligible(id)) {
			hw = r.leo
		}
	}
	if hw <= p.hwm {
		return false
	}
	p.hwm = hw
	return true
}

// CheckEnoughReplicasReachOffset says whether an acks=-1 produce whose
// batch ended before requiredOffset (its LastOffset + 1) is done (Kafka's
// checkEnoughReplicasReachOffset): done once the high watermark reaches it,
// with NOT_ENOUGH_REPLICAS_AFTER_APPEND if the maximal ISR (an expansion in
// flight counts) is smaller than the effective min.insync.replicas by then;
// done with NOT_LEADER_OR_FOLLOWER once the replica no longer leads.
func (p *Partition) CheckEnoughReplicasReachOffset(requiredOffset int64) (done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleLeader {
		return true, fmt.Errorf("partition %s: broker %d no longer leads: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	if p.hwm < requiredOffset {
		return false, nil
	}
	if isr := p.isr.maximal(); len(isr) < p.effectiveMinIsr() {
		return true, fmt.Errorf("partition %s: ISR %v is smaller than %s: %w",
			p.name, isr, p.minIsrWords(), kerr.NotEnoughReplicasAfterAppend)
	}
	return true, nil
}
