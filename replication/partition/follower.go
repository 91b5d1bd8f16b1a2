package partition

import "fmt"

// AppendAsFollower appends batches fetched from the leader, with the
// offsets and leader epochs the leader gave them; their epochs enter the
// epoch cache and their producers' sequences the producer state. They
// must start at the log end offset (storage checks them whole, CRC
// included); if the append fails nothing is appended. A replica that does
// not follow refuses with NOT_LEADER_OR_FOLLOWER. Under FlushNever the
// append is flushed as written (flushOnWrite), so a kill keeps it; a
// failed flush is KAFKA_STORAGE_ERROR, as the fetcher's own Flush.
func (p *Partition) AppendAsFollower(batches []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleFollower {
		return fmt.Errorf("partition %s: broker %d does not follow: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	if len(batches) == 0 {
		return nil
	}
	if err := p.log.AppendAsFollower(batches); err != nil {
		return fmt.Errorf("partition %s: append as follower: %w", p.name, storageError(err))
	}
	// The producers' state follows the leader's log, so that this replica
	// still finds a retried batch once it leads.
	if _, err := p.producers.updateFromBatches(batches); err != nil {
		if rerr := p.producers.rebuild(p.log); rerr != nil {
			return fmt.Errorf("partition %s: producer state after append: %w", p.name, rerr)
		}
	}
	return p.flushWritten()
}

// TruncateTo removes the log from offset on (whole batches: a point inside
// a batch cuts at its start), as a follower does at the divergence point;
// the high watermark comes down with the log end, and the producer state
// is read again from what is left. Truncating below the log start is an
// error.
func (p *Partition) TruncateTo(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role == RoleLeader {
		return fmt.Errorf("partition %s: a leader never truncates its log: %w", p.name, errNotLeaderOrFollower)
	}
	leo := p.log.LogEndOffset()
	p.tail.Reset()
	if err := p.log.TruncateTo(offset); err != nil {
		return fmt.Errorf("partition %s: truncate to %d: %w", p.name, offset, err)
	}
	p.hwm = min(p.hwm, p.log.LogEndOffset())
	if p.log.LogEndOffset() < leo {
		if err := p.producers.rebuild(p.log); err != nil {
			return fmt.Errorf("partition %s: truncate to %d: %w", p.name, offset, err)
		}
	}
	return nil
}

// TruncateFullyAndStartAt empties the log and starts it at offset, as a
// follower does whose fetch offset fell below the leader's log start
// (Kafka's UnifiedLog.truncateFullyAndStartAt); the high watermark starts
// there too, and no producer state is left.
func (p *Partition) TruncateFullyAndStartAt(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role == RoleLeader {
		return fmt.Errorf("partition %s: a leader never truncates its log: %w", p.name, errNotLeaderOrFollower)
	}
	p.tail.Reset()
	if err := p.log.TruncateFullyAndStartAt(offset); err != nil {
		return fmt.Errorf("partition %s: truncate fully and start at %d: %w", p.name, offset, err)
	}
	clear(p.producers.producers)
	p.hwm = p.log.LogEndOffset()
	return nil
}

// UpdateHighWatermark takes the high watermark of the leader's fetch
// response, capped at the follower's log end offset (a follower knows
// nothing is committed past what it holds). As Kafka's follower does
// (UnifiedLog.updateHighWatermark), it takes a lower one too: a new
// leader's high watermark lags the old leader's until its followers fetch
// from it, and the follower shows the leader's. It reports whether it
// changed.
func (p *Partition) UpdateHighWatermark(leaderHWM int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleFollower {
		return false
	}
	hw := min(max(leaderHWM, p.log.LogStartOffset()), p.log.LogEndOffset())
	if hw == p.hwm {
		return false
	}
	p.hwm = hw
	return true
}
