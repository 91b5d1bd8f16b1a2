package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DefaultMaxMessageBytes is message.max.bytes' default: the largest batch
// a producer may append (Kafka's 1 MiB plus a batch header and a record's
// overhead).
const DefaultMaxMessageBytes = 1048588

// Header fields of a v2 batch validation reads (Kafka's DefaultRecordBatch).
const (
	magicOffset        = 16
	crcOffset          = 17
	crcCoveredFrom     = 21 // the CRC covers attributes to the end
	recordsCountOffset = 57
	attrCompression    = 0x07
	attrControl        = 1 << 5
	maxCompressionID   = 4 // zstd
)

// batchLimits are the sizes a producer's batch is checked against.
type batchLimits struct {
	// maxMessageBytes is message.max.bytes (MESSAGE_TOO_LARGE).
	maxMessageBytes int
	// segmentBytes is the log's segment.bytes: a batch larger than a
	// segment is RECORD_LIST_TOO_LARGE (Kafka's
	// RecordBatchTooLargeException).
	segmentBytes int
}

// validateProducerBatch checks a producer's records as Kafka's
// ProduceRequest.validateRecords and LogValidator do before the leader
// assigns offsets: exactly one v2 batch, whole, within message.max.bytes,
// its CRC, not a control batch, its record count matching its offsets, and then
// the records themselves, read as Kafka's DefaultRecord does (see
// checkRecords): so a batch that claims more records than it holds
// cannot move the log end past them.
func validateProducerBatch(raw []byte, lim batchLimits) error {
	if len(raw) <= magicOffset {
		return fmt.Errorf("%d bytes hold no batch header: %w", len(raw), kerr.CorruptMessage)
	}
	if raw[magicOffset] != 2 {
		return fmt.Errorf("batch of magic %d, only magic 2 is accepted: %w", raw[magicOffset], kerr.InvalidRecord)
	}
	_, _, _, size, err := storage.PeekBatch(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", kerr.CorruptMessage, err)
	}
	if size != len(raw) {
		return fmt.Errorf("%d bytes after the first batch: a produce carries exactly one batch: %w", len(raw)-size, kerr.InvalidRecord)
	}
	if size > lim.maxMessageBytes {
		return fmt.Errorf("batch of %d bytes is larger than message.max.bytes %d: %w", size, lim.maxMessageBytes, kerr.MessageTooLarge)
	}
	if lim.segmentBytes > 0 && size > lim.segmentBytes {
		return fmt.Errorf("batch of %d bytes is larger than segment.bytes %d: %w", size, lim.segmentBytes, kerr.RecordListTooLarge)
	}
	// The CRC first, as Kafka's analyzeAndValidateRecords calls
	// ensureValid before LogValidator reads a record: damage in transit is
	// CORRUPT_MESSAGE, whatever it did to the records.
	if got, want := crc32.Checksum(raw[crcCoveredFrom:], castagnoli), binary.BigEndian.Uint32(raw[crcOffset:]); got != want {
		return fmt.Errorf("batch crc %08x, computed %08x: %w", want, got, kerr.CorruptMessage)
	}
	h := readProducerHeader(raw)
	attrs := binary.BigEndian.Uint16(raw[attributesOffset:])
	count := int32(binary.BigEndian.Uint32(raw[recordsCountOffset:]))
	codec := Codec(attrs & attrCompression)
	switch {
	case attrs&attrControl != 0:
		return fmt.Errorf("producers may not write control batches: %w", kerr.InvalidRecord)
	case count <= 0 || h.lastOffsetDelta < 0 || int64(count) != int64(h.lastOffsetDelta)+1:
		return fmt.Errorf("batch of %d records with last offset delta %d: %w", count, h.lastOffsetDelta, kerr.InvalidRecord)
	case h.producerID >= 0 && h.baseSeq < 0:
		return fmt.Errorf("producer %d with base sequence %d: %w", h.producerID, h.baseSeq, kerr.InvalidRecord)
	case codec > maxCompressionID:
		return fmt.Errorf("compression codec %d: %w", codec, kerr.CorruptMessage)
	}
	return checkRecords(raw[storage.BatchHeaderSize:], codec, count, int64(lim.maxMessageBytes)*InflationFactor)
}

// checkRecords reads the count records of a batch's payload, decompressing
// it as a stream if codec says so, and checks each one's framing and
// offset delta, and that nothing follows the last (Kafka's
// DefaultRecordBatch iterators with DefaultRecord.readFrom). An
// uncompressed payload is read in place. A compressed one is refused once
// it decompresses past inflatedLimit bytes (MESSAGE_TOO_LARGE), before
// it has decompressed further, and when it is not valid for its codec
// (CORRUPT_MESSAGE); bad framing is INVALID_RECORD.
func checkRecords(payload []byte, codec Codec, count int32, inflatedLimit int64) error {
	if codec == CodecNone {
		if int64(count) > int64(len(payload))/minRecordSize {
			return fmt.Errorf("batch claims %d records in %d bytes: %w", count, len(payload), kerr.InvalidRecord)
		}
		w := recordWalk{src: recordSource{b: payload}, limit: math.MaxInt64}
		if err := w.walk(count); err != nil {
			return recordError(err, codec)
		}
		return recordError(w.atEnd(), codec)
	}
	if int64(count) > inflatedLimit/minRecordSize {
		return fmt.Errorf("batch claims %d records, more than %d bytes of records could hold: %w", count, inflatedLimit, kerr.InvalidRecord)
	}
	in, err := openInflater(codec, payload, inflatedLimit)
	if err != nil {
		return fmt.Errorf("%w: %w", kerr.CorruptMessage, err)
	}
	defer in.release()
	w := recordWalk{src: recordSource{stream: in.buf}, limit: inflatedLimit}
	if err := w.walk(count); err != nil {
		return recordError(err, codec)
	}
	return recordError(w.atEnd(), codec)
}

// recordError maps what the record walk found to Kafka's error.
func recordError(err error, codec Codec) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errInflated):
		return fmt.Errorf("%s batch: %w: %w", codec, err, kerr.MessageTooLarge)
	case errors.Is(err, errRecord):
		return fmt.Errorf("%s batch: %w: %w", codec, err, kerr.InvalidRecord)
	}
	return fmt.Errorf("%s batch does not decompress: %w: %w", codec, err, kerr.CorruptMessage)
}

// storageError is the Kafka error for a log failure: damaged input is
// CORRUPT_MESSAGE, anything else the disk's (KAFKA_STORAGE_ERROR).
func storageError(err error) error {
	if errors.Is(err, storage.ErrCorruptBatch) || errors.Is(err, storage.ErrShortBatch) {
		return fmt.Errorf("%w: %w", kerr.CorruptMessage, err)
	}
	return fmt.Errorf("%w: %w", kerr.KafkaStorageError, err)
}
