package storage

import "sort"

// tailBufferBytes is how many bytes a Tail keeps besides the buffer
// filling: it holds about the last 1–2 MiB appended (a reader further
// behind reads the file).
const tailBufferBytes = 1 << 20

// tailFirstBytes is the capacity of a Tail's first buffer; each next one
// doubles it, up to tailBufferBytes, so a quiet log keeps little memory
// and a busy one few buffers.
const tailFirstBytes = 64 << 10

// Tail keeps the newest batches appended to a log in memory, as they are
// in the file, so that the reads that follow an append (a metadata
// log's listener and its caught-up followers; a partition leader's
// followers and consumers, each reading what was just written) cost no
// read of the file and no buffer of their own: the answer is a slice of
// the tail. Kafka's leader, too, hands its raft listener the batches it
// appended. Bytes once handed out are never written again: a buffer is
// only filled past them (a full one is never grown, which would copy it:
// the next batch starts a new one), and Reset drops the buffers rather
// than reusing them. It holds whole, contiguous batches up to the log end. The zero Tail is
// empty; it is not safe for concurrent use (its log's lock guards it).
type Tail struct {
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

// Reset empties the tail: after a truncation, a new log start, or
// whenever what follows is not to be served from memory.
func (t *Tail) Reset() { t.bufs = nil }

// Base is the first offset the tail holds, if it holds any.
func (t *Tail) Base() (int64, bool) {
	if len(t.bufs) == 0 || len(t.bufs[0].batches) == 0 {
		return 0, false
	}
	return t.bufs[0].base, true
}

// Add appends whole batches the log just appended (it checked them).
// Batches that do not follow the tail's end start it over.
func (t *Tail) Add(raw []byte) {
	base, _, _, _, err := PeekBatch(raw)
	if err != nil {
		t.Reset()
		return
	}
	n := len(t.bufs)
	if n > 0 && t.bufs[n-1].end != base {
		t.Reset()
		n = 0
	}
	if n > 0 && len(t.bufs[n-1].raw)+len(raw) <= cap(t.bufs[n-1].raw) {
		t.bufs[n-1].addBatches(raw)
		return
	}
	size := tailFirstBytes
	if n > 0 {
		size = min(2*cap(t.bufs[n-1].raw), tailBufferBytes)
	}
	t.bufs = append(t.bufs, tailBuffer{base: base, end: base, raw: make([]byte, 0, max(size, len(raw)))})
	t.bufs[n].addBatches(raw)
	t.trim()
}

// trim drops the oldest buffers while the ones after them, the filling
// one included, hold tailBufferBytes.
func (t *Tail) trim() {
	kept := 0
	for i := range t.bufs {
		kept += len(t.bufs[i].raw)
	}
	drop := 0
	for drop < len(t.bufs)-1 && kept-len(t.bufs[drop].raw) >= tailBufferBytes {
		kept -= len(t.bufs[drop].raw)
		drop++
	}
	if drop > 0 {
		t.bufs = append(t.bufs[:0], t.bufs[drop:]...)
	}
}

// addBatches appends raw to the buffer, which has room for it.
func (b *tailBuffer) addBatches(raw []byte) {
	for pos := 0; pos < len(raw); {
		base, last, _, size, err := PeekBatch(raw[pos:])
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

// Read returns whole batches from the one holding offset, up to maxBytes
// but at least one (as Log.Read, which may also stop short, at a
// segment's end: here at a buffer's), and whether the tail holds offset.
// The bytes are the tail's own: the caller must not write to them.
func (t *Tail) Read(offset int64, maxBytes int) ([]byte, bool) {
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
