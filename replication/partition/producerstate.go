package partition

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// NumBatchesToRetain is how many of a producer's last batches the state
// remembers, so that a retry of any of them is found (Kafka's
// ProducerStateEntry.NUM_BATCHES_TO_RETAIN; clients keep at most five
// produces in flight per partition with idempotence on).
const NumBatchesToRetain = 5

// Where a v2 batch header keeps the producer's fields (Kafka's
// DefaultRecordBatch offsets).
const (
	attributesOffset      = 21
	lastOffsetDeltaOffset = 23
	maxTimestampOffset    = 35
	producerIDOffset      = 43
	producerEpochOffset   = 51
	baseSequenceOffset    = 53
	attrTransactional     = 1 << 4
)

// BatchMetadata is one batch a producer appended (Kafka's BatchMetadata):
// its sequence range and the offsets it took.
type BatchMetadata struct {
	// FirstSeq and LastSeq are the sequences of its first and last
	// records (LastSeq wraps past MaxInt32 to 0).
	FirstSeq, LastSeq int32
	// FirstOffset and LastOffset are the offsets the log gave them.
	FirstOffset, LastOffset int64
	// Timestamp is the batch's max timestamp.
	Timestamp int64
}

// ProducerStateEntry is what a replica knows of one producer id (Kafka's
// ProducerStateEntry): its epoch and its last batches, oldest first.
type ProducerStateEntry struct {
	// ProducerID is the id InitProducerId handed the producer.
	ProducerID int64
	// ProducerEpoch is the epoch of its last batch.
	ProducerEpoch int16
	// Batches are its last batches of that epoch, at most
	// NumBatchesToRetain, oldest first.
	Batches []BatchMetadata
}

func (e *ProducerStateEntry) lastSeq() int32 { return e.Batches[len(e.Batches)-1].LastSeq }

// addBatch is Kafka's addBatch: a new epoch forgets the old one's batches,
// and only the last NumBatchesToRetain stay.
func (e *ProducerStateEntry) addBatch(epoch int16, b BatchMetadata) {
	if e.ProducerEpoch != epoch {
		e.Batches = e.Batches[:0]
		e.ProducerEpoch = epoch
	}
	if len(e.Batches) == NumBatchesToRetain {
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:NumBatchesToRetain-1]
	}
	e.Batches = append(e.Batches, b)
}

// findDuplicate is Kafka's findDuplicateBatch: a batch of the same epoch
// with exactly the sequence range of a remembered one is that batch again.
func (e *ProducerStateEntry) findDuplicate(h producerHeader) (BatchMetadata, bool) {
	if e.ProducerEpoch != h.epoch {
		return BatchMetadata{}, false
	}
	last := h.lastSeq()
	for _, b := range e.Batches {
		if b.FirstSeq == h.baseSeq && b.LastSeq == last {
			return b, true
		}
	}
	return BatchMetadata{}, false
}

// producerHeader is what producer state reads of a batch header.
type producerHeader struct {
	producerID      int64
	epoch           int16
	baseSeq         int32
	lastOffsetDelta int32
	maxTimestamp    int64
	transactional   bool
	control         bool
}

// readProducerHeader reads the producer fields of the v2 batch at the
// start of raw; the caller has checked that a whole header is there.
func readProducerHeader(raw []byte) producerHeader {
	attrs := binary.BigEndian.Uint16(raw[attributesOffset:])
	return producerHeader{
		producerID:      int64(binary.BigEndian.Uint64(raw[producerIDOffset:])),
		epoch:           int16(binary.BigEndian.Uint16(raw[producerEpochOffset:])),
		baseSeq:         int32(binary.BigEndian.Uint32(raw[baseSequenceOffset:])),
		lastOffsetDelta: int32(binary.BigEndian.Uint32(raw[lastOffsetDeltaOffset:])),
		maxTimestamp:    int64(binary.BigEndian.Uint64(raw[maxTimestampOffset:])),
		transactional:   attrs&attrTransactional != 0,
		control:         attrs&attrControl != 0,
	}
}

// idempotent is Kafka's hasProducerId: -1 is "no producer id".
func (h producerHeader) idempotent() bool { return h.producerID >= 0 }

// lastSeq is Kafka's DefaultRecordBatch.lastSequence: sequences wrap from
// MaxInt32 to 0.
func (h producerHeader) lastSeq() int32 {
	return int32((int64(h.baseSeq) + int64(h.lastOffsetDelta)) % (math.MaxInt32 + 1))
}

// inSequence is Kafka's ProducerAppendInfo.inSequence.
func inSequence(lastSeq, nextSeq int32) bool {
	return int64(nextSeq) == int64(lastSeq)+1 || (nextSeq == 0 && lastSeq == math.MaxInt32)
}

// producerStateManager is Kafka's ProducerStateManager without snapshots:
// per producer id, its epoch and last batches, as the log below the log
// end offset has them.
type producerStateManager struct {
	producers map[int64]*ProducerStateEntry
}

func newProducerStateManager() producerStateManager {
	return producerStateManager{producers: map[int64]*ProducerStateEntry{}}
}

