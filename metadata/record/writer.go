package record

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// writer appends Kafka's primitive types to a buffer. The first failure
// sticks in err.
type writer struct {
	b   []byte
	err error
}

func (w *writer) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *writer) int8(v int8) { w.b = append(w.b, byte(v)) }

func (w *writer) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *writer) int16(v int16)   { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) uint16(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *writer) int32(v int32)   { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64)   { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) uuid(u Uuid)     { w.b = append(w.b, u[:]...) }

func (w *writer) uvarint(v uint32) {
	for v >= 0x80 {
		w.b = append(w.b, byte(v)|0x80)
		v >>= 7
	}
	w.b = append(w.b, byte(v))
}

// uvarintSize is the size of v as an unsigned varint.
func uvarintSize(v uint32) int {
	return (bits.Len32(v|1) + 6) / 7
}

func (w *writer) string(field, s string) {
	if len(s) > 0x7fff {
		w.fail("string field %s is %d bytes, more than 32767", field, len(s))
		return
	}
	w.uvarint(uint32(len(s)) + 1)
	w.b = append(w.b, s...)
}

func (w *writer) nullableString(field string, s *string) {
	if s == nil {
		w.uvarint(0)
		return
	}
	w.string(field, *s)
}

// nullableStringSize is the encoded size of a compact nullable string.
func nullableStringSize(s *string) int {
	if s == nil {
		return 1
	}
	return uvarintSize(uint32(len(*s))+1) + len(*s)
}

// bytes writes a compact, non-nullable byte array.
func (w *writer) bytes(b []byte) {
	w.uvarint(uint32(len(b)) + 1)
	w.b = append(w.b, b...)
}

// arrayLen writes a compact array length; a nil slice of a nullable field
// is null, of any other field an empty array.
func (w *writer) arrayLen(n int, isNil, nullable bool) {
	if isNil && nullable {
		w.uvarint(0)
		return
	}
	w.uvarint(uint32(n) + 1)
}

func (w *writer) int32s(a []int32, nullable bool) {
	w.arrayLen(len(a), a == nil, nullable)
	for _, v := range a {
		w.int32(v)
	}
}

func (w *writer) uuids(a []Uuid, nullable bool) {
	w.arrayLen(len(a), a == nil, nullable)
	for _, u := range a {
		w.uuid(u)
	}
}

// encoder is a struct of a struct array, which encodes itself.
type encoder[T any] interface {
	*T
	encode(w *writer)
}

// encodeStructs writes a compact array of structs.
func encodeStructs[T any, P encoder[T]](w *writer, a []T, nullable bool) {
	w.arrayLen(len(a), a == nil, nullable)
	for i := range a {
		P(&a[i]).encode(w)
	}
}

// int32sSize is the encoded size of a compact int32 array.
func int32sSize(a []int32, nullable bool) int {
	if a == nil && nullable {
		return 1
	}
	return uvarintSize(uint32(len(a))+1) + 4*len(a)
}

// uuidsSize is the encoded size of a compact uuid array.
func uuidsSize(a []Uuid, nullable bool) int {
	if a == nil && nullable {
		return 1
	}
	return uvarintSize(uint32(len(a))+1) + 16*len(a)
}

// tagHeader starts a tagged field of the given size; the field's value
// follows.
func (w *writer) tagHeader(tag uint32, size int) {
	w.uvarint(tag)
	w.uvarint(uint32(size))
}

// count returns how many of the flags are true: the number of tagged
// fields a struct writes.
func count(flags ...bool) uint32 {
	var n uint32
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}
