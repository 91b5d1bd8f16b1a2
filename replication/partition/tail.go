package partition

import (
	"sort"

	"github.com/kraftlab/kraftlab/storage"
)

// tailBufferBytes is how full one of the tail's buffers gets before the
// next batch starts another; the tail keeps two, so a leader holds about
// the last 1–2 MiB it appended in memory (a follower that is further
// behind reads the file).
const tailBufferBytes = 1 << 20

// tailBuffers is how many buffers the tail keeps: the one filling and the
// one before, so that a follower one batch behind when a buffer fills
// still reads from memory.
const tailBuffers = 2

// leaderTail keeps the newest batches a leader appended in memory, as
// they are in the log, so that the fetches that follow an append (the
// followers' and the consumers', each reading what was just written)
// cost no read of the file and no buffer of their own: the answer is a
// slice of the tail. Bytes once handed out are never written again: a
// buffer only grows past them, and a reset drops the buffers rather than
// reusing them. It holds whole, contiguous batches up to the log end.
type leaderTail struct {
	bufs []tailBuffer
}

type tailBuffer struct {
	raw []byte
	// batches are the base offset and position in raw of each batch.
	batches   []tailBatch
	base, end int64
}

type tailBatch struct {
	base int64
	pos  int
}

// reset empties the tail: after a truncation, or when a replica starts
// leading (what it appended as a follower is not kept).
func (t *leaderTail) reset() { t.bufs = nil }

// add appends whole batches the log just appended. Batches that do not
// follow the tail's end start it over.
func (t *leaderTail) add(raw []byte) {
	base, _, _, _, err := storage.PeekBatch(raw)
	if err != nil {
		t.reset()
		return
	}
	n := len(t.bufs)
	switch {
	case n > 0 && t.bufs[n-1].end != base:
		t.reset()
		n = 0
	case n > 0 && len(t.bufs[n-1].raw) > 0 && len(t.bufs[n-1].raw)+len(raw) > tailBufferBytes:
		if n == tailBuffers {
			t.bufs = append(t.bufs[:0], t.bufs[1:]...)
		}
	default:
		if n > 0 {
			t.bufs[n-1].addBatches(raw)
			return
		}
	}
	t.bufs = append(t.bufs, tailBuffer{base: base, end: base, raw: make([]byte, 0, len(raw))})
	t.bufs[len(t.bufs)-1].addBatches(raw)
}

// addBatches appends raw to the buffer, growing it (a grown buffer is a
// new array; slices of the old one stay as they were).
func (b *tailBuffer) addBatches(raw []byte) {
	for pos := 0; pos < len(raw); {
		base, last, _, size, err := storage.PeekBatch(raw[pos:])
		if err != nil {
			// The log checked the batches; a tail that cannot describe
			// its bytes keeps none of this append.
			raw = raw[:pos]
			break
		}
		b.batches = append(b.batches, tailBatch{base: base, pos: len(b.raw) + pos})
		b.end = last + 1
		pos += size
	}
	b.raw = append(b.raw, raw...)
}

// read returns whole batches from the one holding offset, up to maxBytes
// but at least one (as storage.Log.Read, which may also stop short, at a
// segment's end: here at a buffer's), and whether the tail holds offset.
func (t *leaderTail) read(offset int64, maxBytes int) ([]byte, bool) {
	for i := len(t.bufs) - 1; i >= 0; i-- {
		b := &t.bufs[i]
		if len(b.batches) == 0 || offset < b.base || offset >= b.end {
			continue
		}
		j := sort.Search(len(b.batches), func(j int) bool { return b.batches[j].base > offset }) - 1
		from := b.batches[j].pos
		to := b.batchEnd(j)
		for k := j + 1; k < len(b.batches) && b.batchEnd(k)-from <= maxBytes; k++ {
			to = b.batchEnd(k)
		}
		return b.raw[from:to:to], true
	}
	return nil, false
}

// batchEnd is the position in raw after batch j.
func (b *tailBuffer) batchEnd(j int) int {
	if j+1 < len(b.batches) {
		return b.batches[j+1].pos
	}
	return len(b.raw)
}
