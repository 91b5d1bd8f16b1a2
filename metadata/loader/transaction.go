package loader

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// pending is what the loader has replayed since it last published: Kafka's
// MetadataBatchLoader. It outlives a HandleCommit while a metadata
// transaction is open, since a transaction may span commits.
type pending struct {
	delta *image.MetadataDelta
	// inTransaction: a BeginTransactionRecord was replayed and neither its
	// EndTransactionRecord nor an AbortTransactionRecord yet.
	inTransaction bool
	// last is the provenance of the last record replayed (or skipped, for
	// a control batch), aligned when it ends its batch.
	last image.MetadataProvenance
	// records counts the metadata records replayed since the last publish
	// (markers and aborted ones included: they move the offset too);
	// batches and bytes the batches whose last record was.
	records, batches int
	bytes            int64
	elapsed          time.Duration
}

// reset starts over on img, outside any transaction (Kafka's
// MetadataBatchLoader.resetToImage).
func (p *pending) reset(img *image.MetadataImage) {
	*p = pending{delta: image.NewMetadataDelta(img), last: img.Provenance()}
}

// isEmpty reports whether nothing was replayed since the last publish.
func (p *pending) isEmpty() bool { return p.records == 0 && p.batches == 0 }

// loadBatch replays one committed batch. At a BeginTransactionRecord it
// first publishes what came before it, as Kafka's loader does, so that an
// abort has an image to go back to; inside a transaction it publishes
// nothing. A record that does not decode or replay is returned as a
// *loadError, the pending state then holding every record before it.
func (l *Loader) loadBatch(b *storage.Batch) error {
	p := &l.pending
	recs, err := b.Records()
	if err != nil {
		return &loadError{offset: b.FirstOffset, recordType: "batch", err: fmt.Errorf("decode the batch: %w", err)}
	}
	if !b.IsControl() {
		// LeaderChange and the snapshot markers hold no metadata.
		for i, rec := range recs {
			r, err := record.Decode(rec.Value)
			if err != nil {
				return &loadError{offset: rec.Offset, recordType: recordType(rec.Value), err: err}
			}
			if err := l.replay(r, i == 0); err != nil {
				return &loadError{offset: rec.Offset, recordType: record.Name(r), err: err}
			}
			p.records++
			p.last = image.MetadataProvenance{
				LastContainedOffset:    rec.Offset,
				LastContainedEpoch:     b.PartitionLeaderEpoch,
				LastContainedLogTimeMs: b.MaxTimestamp,
			}
		}
	}
	p.batches++
	p.bytes += int64(b.Size())
	p.last = image.MetadataProvenance{
		LastContainedOffset:    b.LastOffset(),
		LastContainedEpoch:     b.PartitionLeaderEpoch,
		LastContainedLogTimeMs: b.MaxTimestamp,
		IsOffsetBatchAligned:   true,
	}
	return nil
}

// replay applies one record: a transaction marker to the transaction
// state, any other record to the pending delta. firstInBatch says the
// record opens its batch (a publish before it is batch-aligned).
func (l *Loader) replay(r record.Record, firstInBatch bool) error {
	p := &l.pending
	switch r.(type) {
	case *record.BeginTransactionRecord:
		if p.inTransaction {
			l.misplacedMarker(r, "while already in a transaction")
			return nil
		}
		if !p.isEmpty() {
			prov := p.last
			prov.IsOffsetBatchAligned = firstInBatch
			l.publishPending(prov)
		}
		p.inTransaction = true
	case *record.EndTransactionRecord:
		if !p.inTransaction {
			l.misplacedMarker(r, "without having seen a BeginTransactionRecord")
			return nil
		}
		p.inTransaction = false
	case *record.AbortTransactionRecord:
		if !p.inTransaction {
			l.misplacedMarker(r, "without having seen a BeginTransactionRecord")
			return nil
		}
		// Everything before the BeginTransactionRecord was published when
		// it was replayed, so the published image is the one to go back
		// to.
		p.delta = image.NewMetadataDelta(l.img)
		p.inTransaction = false
	default:
		return p.delta.Replay(r)
	}
	return nil
}

// misplacedMarker handles a transaction marker that does not fit the
// state as Kafka's broker does: it is a metadata load fault, logged and
// counted, and the loader goes on as if the marker were not there. (On a
// Kafka controller the fault is fatal.)
func (l *Loader) misplacedMarker(r record.Record, why string) {
	l.mu.Lock()
	l.metrics.MetadataLoadErrorCount++
	l.mu.Unlock()
	l.log.Error("transaction marker out of place, ignored", "record", record.Name(r), "why", why,
		"after", l.pending.last.LastContainedOffset)
}

// publishPending applies the pending delta as the image at prov and
// publishes it, then starts a new pending delta on it.
func (l *Loader) publishPending(prov image.MetadataProvenance) {
	p := &l.pending
	first := l.img.Provenance().LastContainedOffset + 1
	img := p.delta.Apply(prov)
	m := Manifest{
		Kind: LogDelta, Provenance: prov, Leader: l.Leader(), Elapsed: p.elapsed,
		Batches: p.batches, Records: p.records, FirstOffset: first, Bytes: p.bytes,
	}
	l.publish(p.delta, img, m)
	l.addReplayed(p.records, prov.LastContainedOffset)
	p.reset(img)
}
