package quorum

// noOpRecord is Kafka's NoOpRecord (metadata record API key 20, version 0)
// as a metadata log record value, framed like MetadataRecordSerde frames
// every record: unsigned varints of the frame version (1), the API key and
// the version, then the record, which for a NoOpRecord is only its empty
// tagged fields. The active controller appends one when it has written
// nothing for metadata.max.idle.interval.ms, so that followers and
// brokers see the log and the high watermark move.
var noOpRecord = []byte{1, 20, 0, 0}
