package image

import (
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// ProducerIdsImage is where the next block of producer ids starts (Kafka's
// ProducerIdsImage): the NextProducerID of the last ProducerIdsRecord, or
// -1 before the controller handed out any block.
type ProducerIdsImage struct {
	nextProducerID int64
}

// emptyProducerIds is Kafka's ProducerIdsImage.EMPTY.
var emptyProducerIds = ProducerIdsImage{nextProducerID: -1}

// NextProducerID is the first producer id no block holds yet, -1 if no
// block was handed out.
func (p ProducerIdsImage) NextProducerID() int64 { return p.nextProducerID }

// IsEmpty reports whether no block was handed out.
func (p ProducerIdsImage) IsEmpty() bool { return p.nextProducerID == emptyProducerIds.nextProducerID }

// records is the image as a snapshot states it: one ProducerIdsRecord with
// no broker, as Kafka's ProducerIdsImage.write, or nothing when empty.
func (p ProducerIdsImage) records() []record.Record {
	if p.IsEmpty() {
		return nil
	}
	return []record.Record{&record.ProducerIdsRecord{BrokerID: -1, BrokerEpoch: -1, NextProducerID: p.nextProducerID}}
}

// replayProducerIds moves the next producer id. Outside a snapshot it
// must grow: ids handed out twice would give two producers one id, which
// Kafka's ProducerIdControlManager.replay refuses as well.
func (d *MetadataDelta) replayProducerIds(r *record.ProducerIdsRecord) error {
	cur := d.image.producerIds.nextProducerID
	if d.producerIds != nil {
		cur = d.producerIds.nextProducerID
	}
	switch {
	case r.NextProducerID < 0:
		return fmt.Errorf("next producer id %d is negative", r.NextProducerID)
	case !d.snapshot && cur >= 0 && r.NextProducerID <= cur:
		return fmt.Errorf("next producer id %d is not above the current %d", r.NextProducerID, cur)
	}
	d.producerIds = &ProducerIdsImage{nextProducerID: r.NextProducerID}
	return nil
}
