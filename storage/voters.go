package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The control record types of a dynamic quorum (KIP-853): kraft.version and
// the voter set, written in the log and in snapshots.
const (
	ControlKRaftVersion = kmsg.ControlRecordKeyTypeKraftVersion
	ControlVoters       = kmsg.ControlRecordKeyTypeKraftVoters
)

// Endpoint is one listener of a voter (VotersRecord's Endpoints entry).
type Endpoint struct {
	Name string
	Host string
	Port uint16
}

// VoterRecord is one voter of a VotersRecord: its id, the directory id of
// its metadata log directory, its listeners (the first is the default one)
// and the range of kraft.version it supports.
type VoterRecord struct {
	ID          int32
	DirectoryID [16]byte
	Endpoints   []Endpoint
	MinVersion  int16
	MaxVersion  int16
}

// VotersRecordValue is the value of Kafka's VotersRecord (version 0, a
// flexible message): the whole voter set as of its offset.
type VotersRecordValue struct {
	Version int16
	Voters  []VoterRecord
}

// VotersRecord encodes a voter set as a control record of type
// KRAFT_VOTERS (6).
func VotersRecord(v VotersRecordValue) Record {
	b := binary.BigEndian.AppendUint16(nil, uint16(v.Version))
	b = binary.AppendUvarint(b, uint64(len(v.Voters))+1)
	for _, vr := range v.Voters {
		b = binary.BigEndian.AppendUint32(b, uint32(vr.ID))
		b = append(b, vr.DirectoryID[:]...)
		b = binary.AppendUvarint(b, uint64(len(vr.Endpoints))+1)
		for _, e := range vr.Endpoints {
			b = appendCompactString(b, e.Name)
			b = appendCompactString(b, e.Host)
			b = binary.BigEndian.AppendUint16(b, e.Port)
			b = append(b, 0) // no tagged fields
		}
		b = binary.BigEndian.AppendUint16(b, uint16(vr.MinVersion))
		b = binary.BigEndian.AppendUint16(b, uint16(vr.MaxVersion))
		b = append(b, 0, 0) // no tagged fields in the feature, nor in the voter
	}
	b = append(b, 0)
	return Record{Key: controlKey(ControlVoters), Value: b}
}

// KRaftVersionRecord encodes the finalized kraft.version as a control
// record of type KRAFT_VERSION (5).
func KRaftVersionRecord(level int16) Record {
	v := binary.BigEndian.AppendUint16(nil, 0)
	v = binary.BigEndian.AppendUint16(v, uint16(level))
	v = append(v, 0)
	return Record{Key: controlKey(ControlKRaftVersion), Value: v}
}

// Errors of ParseVoters and ParseKRaftVersion: a value that does not
// decode, and a message version other than 0, the only one Kafka defines
// (a later one could lay its fields out differently, so nothing past the
// version is read).
var (
	ErrControlValue   = errors.New("malformed control record value")
	ErrControlVersion = errors.New("unknown control record version")
)

// ParseVoters decodes a VotersRecord's value. Tagged fields are skipped;
// a version other than 0 is refused, as Kafka defines no other.
func ParseVoters(r Record) (VotersRecordValue, error) {
	rd := flexReader{b: r.Value}
	var v VotersRecordValue
	v.Version = rd.int16()
	if err := rd.known("VotersRecord", r.Offset, v.Version); err != nil {
		return VotersRecordValue{}, err
	}
	n := rd.compactLen()
	for i := 0; i < n && rd.err == nil; i++ {
		var vr VoterRecord
		vr.ID = rd.int32()
		copy(vr.DirectoryID[:], rd.bytes(16))
		ne := rd.compactLen()
		for j := 0; j < ne && rd.err == nil; j++ {
			var e Endpoint
			e.Name = rd.compactString()
			e.Host = rd.compactString()
			e.Port = uint16(rd.int16())
			rd.skipTags()
			vr.Endpoints = append(vr.Endpoints, e)
		}
		vr.MinVersion = rd.int16()
		vr.MaxVersion = rd.int16()
		rd.skipTags()
		rd.skipTags()
		v.Voters = append(v.Voters, vr)
	}
	rd.skipTags()
	if err := rd.done("VotersRecord", r.Offset); err != nil {
		return VotersRecordValue{}, err
	}
	return v, nil
}

