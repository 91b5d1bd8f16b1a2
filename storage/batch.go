package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Byte layout of a v2 record batch header (Kafka's DefaultRecordBatch).
const (
	offsetLength       = 8  // batchLength follows baseOffset
	offsetLeaderEpoch  = 12 // partitionLeaderEpoch
	offsetMagic        = 16
	offsetCRC          = 17
	offsetAttributes   = 21 // the CRC covers attributes..end
	offsetLastDelta    = 23
	offsetRecordsCount = 57
	// BatchHeaderSize is the size of a v2 batch header, records excluded.
	BatchHeaderSize = 61
	// logOverhead is what precedes batchLength's count: baseOffset and batchLength.
	logOverhead = 12

	magicV2        = 2
	attrControl    = 1 << 5
	attrCompressed = 0x07
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors a batch decoder returns, wrapped with detail. Callers tell a torn
// tail (ErrShortBatch) from damage (ErrCorruptBatch) with errors.Is.
var (
	ErrShortBatch   = errors.New("short record batch")
	ErrCorruptBatch = errors.New("corrupt record batch")
)

// Record is one record of a batch. Offset and Timestamp are absolute.
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []kmsg.Header
}

// Batch is a decoded v2 record batch. Raw aliases the bytes it was decoded
// from, so the batch is only valid while they are.
type Batch struct {
	kmsg.RecordBatch
	Raw []byte
}

// LastOffset is the offset of the batch's last record.
func (b *Batch) LastOffset() int64 { return b.FirstOffset + int64(b.LastOffsetDelta) }

// NextOffset is the offset that follows the batch.
func (b *Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// IsControl reports whether the batch holds control records.
func (b *Batch) IsControl() bool { return b.Attributes&attrControl != 0 }

// Size is the batch's size in bytes.
func (b *Batch) Size() int { return len(b.Raw) }

// CopyBatches copies batches, whose Raw aliases memory that may be
// reused (a log's read buffer), into one buffer of their own.
func CopyBatches(batches []Batch) []Batch {
	size := 0
	for i := range batches {
		size += len(batches[i].Raw)
	}
	buf := make([]byte, 0, size)
	out := make([]Batch, len(batches))
	for i := range batches {
		b := batches[i]
		// Records is the tail of Raw: the records follow the header.
		header := len(b.Raw) - len(b.RecordBatch.Records)
		start := len(buf)
		buf = append(buf, b.Raw...)
		b.Raw = buf[start:len(buf):len(buf)]
		b.RecordBatch.Records = b.Raw[header:]
		out[i] = b
	}
	return out
}

// BatchSpec describes a batch to encode.
type BatchSpec struct {
	BaseOffset  int64
	LeaderEpoch int32
	Control     bool
	// Timestamp is the create time, in Unix milliseconds, of every record.
	Timestamp int64
}

// AppendBatch encodes records as one v2 batch and appends it to dst. The
// records' Offset and Timestamp fields are ignored: offsets follow
// spec.BaseOffset and every record takes spec.Timestamp.
func AppendBatch(dst []byte, spec BatchSpec, records []Record) []byte {
	start := len(dst)
	var attrs int16
	if spec.Control {
		attrs |= attrControl
	}
	rb := kmsg.RecordBatch{
		FirstOffset:          spec.BaseOffset,
		PartitionLeaderEpoch: spec.LeaderEpoch,
		Magic:                magicV2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(len(records) - 1),
		FirstTimestamp:       spec.Timestamp,
		MaxTimestamp:         spec.Timestamp,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(records)),
	}
	dst = rb.AppendTo(dst)
	for i := range records {
		dst = appendRecord(dst, int32(i), &records[i])
	}
	binary.BigEndian.PutUint32(dst[start+offsetLength:], uint32(len(dst)-start-logOverhead))
	crc := crc32.Checksum(dst[start+offsetAttributes:], castagnoli)
	binary.BigEndian.PutUint32(dst[start+offsetCRC:], crc)
	return dst
}

func appendRecord(dst []byte, offsetDelta int32, r *Record) []byte {
	body := 1 + varintLen(0) + varintLen(int64(offsetDelta)) +
		bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		body += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(body))
	dst = append(dst, 0) // attributes
	dst = binary.AppendVarint(dst, 0)
	dst = binary.AppendVarint(dst, int64(offsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

func varintLen(v int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], v)
}

// PeekBatch reads the header fields of the batch at the start of b without
// checking its CRC: its base offset, last offset, leader epoch and size.
// It fails with ErrShortBatch when b holds less than the whole batch.
func PeekBatch(b []byte) (base, last int64, epoch int32, size int, err error) {
	h, err := parseHeader(b)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if len(b) < h.size {
		return h.base, h.last, h.epoch, h.size, fmt.Errorf("%w: %d of %d bytes", ErrShortBatch, len(b), h.size)
	}
	return h.base, h.last, h.epoch, h.size, nil
}

// batchHeader is what the log needs to know about a stored batch.
type batchHeader struct {
	base, last int64
	epoch      int32
	size       int
}

// parseHeader reads the header at the start of b; b may end before the batch does.
func parseHeader(b []byte) (batchHeader, error) {
	if len(b) < BatchHeaderSize {
		return batchHeader{}, fmt.Errorf("%w: %d bytes, header needs %d", ErrShortBatch, len(b), BatchHeaderSize)
	}
	length := int32(binary.BigEndian.Uint32(b[offsetLength:]))
	if length < BatchHeaderSize-logOverhead {
		return batchHeader{}, fmt.Errorf("%w: batch length %d below the header size", ErrCorruptBatch, length)
	}
	if b[offsetMagic] != magicV2 {
		return batchHeader{}, fmt.Errorf("%w: magic %d, want %d", ErrCorruptBatch, b[offsetMagic], magicV2)
	}
	base := int64(binary.BigEndian.Uint64(b))
	return batchHeader{
		base:  base,
		last:  base + int64(int32(binary.BigEndian.Uint32(b[offsetLastDelta:]))),
		epoch: int32(binary.BigEndian.Uint32(b[offsetLeaderEpoch:])),
		size:  int(length) + logOverhead,
	}, nil
}

// verifyBatch checks the batch at the start of b the way a replica checks
// bytes before it stores them: whole, magic 2, CRC-32C, sane offsets. It does
// not decode the records, so it accepts compressed batches.
func verifyBatch(b []byte) (batchHeader, error) {
	h, err := parseHeader(b)
	if err != nil {
		return h, err
	}
	if len(b) < h.size {
		return h, fmt.Errorf("%w: %d of %d bytes", ErrShortBatch, len(b), h.size)
	}
	raw := b[:h.size]
	want := binary.BigEndian.Uint32(raw[offsetCRC:])
	if got := crc32.Checksum(raw[offsetAttributes:], castagnoli); got != want {
		return h, fmt.Errorf("%w: crc %08x, stored %08x", ErrCorruptBatch, got, want)
	}
	if h.base < 0 || h.last < h.base {
		return h, fmt.Errorf("%w: base offset %d, last offset %d", ErrCorruptBatch, h.base, h.last)
	}
	return h, nil
}

// DecodeBatch decodes and verifies the batch at the start of b: its length,
// magic, CRC-32C and header fields. The batch's Raw holds its bytes.
func DecodeBatch(b []byte) (Batch, error) {
	h, err := verifyBatch(b)
	if err != nil {
		return Batch{}, err
	}
	raw := b[:h.size]
	var batch Batch
	if err := batch.RecordBatch.ReadFrom(raw); err != nil {
		return Batch{}, fmt.Errorf("%w: %v", ErrCorruptBatch, err)
	}
	batch.Raw = raw
	if batch.Attributes&attrCompressed != 0 {
		return Batch{}, fmt.Errorf("%w: compressed batches are not supported", ErrCorruptBatch)
	}
	if batch.NumRecords < 0 {
		return Batch{}, fmt.Errorf("%w: %d records", ErrCorruptBatch, batch.NumRecords)
	}
	return batch, nil
}

// Records decodes the batch's records. Keys and values alias the batch.
func (b *Batch) Records() ([]Record, error) {
	src := b.RecordBatch.Records
	// Every record takes at least one byte, so a damaged count cannot make us
	// allocate more than the batch could hold.
	out := make([]Record, 0, min(int(b.NumRecords), len(src)))
	for i := int32(0); i < b.NumRecords; i++ {
		r, n, err := decodeRecord(src, b.FirstOffset, b.FirstTimestamp)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d of batch at offset %d: %v", ErrCorruptBatch, i, b.FirstOffset, err)
		}
		out = append(out, r)
		src = src[n:]
	}
	if len(src) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last record of batch at offset %d", ErrCorruptBatch, len(src), b.FirstOffset)
	}
	return out, nil
}

