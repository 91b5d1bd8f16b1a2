package view

// ReplicationKey is the setting that says how the metadata quorum
// replicates: by pull (Kafka's KRaft: followers fetch) or by push
// (classic Raft: the leader sends AppendEntries).
const ReplicationKey = "kraftlab.quorum.replication"

// Push reports whether the playground's quorum replicates by push; a view
// without settings (an older playground's) replicates by pull.
func (v *View) Push() bool { return v.Settings[ReplicationKey] == "push" }
