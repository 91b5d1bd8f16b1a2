// Package image holds the metadata state a KRaft node builds from the
// metadata log, shaped as Kafka's org.apache.kafka.image.
//
// A MetadataImage is immutable and safe to share between goroutines: its
// provenance (the offset, epoch and log time of the last record it holds),
// the finalized features (FeaturesImage), the registered brokers
// (ClusterImage), the topics and their partitions (TopicsImage) and the
// dynamic configs (ConfigurationsImage).
//
// A MetadataDelta starts from an image, replays records one at a time
// (Replay refuses a record that contradicts what it has, with an error that
// names the record and the reason) and applies them (Apply) as the next
// image. The next image shares every unchanged part with the one before:
// the sub-images a delta did not touch are the same pointers, and topics and
// partitions live in persistent hash tries (internal/pmap), so a
// PartitionChangeRecord costs a handful of trie nodes, not a copy of the
// image. Kafka shares at the same places except inside a topic, whose
// partition map it copies on every change; kraftlab shares there too, so
// that a topic with a million partitions costs no more to change than a
// small one.
//
// Records writes an image back as the records of a metadata snapshot;
// replaying them into a delta of the empty image gives the same image
// (NewSnapshotDelta replays a snapshot on top of any image: what the
// snapshot does not name is deleted).
package image
