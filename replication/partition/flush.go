package partition

import (
	"fmt"
	"math"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// flushMode is what makes a replica's appends flushed, so that a kill
// (Crash) keeps them.
type flushMode int8

const (
	// flushInAppend: the storage policy flushes inside appends
	// (FlushInterval), and Flush on demand.
	flushInAppend flushMode = iota
	// flushDeferred (FlushAlways): appends do not fsync; Flush does,
	// covering every append before it (group commit).
	flushDeferred
	// flushOnWrite (FlushNever): each append is marked flushed as soon as
	// it is written. Nothing is fsynced, but the page cache keeps the
	// write past the process's death, so a kill loses no partition record
	// — as the metadata quorum marks its log flushed under FlushNever.
	flushOnWrite
)

// logOptions are the storage options the replica's log opens with, and
// how its appends get flushed. Under FlushAlways the replica, not each
// append, decides when to fsync (group commit, see Flush): storage's
// interval policy with an interval no run reaches never fsyncs inside an
// append, while Flush still does, as the metadata quorum's log is opened.
func logOptions(o storage.Options) (storage.Options, flushMode) {
	switch o.FlushPolicy {
	case storage.FlushAlways:
		o.FlushPolicy, o.FlushInterval = storage.FlushInterval, math.MaxInt64
		return o, flushDeferred
	case storage.FlushNever:
		return o, flushOnWrite
	}
	return o, flushInAppend
}

// flushWritten marks what the append just wrote flushed under
// flushOnWrite (storage's Flush under FlushNever does no I/O beyond a
// leader-epoch checkpoint when an epoch began), so that a kill keeps it.
// Call it with p.mu held, right after the append. A failure (a failed or
// closed log, or an epoch checkpoint it could not write) is reported as
// the append's, so that nothing acknowledges a record a kill would lose.
func (p *Partition) flushWritten() error {
	if p.flush != flushOnWrite {
		return nil
	}
	if err := p.log.Flush(); err != nil {
		return fmt.Errorf("partition %s: flush: %w", p.name, storageError(err))
	}
	return nil
}

// Flush makes everything appended so far durable (storage.Log.Flush) and
// reports whether the high watermark moved. It takes no lock of the
// replica's across the fsync, so produces, fetches and the flushes' next
// appends go on meanwhile, and one fsync covers every append made before
// it started: call it after appends, from any goroutine, as often as
// wanted (concurrent calls run one after the other).
//
// Under FlushAlways a leader's own log end counts toward the high
// watermark only once flushed, as Kafka's KRaft leader counts its own
// records only after flushLeaderLog, and a follower's fetcher flushes
// before its next fetch, whose offset acknowledges what it holds: so an
// acknowledged acks=-1 record was fsynced by every in-sync replica, and a
// Kill loses only what nobody acknowledged.
func (p *Partition) Flush(now time.Time) (hwmMoved bool, err error) {
	if err := p.log.Flush(); err != nil {
		return false, fmt.Errorf("partition %s: flush: %w", p.name, err)
	}
	if p.flush != flushDeferred {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maybeIncrementHighWatermark(now), nil
}

// NeedsFlush says whether the log holds appends Flush has not made
// durable yet.
func (p *Partition) NeedsFlush() bool {
	return p.log.LastFlushedOffset() < p.log.LogEndOffset()
}

// FlushDeferred says whether appends leave the fsync to Flush (the
// FlushAlways policy): the caller must then call Flush after appending,
// and an acks=1 produce is answered only once Flush has covered it
// (CheckFlushed).
func (p *Partition) FlushDeferred() bool { return p.flush == flushDeferred }

// localEnd is the leader's own log end as the high watermark counts it:
// under a deferred flush, what is durable.
func (p *Partition) localEnd() int64 {
	if p.flush == flushDeferred {
		return p.log.LastFlushedOffset()
	}
	return p.log.LogEndOffset()
}

// CheckFlushed says whether an acks=1 produce whose batch ended before
// requiredOffset is done: once the leader's log is durable up to it, or
// with NOT_LEADER_OR_FOLLOWER once the replica no longer leads.
func (p *Partition) CheckFlushed(requiredOffset int64) (done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleLeader {
		return true, fmt.Errorf("partition %s: broker %d no longer leads: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	return p.log.LastFlushedOffset() >= requiredOffset, nil
}
