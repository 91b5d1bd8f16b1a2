// Package group is a broker's group coordinator (Kafka's
// group-coordinator module, the GroupCoordinatorShard with its
// GroupMetadataManager and OffsetMetadataManager, cut to consumers):
// classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup; Group)
// and the consumer group protocol of KIP-848 (ConsumerGroupHeartbeat,
// ConsumerGroupDescribe; ConsumerGroup, whose server-side assignors
// compute a target assignment each group epoch and whose members reach
// it partitions revoked first), with OffsetCommit, OffsetFetch,
// ListGroups, DescribeGroups, DeleteGroups and OffsetDelete for both. A
// group id is one type at a time; an empty group changes type when a
// member of the other protocol joins.
//
// Each group lives on one partition of the internal topic
// __consumer_offsets (kafkahash.GroupPartition); the broker that leads that partition
// coordinates the group. The coordinator writes its state as records in
// Kafka's formats (records.go) to the partition through the broker's
// produce path, with acks=all, so that the partition's followers
// replicate them; a broker that becomes leader of a partition loads its
// groups by reading it (shard.go), and one that stops leading drops them.
//
// The state machine of one group (Group, ConsumerGroup) is pure: it
// reads no clock and writes nothing, so its tests drive time by hand; a
// Shard gives it the time, arms its timers and persists what it asks
// to.
package group
