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
// # Generated code
//
// The record types, their apiKeys, and each record's version check, encoder,
// decoder and JSON printer are generated: records_gen.go, codec_gen.go and
// json_gen.go are written by recordgen (internal/recordgen) from its schema
// table, internal/recordgen/records.go. The table says of each record what
// Kafka's schema says — apiKey, versions, and per field its name, type,
// first version, tag, nullability and default — in kraftlab's own form,
// with the about text that becomes the doc comments. Never edit a
// generated file: change the table (or the generator) and run
//
//	go generate ./metadata/record/
//
// recordgen's test fails when the checked-in files differ from what it
// writes. To add a field, add it to its record in schema order with Since
// set to the version that brought it (and Tag if it is tagged), raise the
// record's MaxVersion if the field comes with a new version, and add a
// sample of that version to samples_test.go. To add a record, add an entry
// with its apiKey; it gets its type, its Key constant and its place in
// Decode. The generator refuses what it cannot write correctly (a tagged
// field it cannot size, versioned or tagged fields inside a struct, a
// struct named by two different fields), naming the record and field.
//
// The generated code is the codec's only per-field code; it calls what is
// written by hand once for all records: the reader and writer of Kafka's
// primitive types (reader.go, writer.go), whose checks give Decode the
// properties above, the framing (frame.go), the JSON writer (jsonwriter.go,
// json.go), Uuid, and the versions Kafka 4.4 writes (versions.go). The rules
// the generator applies to every field are those of Kafka's generated
// messages: a tagged field is written, and printed in JSON, only when it
// differs from its default; a version without a field refuses to encode a
// non-default value; a tagged, non-nullable list decodes as nil when empty,
// so that records round-trip. Named field values (Kafka's enums) and
// NewPartitionChangeRecord, which starts from the schema's "no change"
// defaults that Go's zero value is not, are in values.go.
//
// # Control records
//
// LeaderChange, SnapshotHeader and SnapshotFooter, and in a dynamic quorum
// KRaftVersion and Voters, are control records (a ControlRecordKey key, the
// message as value, no framing); package storage encodes them, and
// DecodeControl here reads them back.
package record

//go:generate go run ./internal/recordgen