// ParseKRaftVersion decodes a KRaftVersionRecord's value and returns the
// kraft.version it finalizes.
func ParseKRaftVersion(r Record) (int16, error) {
	rd := flexReader{b: r.Value}
	version := rd.int16()
	if err := rd.known("KRaftVersionRecord", r.Offset, version); err != nil {
		return 0, err
	}
	level := rd.int16()
	rd.skipTags()
	if err := rd.done("KRaftVersionRecord", r.Offset); err != nil {
		return 0, err
	}
	return level, nil
}

func appendCompactString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s))+1)
	return append(b, s...)
}

// flexReader reads the fields of a flexible (KIP-482) message; the first
// failure sticks.
type flexReader struct {
	b   []byte
	err error
}

func (r *flexReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: short or bad %s", ErrControlValue, what)
	}
	r.b = nil
}

func (r *flexReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.fail("field")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *flexReader) int16() int16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

func (r *flexReader) int32() int32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *flexReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// compactLen reads a compact array's length; null (0) reads as empty. A
// length beyond what the bytes left could hold is refused before anything
// is allocated for it.
func (r *flexReader) compactLen() int {
	n := r.uvarint()
	if n == 0 {
		return 0
	}
	if n-1 > uint64(len(r.b)) || n-1 > math.MaxInt32 {
		r.fail("array length")
		return 0
	}
	return int(n - 1)
}

func (r *flexReader) compactString() string {
	n := r.uvarint()
	if n == 0 {
		r.fail("string (null)")
		return ""
	}
	if n-1 > uint64(len(r.b)) {
		r.fail("string length")
		return ""
	}
	return string(r.bytes(int(n - 1)))
}

// skipTags skips a tagged-field section: the count, then each tag's id,
// size and bytes.
func (r *flexReader) skipTags() {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("tagged fields")
		return
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.uvarint()
		size := r.uvarint()
		if size > uint64(len(r.b)) {
			r.fail("tagged field")
			return
		}
		r.bytes(int(size))
	}
}

// known checks the message version read first.
func (r *flexReader) known(name string, offset int64, version int16) error {
	switch {
	case r.err != nil:
		return fmt.Errorf("%s at offset %d: %w", name, offset, r.err)
	case version != 0:
		return fmt.Errorf("%s at offset %d: %w: version %d (only 0 exists)", name, offset, ErrControlVersion, version)
	}
	return nil
}

func (r *flexReader) done(name string, offset int64) error {
	switch {
	case r.err != nil:
		return fmt.Errorf("%s at offset %d: %w", name, offset, r.err)
	case len(r.b) > 0:
		return fmt.Errorf("%s at offset %d: %w: %d byte(s) after the message", name, offset, ErrControlValue, len(r.b))
	}
	return nil
}

// ControlBatches calls fn with each control batch among the whole batches
// in b, decoding (and verifying) only those: the quorum looks for its own
// records in what it appends without paying for the data batches. A
// trailing partial batch ends the walk.
func ControlBatches(b []byte, fn func(batch *Batch) error) error {
	for pos := 0; pos < len(b); {
		_, _, _, size, err := PeekBatch(b[pos:])
		if errors.Is(err, ErrShortBatch) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("batch at position %d: %w", pos, err)
		}
		if int16(binary.BigEndian.Uint16(b[pos+offsetAttributes:]))&attrControl != 0 {
			batch, err := DecodeBatch(b[pos : pos+size])
			if err != nil {
				return fmt.Errorf("batch at position %d: %w", pos, err)
			}
			if err := fn(&batch); err != nil {
				return err
			}
		}
		pos += size
	}
	return nil
}
