package partition

import (
	"fmt"

	"github.com/kraftlab/kraftlab/storage"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ProduceWait is one partition of a DelayedProduce: an acks=-1 append
// waiting for the high watermark to pass it, or an acks=1 append waiting
// for the leader's deferred flush to cover it.
type ProduceWait struct {
	Partition *Partition
	// RequiredOffset is the appended batch's LastOffset + 1.
	RequiredOffset int64
	// LeaderFlush: an acks=1 append, done once the leader's log is
	// durable past RequiredOffset (CheckFlushed) rather than once the
	// high watermark passes it.
	LeaderFlush bool
	// Err is the partition's outcome once the operation completed: nil,
	// NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER, or
	// REQUEST_TIMED_OUT at the deadline.
	Err  error
	done bool
}

// DelayedProduce is an acks=-1 Produce waiting for its partitions' high
// watermarks (Kafka's DelayedProduce), or an acks=1 one waiting for its
// leaders' deferred flushes. Watch it under each partition's
// pointer; it completes when every partition is done.
type DelayedProduce struct {
	Waits []ProduceWait
	// Done is called once, with Waits' outcomes filled in.
	Done func(waits []ProduceWait)
}

// Keys are the partitions to watch the operation under.
func (d *DelayedProduce) Keys() []*Partition {
	keys := make([]*Partition, len(d.Waits))
	for i := range d.Waits {
		keys[i] = d.Waits[i].Partition
	}
	return keys
}

// TryComplete implements DelayedOperation.
func (d *DelayedProduce) TryComplete() bool {
	all := true
	for i := range d.Waits {
		w := &d.Waits[i]
		if w.done {
			continue
		}
		if w.LeaderFlush {
			w.done, w.Err = w.Partition.CheckFlushed(w.RequiredOffset)
		} else {
			w.done, w.Err = w.Partition.CheckEnoughReplicasReachOffset(w.RequiredOffset)
		}
		all = all && w.done
	}
	return all
}

// OnComplete implements DelayedOperation: a partition still waiting at the
// deadline is REQUEST_TIMED_OUT.
func (d *DelayedProduce) OnComplete(expired bool) {
	for i := range d.Waits {
		if w := &d.Waits[i]; !w.done {
			what := "high watermark"
			if w.LeaderFlush {
				what = "flushed offset"
			}
			w.done, w.Err = true, fmt.Errorf("partition %s: %s did not reach %d in time: %w", w.Partition.name, what, w.RequiredOffset, kerr.RequestTimedOut)
		}
	}
	if d.Done != nil {
		d.Done(d.Waits)
	}
}

// FetchWait is one partition of a DelayedFetch.
type FetchWait struct {
	Partition *Partition
	Params    FetchParams
	// LeaderEpoch is the partition's leader epoch when the fetch was
	// parked: a change completes the fetch.
	LeaderEpoch int32
}

// DelayedFetch is a Fetch with nothing (or less than MinBytes) to return
// yet (Kafka's DelayedFetch). It completes when its partitions hold at
// least MinBytes the fetch may read, or when one changes in a way the
// fetcher must hear of at once (no longer leading, a new leader epoch, an
// error, a diverging log). Done then reads the partitions again and answers.
type DelayedFetch struct {
	Waits []FetchWait
	// MinBytes is fetch.min.bytes (replica.fetch.min.bytes for followers).
	MinBytes int
	// Done is called once; expired says the deadline (the fetch's
	// MaxWaitMs) passed first.
	Done func(expired bool)
}

// Keys are the partitions to watch the operation under.
func (d *DelayedFetch) Keys() []*Partition {
	keys := make([]*Partition, len(d.Waits))
	for i := range d.Waits {
		keys[i] = d.Waits[i].Partition
	}
	return keys
}

// TryComplete implements DelayedOperation.
func (d *DelayedFetch) TryComplete() bool {
	need := max(d.MinBytes, 1)
	have := 0
	for _, w := range d.Waits {
		n, interrupt := w.Partition.bytesAvailable(w.Params, w.LeaderEpoch, need-have)
		if interrupt {
			return true
		}
		if have += n; have >= need {
			return true
		}
	}
	return false
}

// OnComplete implements DelayedOperation.
func (d *DelayedFetch) OnComplete(expired bool) {
	if d.Done != nil {
		d.Done(expired)
	}
}

// LeaderEpoch is the replica's current leader epoch (-1 before any).
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leaderEpoch
}

// bytesAvailable is how many bytes, up to limit, a fetch could read now;
// interrupt is true when the fetch should be answered at once whatever it
// holds: an error, a diverging log, or a leader epoch other than epoch.
//
// A fetch that needs no more than a batch header's worth (fetch.min.bytes
// of 1, the default of followers and consumers) is satisfied by any batch
// it may read, so the records are not read just to be counted: the fetch
// that completes reads them once.
func (p *Partition) bytesAvailable(f FetchParams, epoch int32, limit int) (n int, interrupt bool) {
	p.mu.Lock()
	if p.leaderEpoch != epoch {
		p.mu.Unlock()
		return 0, true
	}
	res, maxOffset, err := p.readPositionsLocked(f)
	p.mu.Unlock()
	switch {
	case err != nil || res.DivergingEpoch != nil:
		return 0, true
	case f.FetchOffset >= maxOffset:
		return 0, false
	case limit <= storage.BatchHeaderSize:
		// Whole batches end at maxOffset (a high watermark and a log end
		// are batch boundaries), and each is at least a header long.
		return limit, false
	}
	f.MaxBytes = min(f.MaxBytes, limit)
	res, err = p.Read(f)
	if err != nil || res.DivergingEpoch != nil {
		return 0, true
	}
	return len(res.Records), false
}
