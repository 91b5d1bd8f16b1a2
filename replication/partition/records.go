package partition

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
)

// minRecordSize is the smallest a v2 record can be: a length, the
// attributes, the timestamp and offset deltas, null key and value and
// no headers, one byte each.
const minRecordSize = 7

// recordSource is what the record walk reads: a batch's records in place
// (b, copying nothing), or a decompressed stream of them (stream, when set).
type recordSource struct {
	b      []byte
	pos    int
	stream *bufio.Reader
}

func (s *recordSource) ReadByte() (byte, error) {
	if s.stream != nil {
		return s.stream.ReadByte()
	}
	if s.pos >= len(s.b) {
		return 0, io.EOF
	}
	c := s.b[s.pos]
	s.pos++
	return c, nil
}

func (s *recordSource) Discard(n int) (int, error) {
	if s.stream != nil {
		return s.stream.Discard(n)
	}
	if left := len(s.b) - s.pos; n > left {
		s.pos = len(s.b)
		return left, io.EOF
	}
	s.pos += n
	return n, nil
}

// errRecord is a record whose framing is wrong (Kafka's
// InvalidRecordException from DefaultRecord.readFrom).
var errRecord = errors.New("invalid record")

// recordWalk checks records one at a time as Kafka's DefaultRecord.readFrom
// reads them: every field inside the record's length, lengths at least -1
// (header keys at least 0), the record's length used exactly, and each
// record's offset delta its index. It reads at most limit bytes.
type recordWalk struct {
	src      recordSource
	consumed int64 // bytes read
	limit    int64
	body     int64 // bytes left in the current record
	err      error
}

// readVarint reads a zigzag varint of at most bits bits, counting it
// against the current record unless outside.
func (w *recordWalk) readVarint(bits uint, outside bool) int64 {
	if w.err != nil {
		return 0
	}
	var ux uint64
	var s uint
	for i := uint(0); ; i++ {
		if i >= (bits+6)/7 {
			w.fail("a varint longer than %d bits", bits)
			return 0
		}
		c, err := w.src.ReadByte()
		if err != nil {
			w.short(err)
			return 0
		}
		w.consumed++
		if !outside {
			if w.body--; w.body < 0 {
				w.fail("a field runs past the record's end")
				return 0
			}
		}
		ux |= uint64(c&0x7f) << s
		if c < 0x80 {
			break
		}
		s += 7
	}
	v := int64(ux >> 1)
	if ux&1 != 0 {
		v = ^v
	}
	if bits < 64 && (v < -1<<(bits-1) || v >= 1<<(bits-1)) {
		w.fail("varint %d out of range", v)
	}
	return v
}

// skip passes n bytes of the current record.
func (w *recordWalk) skip(n int64) {
	if w.err != nil {
		return
	}
	if n > w.body {
		w.fail("a field of %d bytes runs past the record's end", n)
		return
	}
	w.body -= n
	for n > 0 {
		step := int(min(n, math.MaxInt32))
		got, err := w.src.Discard(step)
		w.consumed += int64(got)
		if err != nil {
			w.short(err)
			return
		}
		n -= int64(got)
	}
}

// bytesField skips a length-prefixed field that may be null (-1).
func (w *recordWalk) bytesField(what string, minLen int64) {
	n := w.readVarint(32, false)
	if w.err == nil && n < minLen {
		w.fail("%s length %d", what, n)
		return
	}
	w.skip(max(n, 0))
}

func (w *recordWalk) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: %s", errRecord, fmt.Sprintf(format, args...))
	}
}

func (w *recordWalk) short(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if w.consumed > w.limit {
			w.err = errInflated
			return
		}
		w.fail("the records end early")
		return
	}
	if w.err == nil {
		w.err = err
	}
}

// walk checks count records.
func (w *recordWalk) walk(count int32) error {
	for i := int32(0); i < count && w.err == nil; i++ {
		length := w.readVarint(32, true)
		if w.err != nil {
			break
		}
		if length < minRecordSize-1 {
			w.fail("record %d of %d bytes", i, length)
			break
		}
		if w.consumed+length > w.limit {
			w.err = errInflated // only a stream has a limit below its end
			break
		}
		w.body = length
		w.skip(1)                        // attributes
		w.readVarint(64, false)          // timestamp delta
		delta := w.readVarint(32, false) // offset delta
		if w.err == nil && delta != int64(i) {
			w.fail("record %d has offset delta %d", i, delta)
		}
		w.bytesField("key", -1)
		w.bytesField("value", -1)
		headers := w.readVarint(32, false)
		if w.err == nil && headers < 0 {
			w.fail("record %d has %d headers", i, headers)
		}
		for h := int64(0); h < headers && w.err == nil; h++ {
			w.bytesField("header key", 0)
			w.bytesField("header value", -1)
		}
		if w.err == nil && w.body != 0 {
			w.fail("record %d has %d bytes after its last header", i, w.body)
		}
	}
	return w.err
}

// atEnd checks that nothing follows the last record.
func (w *recordWalk) atEnd() error {
	if w.err != nil {
		return w.err
	}
	_, err := w.src.ReadByte()
	switch {
	case err == nil:
		if w.consumed+1 > w.limit {
			return errInflated
		}
		return fmt.Errorf("%w: bytes after the last record (incorrect declared batch size)", errRecord)
	case errors.Is(err, io.EOF):
		return nil
	}
	return err
}
