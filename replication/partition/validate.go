package partition

import (
	"errors"
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultMaxMessageBytes is message.max.bytes' default: the largest batch
// a producer may append (Kafka's 1 MiB plus a batch header and a record's
// overhead).
const DefaultMaxMessageBytes = 1048588

// Header fields of a v2 batch validation reads (Kafka's DefaultRecordBatch).
const (
	magicOffset      = 16
	attrCompression  = 0x07
	attrControl      = 1 << 5
	maxCompressionID = 4 // zstd
)

// validateProducerBatch checks a producer's records as Kafka's
// ProduceRequest.validateRecords and LogValidator do before the leader
// assigns offsets: exactly one v2 batch, whole, not a control batch, its
// record count matching its offsets, and for an uncompressed batch every
// record decoding at the offset it claims. The CRC is checked by the log.
func validateProducerBatch(raw []byte, maxBytes int) error {
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
	if size > maxBytes {
		return fmt.Errorf("batch of %d bytes is larger than %d: %w", size, maxBytes, kerr.MessageTooLarge)
	}
	var b kmsg.RecordBatch
	if err := b.ReadFrom(raw); err != nil {
		return fmt.Errorf("%w: %v", kerr.CorruptMessage, err)
	}
	switch {
	case b.Attributes&attrControl != 0:
		return fmt.Errorf("producers may not write control batches: %w", kerr.InvalidRecord)
	case b.NumRecords <= 0 || b.LastOffsetDelta < 0 || int64(b.NumRecords) != int64(b.LastOffsetDelta)+1:
		return fmt.Errorf("batch of %d records with last offset delta %d: %w", b.NumRecords, b.LastOffsetDelta, kerr.InvalidRecord)
	case b.ProducerID >= 0 && b.FirstSequence < 0:
		return fmt.Errorf("producer %d with base sequence %d: %w", b.ProducerID, b.FirstSequence, kerr.InvalidRecord)
	case b.Attributes&attrCompression > maxCompressionID:
		return fmt.Errorf("compression codec %d: %w", b.Attributes&attrCompression, kerr.CorruptMessage)
	case b.Attributes&attrCompression != 0:
		return nil // the log checks the CRC; records stay compressed
	}
	batch, err := storage.DecodeBatch(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", kerr.CorruptMessage, err)
	}
	recs, err := batch.Records()
	if err != nil {
		return fmt.Errorf("%w: %w", kerr.CorruptMessage, err)
	}
	for i, r := range recs {
		if r.Offset != batch.FirstOffset+int64(i) {
			return fmt.Errorf("record %d has offset delta %d: %w", i, r.Offset-batch.FirstOffset, kerr.InvalidRecord)
		}
	}
	return nil
}

// storageError is the Kafka error for a log failure: damaged input is
// CORRUPT_MESSAGE, anything else the disk's (KAFKA_STORAGE_ERROR).
func storageError(err error) error {
	if errors.Is(err, storage.ErrCorruptBatch) || errors.Is(err, storage.ErrShortBatch) {
		return fmt.Errorf("%w: %w", kerr.CorruptMessage, err)
	}
	return fmt.Errorf("%w: %w", kerr.KafkaStorageError, err)
}