type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) bytes() []byte {
	n := r.varint()
	if r.err != nil || n < 0 {
		return nil
	}
	if int64(len(r.b)) < n {
		r.err = fmt.Errorf("field of %d bytes past the record's end", n)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func decodeRecord(src []byte, baseOffset, baseTimestamp int64) (Record, int, error) {
	length, n := binary.Varint(src)
	if n <= 0 || length < 0 || int64(len(src)-n) < length {
		return Record{}, 0, errors.New("bad record length")
	}
	r := recordReader{b: src[n : n+int(length)]}
	if len(r.b) < 1 {
		return Record{}, 0, errors.New("empty record")
	}
	r.b = r.b[1:] // attributes
	tsDelta := r.varint()
	offDelta := r.varint()
	rec := Record{Offset: baseOffset + offDelta, Timestamp: baseTimestamp + tsDelta}
	rec.Key = r.bytes()
	rec.Value = r.bytes()
	nh := r.varint()
	if r.err == nil && (nh < 0 || nh > int64(len(r.b))) {
		r.err = fmt.Errorf("bad header count %d", nh)
	}
	for i := int64(0); i < nh && r.err == nil; i++ {
		k := r.bytes()
		v := r.bytes()
		rec.Headers = append(rec.Headers, kmsg.Header{Key: string(k), Value: v})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes left in record", len(r.b))
	}
	if r.err != nil {
		return Record{}, 0, r.err
	}
	return rec, n + int(length), nil
}

// Batches iterates over the whole batches in b, verifying each. It stops at
// the first error, which it returns with the position of the bad batch.
// The *Batch handed to fn is only valid during the call (one value is
// reused for every batch); its Raw aliases b.
func Batches(b []byte, fn func(pos int, batch *Batch) error) error {
	var batch Batch
	for pos := 0; pos < len(b); {
		var err error
		batch, err = DecodeBatch(b[pos:])
		if err != nil {
			return fmt.Errorf("batch at position %d: %w", pos, err)
		}
		if err := fn(pos, &batch); err != nil {
			return err
		}
		pos += batch.Size()
	}
	return nil
}
