package storage

import (
	"bytes"
	"fmt"
	"math"
	"os"
)

// scanChunk is how much a scan reads from a segment at a time.
const scanChunk = 1 << 20

// fileWindow reads a file sequentially through one reusable buffer.
type fileWindow struct {
	f    *os.File
	path string
	size int64
	buf  []byte // bytes [off, off+len(buf)) of the file
	off  int64
	err  error // the first failed read
}

// avail returns the file's bytes from pos to the end of the buffered window,
// refilling the window at pos when it holds fewer than want of them. The
// result is shorter than want only at the end of the file.
func (w *fileWindow) avail(pos int64, want int) ([]byte, error) {
	if rest := w.size - pos; int64(want) > rest {
		want = int(max(rest, 0))
	}
	if pos >= w.off && pos+int64(want) <= w.off+int64(len(w.buf)) {
		return w.buf[pos-w.off:], nil
	}
	n := int(min(int64(max(want, scanChunk)), w.size-pos))
	if cap(w.buf) < n {
		w.buf = make([]byte, n)
	}
	w.buf, w.off = w.buf[:n], pos
	if _, err := w.f.ReadAt(w.buf, pos); err != nil {
		w.buf = w.buf[:0]
		return nil, fmt.Errorf("read %s at position %d: %w", w.path, pos, err)
	}
	return w.buf, nil
}

// batch returns the bytes of the batch at pos as far as the file holds
// them, its header when the header is sound, and what is wrong with the
// batch. A failed read is also kept in w.err, which callers check to tell
// an I/O error from damage.
func (w *fileWindow) batch(pos int64) ([]byte, batchHeader, error) {
	b, err := w.avail(pos, BatchHeaderSize)
	if err != nil {
		w.err = err
		return nil, batchHeader{}, err
	}
	h, err := parseHeader(b)
	if err != nil {
		return b, h, err
	}
	if int64(h.size) > w.size-pos {
		return b, h, fmt.Errorf("%w: batch of %d bytes, %d left in the file", ErrShortBatch, h.size, w.size-pos)
	}
	if b, err = w.avail(pos, h.size); err != nil {
		w.err = err
		return nil, h, err
	}
	_, err = verifyBatch(b[:h.size])
	return b[:h.size], h, err
}

// segmentScan is what reading a segment from its first byte found.
type segmentScan struct {
	size      int64 // bytes of whole, valid batches from the start
	next      int64 // offset after the last of them
	lastEpoch int32
	index     []indexEntry

	// When the valid batches end before the file does:
	damage  error // why the batch at size was rejected
	dropped int   // intact batches walked from size by their lengths
	// intactAfter is the position of an intact batch past the damage, one
	// that could belong to the log (offset at or past next), or -1.
	intactAfter int64
}

// scanSegment reads a whole segment file starting at offset base, checking
// every batch and that offsets follow base and epochs never fall below
// epoch. It appends the epoch changes it sees to epochs and rebuilds the
// index the appends would have written. Its error is an I/O error: damage
// is reported in the result.
func scanSegment(w *fileWindow, base int64, epoch int32, interval int, epochs *[]EpochEntry) (segmentScan, error) {
	res := segmentScan{next: base, lastEpoch: epoch, intactAfter: -1}
	seg := segment{base: base}
	pos := int64(0)
	for pos < w.size {
		_, h, bad := w.batch(pos)
		if w.err != nil {
			return res, w.err
		}
		switch {
		case bad != nil:
			res.damage = bad
		case h.base != res.next:
			res.damage = fmt.Errorf("%w: batch of offsets %d-%d where %d was expected", ErrUnexpectedOffset, h.base, h.last, res.next)
		case h.epoch < res.lastEpoch:
			res.damage = fmt.Errorf("%w: batch at offset %d has leader epoch %d after %d", ErrStaleEpoch, h.base, h.epoch, res.lastEpoch)
		case h.last-base > math.MaxInt32:
			res.damage = fmt.Errorf("%w: offset %d too far from the segment's base", ErrCorruptBatch, h.last)
		}
		if res.damage != nil {
			break
		}
		seg.maybeIndex(h.last, pos, interval)
		if n := len(*epochs); n == 0 || h.epoch > (*epochs)[n-1].Epoch {
			*epochs = append(*epochs, EpochEntry{Epoch: h.epoch, StartOffset: h.base})
		}
		res.lastEpoch, res.next = h.epoch, h.last+1
		pos += int64(h.size)
	}
	res.size, res.index = pos, seg.index
	if res.damage == nil {
		return res, nil
	}
	for p := pos; p < w.size; {
		b, _, bad := w.batch(p)
		if w.err != nil {
			return res, w.err
		}
		if bad != nil {
			break
		}
		res.dropped++
		p += int64(len(b))
	}
	var err error
	res.intactAfter, err = findIntactBatch(w, pos+1, res.next, base)
	return res, err
}

// findIntactBatch searches the file from position from, byte by byte, for a
// batch that passes its CRC and could continue a segment starting at base
// whose next offset is next. It returns the batch's position, or -1.
func findIntactBatch(w *fileWindow, from, next, base int64) (int64, error) {
	for q := from; w.size-q >= BatchHeaderSize; {
		b, err := w.avail(q, BatchHeaderSize)
		if err != nil {
			return -1, err
		}
		i := bytes.IndexByte(b[offsetMagic:len(b)-(BatchHeaderSize-offsetMagic-1)], magicV2)
		if i < 0 {
			q += int64(len(b) - BatchHeaderSize + 1)
			continue
		}
		q += int64(i)
		h, err := parseHeader(b[i:])
		if err == nil && h.base >= next && h.last >= h.base && h.last-base <= math.MaxInt32 && int64(h.size) <= w.size-q {
			if b, err = w.avail(q, h.size); err != nil {
				return -1, err
			}
			if _, err := verifyBatch(b[:h.size]); err == nil {
				return q, nil
			}
		}
		q++
	}
	return -1, nil
}
