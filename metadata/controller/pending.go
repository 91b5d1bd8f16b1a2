package controller

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// errNotActive: the controller does not lead, so it may not write.
var errNotActive = errors.New("controller is not active")

// batch is one append of the controller's records, from the write until a
// committed image holds them (or the leadership is lost).
type batch struct {
	epoch   int32
	records []record.Record
	commit  commit
	// done: the commit completed and first and last are its offsets.
	done        bool
	first, last int64
	// events are reported once the batch commits.
	events []Event
	// waiters run on the loop when the batch commits (ok, with the
	// batch's first offset) or is lost.
	waiters []func(ok bool, first int64)
}

// write replays records on the working image and appends them, so the
// next request sees them at once; onDone (optional) runs when they commit
// or are lost. It fails, appending nothing, when the controller is not
// active or a record contradicts the working image (a bug in the caller's
// checks, answered UNKNOWN_SERVER_ERROR).
func (c *QuorumController) write(recs []record.Record, events []Event, onDone func(ok bool, first int64)) error {
	st := &c.st
	if !st.active {
		return errNotActive
	}
	d := image.NewMetadataDelta(st.working)
	encoded := make([][]byte, len(recs))
	for i, r := range recs {
		if err := d.Replay(r); err != nil {
			return fmt.Errorf("replay own %s: %w", record.Name(r), err)
		}
		b, err := record.Encode(r)
		if err != nil {
			return fmt.Errorf("encode own %s: %w", record.Name(r), err)
		}
		encoded[i] = b
	}
	now := c.now()
	st.working = d.Apply(image.MetadataProvenance{
		LastContainedOffset:    st.nextOffset + int64(len(recs)) - 1,
		LastContainedEpoch:     st.epoch,
		LastContainedLogTimeMs: now.UnixMilli(),
	})
	b := &batch{epoch: st.epoch, records: recs, events: events, first: -1, last: -1}
	if onDone != nil {
		b.waiters = append(b.waiters, onDone)
	}
	b.commit = c.appendTo(st.epoch, encoded)
	st.pending = append(st.pending, b)
	st.nextOffset += int64(len(recs))
	if !c.manual {
		go c.awaitCommit(b)
	}
	return nil
}

// awaitCommit posts the batch's completion to the loop; it ends with the
// commit or the controller.
func (c *QuorumController) awaitCommit(b *batch) {
	select {
	case <-b.commit.Done():
		c.box.post(c.finishCommitted)
	case <-c.stop:
	}
}

// afterPending runs onDone once everything the controller appended so far
// commits: a request that writes nothing was still answered from records
// that may not have committed (Kafka's read-after-write, which waits for
// the last stable offset).
//
// A batch that is done stays pending until the committed image holds it,
// but its waiters already ran: the request waits for the last batch not
// yet committed, if any.
func (c *QuorumController) afterPending(onDone func(ok bool)) {
	for i := len(c.st.pending) - 1; i >= 0; i-- {
		if b := c.st.pending[i]; !b.done {
			b.waiters = append(b.waiters, func(ok bool, _ int64) { onDone(ok) })
			return
		}
	}
	onDone(true)
}

// finishCommitted finishes, in log order, every pending batch whose commit
// ended. One high watermark may commit several batches at once, and their
// notices (one goroutine each) reach the loop in any order; a batch's
// waiters and events must still follow the log, or a broker unfenced after
// its session timed out would be told of in the other order.
func (c *QuorumController) finishCommitted() {
	for {
		i := slices.IndexFunc(c.st.pending, func(b *batch) bool { return !b.done })
		if i < 0 {
			return // every batch finished; a lost one's waiters heard with its leadership
		}
		b := c.st.pending[i]
		select {
		case <-b.commit.Done():
		default:
			return // its own notice comes, and finishes those behind it
		}
		if !c.finishBatch(b) {
			return
		}
	}
}

