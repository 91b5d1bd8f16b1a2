// Package group is a broker's group coordinator for Kafka's classic
// consumer group protocol (Kafka's group-coordinator module, the
// GroupCoordinatorShard with its GroupMetadataManager and
// OffsetMetadataManager, cut to classic groups): JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, ListGroups,
// DescribeGroups and DeleteGroups.
//
// Each group lives on one partition of the internal topic
// __consumer_offsets (kafkahash.GroupPartition); the broker that leads that partition
// coordinates the group. The coordinator writes its state as records in
// Kafka's formats (records.go) to the partition through the broker's
// produce path, with acks=all, so that the partition's followers
// replicate them; a broker that becomes leader of a partition loads its
// groups by reading it (shard.go), and one that stops leading drops them.
//
// The state machine of one group (Group) is pure: it reads no clock and
// writes nothing, so its tests drive time by hand; a Shard gives it the
// time, arms its timers and persists what it asks to.
package group
