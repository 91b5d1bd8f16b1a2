// Package dump prints the batches of a metadata log segment or snapshot as
// Kafka's kafka-dump-log --cluster-metadata-decoder does
// (tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java): a line
// per batch with its header fields, then a line per record, the record's
// payload as the record's JSON (package record's PayloadJSON) and a control
// record as Kafka's control messages print.
//
// Read turns raw bytes of whole batches (a segment or snapshot file,
// storage.Log.Read, quorum.Node.ReadLog) into a Dump: a Go value per batch
// and record that encoding/json prints as kraftlab's --json form, and that
// WriteText prints as Kafka's text. Nothing in the bytes stops a dump early
// but the end of the batches: a record that does not decode is a Record
// with Error set, printed as Kafka prints it ("Error at OFFSET, skipping.
// REASON"); bytes that do not form a batch end the dump and are counted, as
// Kafka's "Found N invalid bytes at the end of FILE".
package dump