// finishBatch completes a committed batch: its waiters hear, its events go
// out. It reports false when the batch failed and the controller renounced
// its leadership.
func (c *QuorumController) finishBatch(b *batch) bool {
	st := &c.st
	if err := b.commit.Err(); err != nil {
		c.renounce(fmt.Sprintf("append in epoch %d failed: %v", b.epoch, err))
		return false
	}
	first, last := b.commit.Offsets()
	if first < 0 || last < first {
		c.renounce(fmt.Sprintf("append in epoch %d committed without offsets", b.epoch))
		return false
	}
	b.done, b.first, b.last = true, first, last
	st.nextOffset = max(st.nextOffset, last+1)
	st.lastCommitted = max(st.lastCommitted, last)
	for _, w := range b.waiters {
		w(true, first)
	}
	b.waiters = nil
	for _, ev := range b.events {
		if ev.Kind == EventUncleanLeaderElection {
			st.uncleanElections++
		}
		if ev.FromElr {
			st.elrElections++
		}
		c.emit(ev)
	}
	c.dropCommitted()
	c.maybeRebuild()
	return true
}

// committedImage takes a committed image: it replaces the committed state,
// and the pending batches it holds leave.
func (c *QuorumController) committedImage(img *image.MetadataImage) {
	st := &c.st
	off := img.Provenance().LastContainedOffset
	if off < st.committed.Provenance().LastContainedOffset {
		return
	}
	st.committed = img
	st.nextOffset = max(st.nextOffset, off+1)
	st.lastCommitted = max(st.lastCommitted, off)
	if !st.active {
		st.working = img
		return
	}
	c.dropCommitted()
	c.maybeRebuild()
}

// dropCommitted removes the leading batches the committed image holds.
func (c *QuorumController) dropCommitted() {
	st := &c.st
	off := st.committed.Provenance().LastContainedOffset
	n := 0
	for n < len(st.pending) && st.pending[n].done && st.pending[n].last <= off {
		n++
	}
	if n > 0 {
		st.pending = append(st.pending[:0:0], st.pending[n:]...)
	}
}

// maybeRebuild makes the working image the committed one plus the pending
// batches, once every pending batch knows its offsets: before that the
// controller cannot tell which of them the committed image already holds,
// and keeps its working image (which misses only other writers' records).
func (c *QuorumController) maybeRebuild() {
	st := &c.st
	for _, b := range st.pending {
		if !b.done {
			return
		}
	}
	if len(st.pending) == 0 {
		st.working = st.committed
		return
	}
	d := image.NewMetadataDelta(st.committed)
	for _, b := range st.pending {
		for _, r := range b.records {
			if err := d.Replay(r); err != nil {
				// Only a foreign writer's record can contradict ours here;
				// the committed image is the truth.
				c.log.Error("own pending record contradicts the committed image; using the committed image",
					"record", record.Name(r), "offset", b.first, "err", err)
				st.working = st.committed
				return
			}
		}
	}
	last := st.pending[len(st.pending)-1]
	st.working = d.Apply(image.MetadataProvenance{
		LastContainedOffset:    last.last,
		LastContainedEpoch:     last.epoch,
		LastContainedLogTimeMs: c.now().UnixMilli(),
		IsOffsetBatchAligned:   true,
	})
}

// renounce stops being active: pending records are dropped (a later
// committed image may still hold them), waiting requests hear
// NOT_CONTROLLER, and the state goes back to the committed image.
func (c *QuorumController) renounce(reason string) {
	st := &c.st
	pending := st.pending
	st.pending = nil
	for _, b := range pending {
		for _, w := range b.waiters {
			w(false, -1)
		}
	}
	if !st.active {
		return
	}
	epoch := st.epoch
	st.active, st.ready = false, false
	st.working = st.committed
	st.heartbeats = map[int32]*brokerHeartbeat{}
	st.recoveryWaits = map[recoveryKey][]int32{}
	st.nextRebalance = time.Time{}
	c.activeEpoch.Store(-1)
	c.log.Info("controller deactivated", "epoch", epoch, "reason", reason)
	c.emit(Event{Kind: EventDeactivated, Epoch: epoch, Reason: reason})
}
