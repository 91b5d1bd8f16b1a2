// Package metadata is the root of kraftlab's metadata layer: what the active
// controller writes to __cluster_metadata and what every node builds from it.
//
//   - metadata/record: the metadata records (RegisterBrokerRecord,
//     PartitionChangeRecord, …) framed as Kafka's MetadataRecordSerde frames
//     them, and the control records the quorum writes.
//   - metadata/image: MetadataImage, the immutable state a node serves from,
//     and MetadataDelta, which replays records on top of an image and applies
//     them as the next image, sharing every unchanged part.
//
// The loader (a raft listener that feeds committed batches and snapshots to a
// delta) and the quorum controller come on top of these.
package metadata
