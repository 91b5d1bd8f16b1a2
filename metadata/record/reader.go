package record

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort is what every read past the end of a record says.
var errShort = errors.New("unexpected end of record")

// reader reads Kafka's primitive types from a record's bytes. The first
// failure sticks: later reads return zero values and err keeps the first
// cause, so decoders read straight through and check once.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errShort
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) int8() int8 {
	p := r.take(1)
	if p == nil {
		return 0
	}
	return int8(p[0])
}

func (r *reader) bool() bool { return r.int8() != 0 }

func (r *reader) int16() int16 {
	p := r.take(2)
	if p == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(p))
}

func (r *reader) uint16() uint16 { return uint16(r.int16()) }

func (r *reader) int32() int32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

func (r *reader) int64() int64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

func (r *reader) uuid() Uuid {
	var u Uuid
	if p := r.take(16); p != nil {
		copy(u[:], p)
	}
	return u
}

// uvarint reads an unsigned varint of at most 5 bytes (a uint32), as
// Kafka's ByteUtils.readUnsignedVarint does.
func (r *reader) uvarint() uint32 {
	if r.err != nil {
		return 0
	}
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(r.b) {
			r.err = errShort
			return 0
		}
		c := r.b[i]
		if i == 4 && c > 0x0f {
			r.fail("unsigned varint does not fit 32 bits")
			return 0
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.b = r.b[i+1:]
			return v
		}
	}
	r.fail("unsigned varint longer than 5 bytes")
	return 0
}

// compactLen reads a compact length (n+1, 0 for null). ok is false for null.
func (r *reader) compactLen() (n int, ok bool) {
	v := r.uvarint()
	if r.err != nil || v == 0 {
		return 0, false
	}
	return int(v - 1), true
}

// stringLen checks a string's length as Kafka's generated readers do
// (at most 0x7fff bytes) and against the bytes left.
func (r *reader) stringBytes(field string, nullable bool) ([]byte, bool) {
	n, ok := r.compactLen()
	if r.err != nil {
		return nil, false
	}
	if !ok {
		if !nullable {
			r.fail("non-nullable field %s was serialized as null", field)
		}
		return nil, false
	}
	if n > 0x7fff {
		r.fail("string field %s had invalid length %d", field, n)
		return nil, false
	}
	return r.take(n), true
}

func (r *reader) string(field string) string {
	p, _ := r.stringBytes(field, false)
	return string(p)
}

func (r *reader) nullableString(field string) *string {
	p, ok := r.stringBytes(field, true)
	if !ok || r.err != nil {
		return nil
	}
	s := string(p)
	return &s
}

// arrayLen reads a compact array's length and checks that n elements of at
// least minSize bytes each fit in what is left, so that no count allocates
// more than the record could hold. ok is false for null.
func (r *reader) arrayLen(field string, nullable bool, minSize int) (n int, ok bool) {
	n, ok = r.compactLen()
	if r.err != nil {
		return 0, false
	}
	if !ok {
		if !nullable {
			r.fail("non-nullable field %s was serialized as null", field)
		}
		return 0, false
	}
	if n > len(r.b)/minSize {
		r.fail("field %s claims %d elements, but only %d bytes remain", field, n, len(r.b))
		return 0, false
	}
	return n, true
}

// int32s reads a compact array of int32. A null array is nil; an empty
// one is a non-nil empty slice.
func (r *reader) int32s(field string, nullable bool) []int32 {
	n, ok := r.arrayLen(field, nullable, 4)
	if !ok {
		return nil
	}
	a := make([]int32, n)
	for i := range a {
		a[i] = r.int32()
	}
	return a
}

// uuids reads a compact array of uuids, nil for null.
func (r *reader) uuids(field string, nullable bool) []Uuid {
	n, ok := r.arrayLen(field, nullable, 16)
	if !ok {
		return nil
	}
	a := make([]Uuid, n)
	for i := range a {
		a[i] = r.uuid()
	}
	return a
}

// decoder is a struct of a struct array, which decodes itself.
type decoder[T any] interface {
	*T
	decode(rd *reader)
}

// decodeStructs reads a compact array of structs, nil for null. minSize is
// the least an element takes, against which the count is checked before
// the array is allocated.
func decodeStructs[T any, P decoder[T]](r *reader, field string, nullable bool, minSize int) []T {
	n, ok := r.arrayLen(field, nullable, minSize)
	if !ok {
		return nil
	}
	a := make([]T, n)
	for i := range a {
		P(&a[i]).decode(r)
	}
	return a
}

// tags reads a struct's tagged fields. known is called for each field with
// a reader over exactly its bytes and reports whether it knew the tag; a
// known field must use all of its bytes. Unknown fields are skipped. Tags
// must increase, as Kafka writes them.
func (r *reader) tags(known func(tag uint32, f *reader) bool) {
	n := r.uvarint()
	if r.err != nil {
		return
	}
	if int(n) > len(r.b)/2 {
		r.fail("%d tagged fields claimed, but only %d bytes remain", n, len(r.b))
		return
	}
	prev := int64(-1)
	for i := uint32(0); i < n && r.err == nil; i++ {
		tag := r.uvarint()
		size := r.uvarint()
		if r.err != nil {
			return
		}
		if int64(tag) <= prev {
			r.fail("tagged field %d follows tag %d", tag, prev)
			return
		}
		prev = int64(tag)
		p := r.take(int(size))
		if r.err != nil {
			return
		}
		f := reader{b: p}
		if known != nil && known(tag, &f) {
			if f.err == nil && len(f.b) != 0 {
				f.err = fmt.Errorf("%d bytes left over", len(f.b))
			}
			if f.err != nil {
				r.fail("tagged field %d: %w", tag, f.err)
				return
			}
		}
	}
}

// noTags reads a tagged-field section in which no tag is known.
func (r *reader) noTags() { r.tags(nil) }

// bytes reads a compact, non-nullable byte array into a slice of its own
// (an empty one is non-nil).
func (r *reader) bytes(field string) []byte {
	n, ok := r.compactLen()
	if r.err != nil {
		return nil
	}
	if !ok {
		r.fail("non-nullable field %s was serialized as null", field)
		return nil
	}
	p := r.take(n)
	if p == nil {
		return nil
	}
	return append([]byte{}, p...)
}

// nilIfEmpty maps an empty list to nil: for a tagged, non-nullable list,
// empty is the default and encodes as absent.
func nilIfEmpty[T any](a []T) []T {
	if len(a) == 0 {
		return nil
	}
	return a
}
