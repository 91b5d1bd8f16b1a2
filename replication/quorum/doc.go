// Package quorum runs a member of the KRaft metadata quorum for real: it
// drives the deterministic state machine of package raft with the wall
// clock, over the Kafka protocol of package wire, with its log, snapshots
// and quorum-state file on disk (package storage). It is kraftlab's
// KafkaRaftClientDriver.
//
// # One goroutine per node
//
// A running Node owns one event loop goroutine, besides the goroutines of
// its wire.Server and wire.Clients. Everything that reaches the node is an
// item in the loop's mailbox, which never blocks its sender:
//
//   - a request from the node's listener, handed to raft.Node.Step with an
//     ID of the loop's choosing; the wire.Request waits in a table until
//     raft answers that ID, at once or later (a Fetch parked in the
//     leader's purgatory until records arrive or its max wait passes);
//   - the response to a request raft sent, or its failure: the loop sends
//     every request raft puts in its outbox with the wire.Client of the
//     destination, whose callback posts the outcome back. raft owns
//     timeouts and retry backoff; the client's context deadline
//     (controller.quorum.request.timeout.ms) is only the backstop that
//     turns a request lost on a faulty link into a failure;
//   - an Append, a snapshot, a resignation or a shutdown asked by the
//     node's owner.
//
// A timer set to raft's NextDeadline calls Tick. After each batch of items
// the loop sends raft's outbox, then, if raft.Node.NeedsFlush, flushes the
// log and calls Flushed: responses leave before the fsync, as Kafka's
// leader lets parked fetches return before it flushes, and a follower's
// next Fetch, which acknowledges what it wrote, leaves after it. Under
// FlushAlways the fsync runs on a goroutine of its own, one at a time,
// and its end comes back through the mailbox: the loop keeps serving
// Fetches and taking appends meanwhile, and the appends that arrive during
// one fsync are made durable by the next together (group commit). The
// leader's records count toward the high watermark only once flushed.
//
// The log (DiskLog) keeps its newest batches in memory as they were
// appended, so the listener's committed batches and a caught-up
// follower's Fetch are served without reading the file.
//
// Under push replication (raft.Config.Replication, the
// kraftlab.quorum.replication setting) the same loop carries the leader's
// AppendEntries and InstallSnapshot, many in flight to one peer on its
// pipelined connection, and every replica, observers included, serves
// them (Register); a follower's answer leaves once raft releases it after
// the flush, as its next Fetch would under pull.
//
// # Disk layout
//
// A node keeps Kafka's layout in its folder: <dir>/__cluster_metadata-0/
// holds the log segments, the leader-epoch checkpoint, the snapshots
// (<end offset>-<epoch>.checkpoint) and the quorum-state file.
//
// # Lifecycle
//
// Start opens the folder (recovering what a crash left, reported as an
// EventRecovery), listens and starts the loop. Stop is a graceful
// shutdown: a leader resigns with EndQuorumEpoch, the node keeps running
// until another leader is known or a deadline passes, then flushes and
// closes. Kill is a crash: sockets close at once, the loop stops, and the
// log loses what it had not flushed. A stopped or killed Node starts again
// from the same folder on the same address.
//
// A write or fsync that fails (a full disk: the log, a snapshot fetched,
// the quorum-state file, all written through Config.Disk) ends the
// incarnation as a crash, as Kafka's raft thread halts its process; its
// Status and EventFailed lead with the kind of trouble ("disk full: ...").
// A leader resigns first, with EndQuorumEpoch, and answers without writing
// until a successor is known or a fetch timeout passes. A snapshot the disk
// cannot hold fails alone (EventSnapshotFailed) and the node runs on. The
// node's server starts it again once its folder takes writes.
//
// # The state machine
//
// The node keeps no state of its own: each incarnation feeds a fresh
// Listener (Config.NewListener; on a kraftlab node the metadata loader)
// the committed batches, and snapshots are the records the listener gives
// for the offset it applied. Only the node's owners append (on a
// controller, the quorum controller, which also writes Kafka's idle
// NoOpRecords).
package quorum
