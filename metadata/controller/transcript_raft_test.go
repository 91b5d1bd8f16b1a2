package controller

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
)

// txRaft is the metadata quorum as the controller sees it: appends in the
// epoch it leads queue until the script commits them, one batch at a
// time, replaying each into the committed image it hands the controller.
type txRaft struct {
	s *txScript

	mu    sync.Mutex
	epoch int32 // the epoch it leads, -1 if none
	end   int64
	img   *image.MetadataImage
	queue []entry
	bad   []string
}

func (r *txRaft) lead(epoch int32) {
	r.mu.Lock()
	r.epoch = epoch
	r.mu.Unlock()
}

// fail fails what is queued when another node leads a later epoch: the
// leadership was lost.
func (r *txRaft) fail(epoch int32, err error) {
	r.mu.Lock()
	if epoch <= r.epoch {
		r.mu.Unlock()
		return
	}
	q := r.queue
	r.queue, r.epoch = nil, -1
	r.mu.Unlock()
	for _, e := range q {
		e.commit.err = err
		close(e.commit.done)
	}
}

func (r *txRaft) image() *image.MetadataImage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.img
}

func (r *txRaft) problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bad)
}

// append is the controller's appendFunc, on its loop.
func (r *txRaft) append(epoch int32, records [][]byte) commit {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &fakeCommit{done: make(chan struct{}), first: -1, last: -1}
	if epoch != r.epoch {
		c.err = fmt.Errorf("append for epoch %d: %w", epoch, quorum.ErrNotLeader)
		close(c.done)
		return c
	}
	recs := make([]record.Record, len(records))
	for i, b := range records {
		rec, err := record.Decode(b)
		if err != nil {
			r.bad = append(r.bad, fmt.Sprintf("a record does not decode: %v", err))
			c.err = err
			close(c.done)
			return c
		}
		recs[i] = rec
	}
	c.first, c.last = r.end, r.end+int64(len(recs))-1
	r.end += int64(len(recs))
	r.queue = append(r.queue, entry{recs: recs, commit: c})
	return c
}

// commitOne commits the oldest queued batch: the image first, then the
// commit, as the loader and the raft client report them.
func (r *txRaft) commitOne() (*fakeCommit, bool) {
	r.mu.Lock()
	if len(r.queue) == 0 {
		r.mu.Unlock()
		return nil, false
	}
	e := r.queue[0]
	r.queue = r.queue[1:]
	d := image.NewMetadataDelta(r.img)
	for i, rec := range e.recs {
		if err := d.Replay(rec); err != nil {
			r.bad = append(r.bad, fmt.Sprintf("the image refuses %s: %v", record.Name(rec), err))
		}
		r.s.note("@%d %s", e.commit.first+int64(i), r.s.recordLine(rec))
	}
	r.img = d.Apply(image.MetadataProvenance{LastContainedOffset: e.commit.last, LastContainedEpoch: max(r.epoch, 0),
		LastContainedLogTimeMs: r.s.clock.Now().UnixMilli(), IsOffsetBatchAligned: true})
	img := r.img
	r.mu.Unlock()
	r.s.ctl.HandleCommittedImage(img)
	close(e.commit.done)
	return e.commit, true
}
