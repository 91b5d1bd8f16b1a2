package record

import (
	"errors"
	"fmt"
	"math"
)

// FrameVersion is the only frame version Kafka's AbstractApiMessageSerde
// writes and reads.
const FrameVersion = 1

// ErrMalformed is wrapped by every decoding error; ErrUnknown by those for
// a type or version this package does not read.
var (
	ErrMalformed = errors.New("malformed metadata record")
	ErrUnknown   = errors.New("unknown metadata record")
)

// Encode frames r as Kafka's MetadataRecordSerde does: frame version 1,
// apiKey and record version as unsigned varints, then the body. It fails
// for a version the type does not have, and when r holds a value its
// version cannot carry (as Kafka's writers throw UnsupportedVersionException).
func Encode(r Record) ([]byte, error) {
	return AppendEncode(nil, r)
}

// AppendEncode is Encode appending to dst.
func AppendEncode(dst []byte, r Record) ([]byte, error) {
	k, v := r.APIKey(), r.RecordVersion()
	max, ok := k.MaxVersion()
	if !ok {
		return dst, fmt.Errorf("%w: %s", ErrUnknown, k)
	}
	if v < 0 || v > max {
		return dst, fmt.Errorf("%s: version %d is not one of 0-%d", k, v, max)
	}
	if err := checkVersion(r); err != nil {
		return dst, fmt.Errorf("%s v%d: %w", k, v, err)
	}
	w := writer{b: dst}
	w.uvarint(FrameVersion)
	w.uvarint(uint32(k))
	w.uvarint(uint32(v))
	r.encode(&w)
	if w.err != nil {
		return dst, fmt.Errorf("%s v%d: %w", k, v, w.err)
	}
	return w.b, nil
}

// Decode reads one framed metadata record, the whole of b. The result is
// one of this package's record types (a pointer, e.g. *TopicRecord). A
// malformed record or one of an unknown type or version is an error naming
// the type; it wraps ErrMalformed or ErrUnknown.
func Decode(b []byte) (Record, error) {
	r := reader{b: b}
	frame := r.uvarint()
	key := r.uvarint()
	ver := r.uvarint()
	if r.err != nil {
		return nil, fmt.Errorf("%w: frame header: %v", ErrMalformed, r.err)
	}
	switch {
	case frame == 0:
		return nil, fmt.Errorf("%w: frame version 0 (KRaft's 2.8 preview) is not supported", ErrUnknown)
	case frame != FrameVersion:
		return nil, fmt.Errorf("%w: frame version %d (only %d is supported)", ErrUnknown, frame, FrameVersion)
	case key > math.MaxInt16:
		return nil, fmt.Errorf("%w: apiKey %d is too large", ErrMalformed, key)
	case ver > math.MaxInt16:
		return nil, fmt.Errorf("%w: %s version %d is too large", ErrMalformed, APIKey(key), ver)
	}
	k := APIKey(key)
	info, ok := keys[k]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknown, k)
	}
	if int16(ver) > info.maxVersion {
		return nil, fmt.Errorf("%w: %s version %d (this reader knows 0-%d)", ErrUnknown, k, ver, info.maxVersion)
	}
	rec := info.new()
	rec.decode(&r, int16(ver))
	if r.err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrMalformed, k, ver, r.err)
	}
	if len(r.b) > 0 {
		return nil, fmt.Errorf("%w: %s v%d: %d byte(s) of garbage after the record", ErrMalformed, k, ver, len(r.b))
	}
	return rec, nil
}

// versioned is implemented by records whose fields depend on the version.
type versioned interface {
	// check reports a value the record's version cannot carry.
	check() error
}

func checkVersion(r Record) error {
	if c, ok := r.(versioned); ok {
		return c.check()
	}
	return nil
}

// unsupported is the error for a non-default field at a version without it.
func unsupported(field string, since int16) error {
	return fmt.Errorf("non-default %s needs version %d or later", field, since)
}
