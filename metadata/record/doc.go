// Package record encodes and decodes Kafka's KRaft metadata records, byte for
// byte as Kafka writes them to __cluster_metadata.
//
// # Framing
//
// A metadata record is the value of a record in a v2 batch. Kafka's
// MetadataRecordSerde (AbstractApiMessageSerde) frames it as
//
//	unsigned varint  frame version (always 1)
//	unsigned varint  apiKey        (MetadataRecordType: 0 RegisterBroker, 2 Topic, …)
//	unsigned varint  record version
//	body             the record in Kafka's flexible encoding
//
// and nothing may follow the body. The flexible encoding writes fixed-width
// integers big-endian, strings and arrays compact (unsigned varint length + 1,
// 0 for null), uuids as 16 bytes, and ends every struct with its tagged fields:
// an unsigned varint count, then per field its tag, its size and its bytes, in
// increasing tag order. A tagged field is written only when it differs from
// its default.
//
// Encode and Decode do the framing; every record is a Go type with the
// fields of Kafka's JSON schema (metadata/src/main/resources/common/metadata)
// and a Version field saying which version it is encoded at. Decode refuses
// what Kafka's reader refuses (frame version 0, unknown apiKeys and versions,
// bytes after the record, a non-nullable field written as null) and also
// tagged fields out of order; a count is checked against the bytes left
// before anything is allocated for it, so a record never makes the decoder
// allocate more than a small multiple of its own size. Unknown tagged fields
// are skipped, not kept. Errors name the record type; the caller adds the
// offset.
//
// # Control records
//
// LeaderChange, SnapshotHeader and SnapshotFooter are control records (a
// ControlRecordKey key, the message as value, no framing); package storage
// encodes them, and DecodeControl here reads them back.
package record