// duplicateOrCheck is the leader's check of a client batch, Kafka's
// analyzeAndValidateProducerState with ProducerAppendInfo's checks for
// origin CLIENT: a batch of a non-idempotent producer passes; a retry of
// one of the producer's remembered batches is reported as that batch; a
// transactional batch is INVALID_TXN_STATE (kraftlab has no transaction
// coordinator, so no transaction is ever ongoing); an epoch below the
// producer's is INVALID_PRODUCER_EPOCH; a new epoch must start at sequence
// 0 and the same epoch must go on from the last sequence, else
// OUT_OF_ORDER_SEQUENCE_NUMBER. An unknown producer may start at any
// sequence, as Kafka accepts one whose state retention removed.
func (m *producerStateManager) duplicateOrCheck(h producerHeader) (dup BatchMetadata, isDup bool, err error) {
	if !h.idempotent() {
		return BatchMetadata{}, false, nil
	}
	e := m.producers[h.producerID]
	if e != nil {
		if b, ok := e.findDuplicate(h); ok {
			return b, true, nil
		}
	}
	if h.transactional {
		return BatchMetadata{}, false, fmt.Errorf("producer %d: transactional records are not part of an ongoing transaction: %w", h.producerID, kerr.InvalidTxnState)
	}
	if e == nil || len(e.Batches) == 0 || e.ProducerEpoch == -1 {
		return BatchMetadata{}, false, nil
	}
	switch {
	case h.epoch < e.ProducerEpoch:
		return BatchMetadata{}, false, fmt.Errorf("producer %d: epoch %d is smaller than the last seen epoch %d: %w", h.producerID, h.epoch, e.ProducerEpoch, kerr.InvalidProducerEpoch)
	case h.epoch != e.ProducerEpoch && h.baseSeq != 0:
		return BatchMetadata{}, false, fmt.Errorf("producer %d: new epoch %d starts at sequence %d, not 0: %w", h.producerID, h.epoch, h.baseSeq, kerr.OutOfOrderSequenceNumber)
	case h.epoch == e.ProducerEpoch && !inSequence(e.lastSeq(), h.baseSeq):
		return BatchMetadata{}, false, fmt.Errorf("producer %d: sequence %d does not follow %d: %w", h.producerID, h.baseSeq, e.lastSeq(), kerr.OutOfOrderSequenceNumber)
	}
	return BatchMetadata{}, false, nil
}

// update records a batch the log took at [first, last]. Followers and a
// rebuild take every batch as it is (Kafka's origin REPLICATION checks
// nothing but logs an older epoch): the leader already decided.
func (m *producerStateManager) update(h producerHeader, first, last int64) {
	if !h.idempotent() || h.control {
		return
	}
	e := m.producers[h.producerID]
	if e == nil {
		e = &ProducerStateEntry{ProducerID: h.producerID, ProducerEpoch: -1, Batches: make([]BatchMetadata, 0, NumBatchesToRetain)}
		m.producers[h.producerID] = e
	}
	e.addBatch(h.epoch, BatchMetadata{FirstSeq: h.baseSeq, LastSeq: h.lastSeq(), FirstOffset: first, LastOffset: last, Timestamp: h.maxTimestamp})
}

// updateFromBatches records every batch in raw, whole batches as the log
// stores them, and returns the offset after the last one (-1 if none).
func (m *producerStateManager) updateFromBatches(raw []byte) (next int64, err error) {
	next = -1
	for pos := 0; pos < len(raw); {
		base, last, _, size, err := storage.PeekBatch(raw[pos:])
		if err != nil {
			return next, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		if size < storage.BatchHeaderSize {
			return next, fmt.Errorf("batch at byte %d: %d bytes hold no header", pos, size)
		}
		m.update(readProducerHeader(raw[pos:]), base, last)
		pos, next = pos+size, last+1
	}
	return next, nil
}

// readChunk is how much of the log a rebuild reads at a time.
const readChunk = 1 << 20

// rebuild forgets everything and reads the producers' batches from the
// log, start to end (Kafka's truncateAndReload, without the .snapshot
// files that let Kafka start from a recent point).
func (m *producerStateManager) rebuild(log *storage.Log) error {
	clear(m.producers)
	for at := log.LogStartOffset(); at < log.LogEndOffset(); {
		raw, err := log.Read(at, readChunk)
		if err != nil {
			return fmt.Errorf("rebuild producer state at offset %d: %w", at, err)
		}
		next, err := m.updateFromBatches(raw)
		if err != nil {
			return fmt.Errorf("rebuild producer state at offset %d: %w", at, err)
		}
		if next <= at {
			return fmt.Errorf("rebuild producer state: the log's read at offset %d ended at %d", at, next)
		}
		at = next
	}
	return nil
}

// Producers returns a copy of the replica's producer state, by producer id
// (what Kafka's DescribeProducers reads).
func (p *Partition) Producers() []ProducerStateEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ProducerStateEntry, 0, len(p.producers.producers))
	for _, e := range p.producers.producers {
		c := *e
		c.Batches = slices.Clone(e.Batches)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ProducerStateEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}
