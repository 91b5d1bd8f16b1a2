// Package attach reads a real Apache Kafka KRaft cluster over the wire,
// read-only, into the same view.View the playground's screens, status and
// conditions use: the metadata quorum from DescribeQuorum, the brokers
// from DescribeCluster, topics and partitions from Metadata and
// DescribeTopicPartitions, high watermarks from ListOffsets. It polls;
// what changed between two polls becomes an event marked as inferred.
//
// What Kafka shows only through JMX (fetcher threads, a broker's
// lifecycle state, its last applied metadata offset, ISR shrink rates) is
// named in the view as unreachable, never made up. Actions that need a
// playground (kill, partition, clock) are refused with ErrReadOnly.
package attach
