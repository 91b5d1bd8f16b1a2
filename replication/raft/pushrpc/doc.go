// Package pushrpc holds the messages of push replication, the classic Raft
// that package raft runs when its Config.Replication is raft.Push: the
// leader sends AppendEntries (records, and empty as heartbeats) and
// InstallSnapshot, and an observer asks to be pushed to with
// ObserveQuorum. Kafka has no such APIs, so they get private API keys,
// far above Kafka's (which end below 100), and are framed as Kafka frames
// its own: a request header v2 and a flexible body (compact strings and
// bytes, tagged fields), version 0. Their types satisfy kmsg.Request and
// kmsg.Response, so the same Message, wire layer and simulation carry them
// beside Kafka's Vote and EndQuorumEpoch, which push elections reuse.
//
// Decoding allocates no more than the frame holds: byte fields alias the
// frame, strings copy at most its length, and no count read from the
// frame sizes an allocation.
package pushrpc
