package record

// ProducerIdsRecord (apiKey 15, version 0) hands a block of producer ids to
// a broker: the active controller writes one per AllocateProducerIds, and
// NextProducerID is the first id of the block after it, so replaying the
// log tells every controller where the next block starts.
type ProducerIdsRecord struct {
	Version int16
	// BrokerID is the broker the block went to.
	BrokerID int32
	// BrokerEpoch is that broker's epoch when it asked (-1 by default).
	BrokerEpoch int64
	// NextProducerID is the first id not yet handed out.
	NextProducerID int64
}

// APIKey is KeyProducerIds.
func (*ProducerIdsRecord) APIKey() APIKey { return KeyProducerIds }

// RecordVersion is r.Version.
func (r *ProducerIdsRecord) RecordVersion() int16 { return r.Version }

func (r *ProducerIdsRecord) encode(w *writer) {
	w.int32(r.BrokerID)
	w.int64(r.BrokerEpoch)
	w.int64(r.NextProducerID)
	w.uvarint(0)
}

func (r *ProducerIdsRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.BrokerID = rd.int32()
	r.BrokerEpoch = rd.int64()
	r.NextProducerID = rd.int64()
	rd.noTags()
}

func (r *ProducerIdsRecord) json(w *JSONWriter) {
	w.Key("brokerId")
	w.Int(int64(r.BrokerID))
	w.Key("brokerEpoch")
	w.Int(r.BrokerEpoch)
	w.Key("nextProducerId")
	w.Int(r.NextProducerID)
}
