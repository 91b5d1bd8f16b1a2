package quorum

import (
	"sort"

	"github.com/kraftlab/kraftlab/storage"
)

// tailMaxBytes bounds the memory the log's tail keeps, the size of each
// buffer it fills: the newest batches, which is what the listener and
// caught-up followers read. A buffer is allocated whole and never grown,
// so appending costs one copy of the bytes.
const tailMaxBytes = 1 << 20

// tail keeps the newest batches of the log in memory as they were
// appended, so that the reads a running node makes of what it just wrote
// (the listener's committed batches, a caught-up follower's Fetch) come
// from memory rather than from the file: Kafka's leader, too, hands its
// listener the batches it appended. It holds whole batches from base to
// the log end offset, contiguous. Bytes once handed out are never
// written again: a reset starts a new buffer.
type tail struct {
	raw []byte
	// batches are the base offset and position in raw of each batch, in
	// offset order.
	batches []tailBatch
	// end is the offset after the last batch; base that of the first.
	base, end int64
}

type tailBatch struct {
	base int64
	pos  int
}

// reset empties the tail, which then starts at offset. The buffer goes
// (its bytes may be in use), the index of batches is the tail's own.
func (t *tail) reset(offset int64) {
	t.raw, t.batches = nil, t.batches[:0]
	t.base, t.end = offset, offset
}

// add appends raw, whole batches that start at the tail's end (the caller
// checked them). If they do not, or the tail is full, it starts over from
// them.
func (t *tail) add(raw []byte) {
	base, _, _, _, err := storage.PeekBatch(raw)
	if err != nil {
		return
	}
	if base != t.end || len(t.raw)+len(raw) > cap(t.raw) {
		t.reset(base)
		t.raw = make([]byte, 0, max(tailMaxBytes, len(raw)))
	}
	for pos := 0; pos < len(raw); {
		b, last, _, size, err := storage.PeekBatch(raw[pos:])
		if err != nil {
			// Checked by the log already; a tail that cannot describe
			// its bytes keeps none.
			t.reset(-1)
			return
		}
		t.batches = append(t.batches, tailBatch{base: b, pos: len(t.raw) + pos})
		t.end = last + 1
		pos += size
	}
	t.raw = append(t.raw, raw...)
}

// read returns whole batches from the one holding offset, up to maxBytes
// but at least one, as storage.Log.Read does, and whether the tail holds
// offset at all.
func (t *tail) read(offset int64, maxBytes int) ([]byte, bool) {
	if len(t.batches) == 0 || offset < t.base || offset >= t.end {
		return nil, false
	}
	i := sort.Search(len(t.batches), func(i int) bool { return t.batches[i].base > offset }) - 1
	from := t.batches[i].pos
	to := t.batchEnd(i)
	for j := i + 1; j < len(t.batches) && t.batchEnd(j)-from <= maxBytes; j++ {
		to = t.batchEnd(j)
	}
	return t.raw[from:to:to], true
}

// batchEnd is the position in raw after batch i.
func (t *tail) batchEnd(i int) int {
	if i+1 < len(t.batches) {
		return t.batches[i+1].pos
	}
	return len(t.raw)
}
