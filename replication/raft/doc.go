// Package raft is kraftlab's KRaft quorum: Apache Kafka's pull-based Raft
// (KafkaRaftClient: KIP-595, KIP-630 snapshots, KIP-996 pre-vote,
// check-quorum) for the single-partition __cluster_metadata log, written as a
// deterministic state machine. A Node starts no goroutines, reads no clock
// and opens no socket: it takes messages and the current time and leaves
// messages to send. Its messages are the kmsg types of Kafka's protocol, so
// the same values go on the wire. Config.Replication can make the same
// node replicate as classic push Raft instead (see Push replication).
// raftsim runs it, in either mode, under a seeded simulation.
//
// # Driving a node
//
// A driver owns each Node and calls it from one goroutine:
//
//	n, err := raft.New(cfg, log, store, listener, rng, now)
//	for {
//		// Wait for the first of: an inbound message, n.NextDeadline().
//		err = n.Step(now, msg) // or n.Tick(now) when the deadline passed
//		send(n.Outbox())       // requests carry IDs the node chose;
//		                       // deliver their responses (or Err) with that ID
//		if n.NeedsFlush() {
//			log.Flush()        // may overlap sending the outbox
//			n.Flushed(now)
//			send(n.Outbox())
//		}
//	}
//
// Inbound requests get a driver-chosen ID that the node's answer repeats;
// a parked Fetch is answered later, on an append or when its MaxWaitMs
// ends. The node tracks request timeouts (controller.quorum.request.timeout.ms)
// and retry backoff (controller.quorum.retry.backoff.ms) itself, like
// Kafka's RequestManager: a lost message simply times out, and a response
// to a request no longer in flight is ignored. Append, CreateSnapshot,
// Shutdown and Resign are the state machine owner's entry points; Status and
// DescribeQuorum (a request like the others) show the node's state.
//
// An entry point returns an error when the node meets what it cannot do
// safely: a Log or QuorumStateStore failure (the transition that needed the
// write does not happen; the driver should stop the node, as Kafka does; a
// follower's append of fetched batches counts as one when the disk failed,
// storage.FaultOf, and as the leader's bad batches otherwise), or
// news that would break Raft's safety, such as a second leader in an epoch
// or a truncation below the high watermark (ignored, reported as
// EventUnsafe; the driver logs it).
//
// # States
//
//	Unattached --(election timeout)--> Prospective --(pre-vote majority)--> Candidate
//	    ^                                |     ^                             |     |
//	    +----(pre-vote lost, no leader)--+     +---(election timeout)--------+     |
//	                                     |                                  (vote majority)
//	Follower <--(pre-vote lost, leader)--+                                        |
//	    |                                                                          v
//	    +--(fetch timeout)--> Prospective                                       Leader
//	                                                                               |
//	Unattached(epoch+1) <--(election timeout)-- Resigned <--(shutdown, Resign, check-quorum)
//
//	any state --(leader of this or a higher epoch named)--> Follower
//	any state --(higher epoch, leader unknown)-----------> Unattached
//
// Observers (a node not in the voter set) are only ever Unattached,
// fetching from any voter to find the leader, or Follower; and Resigned,
// for a leader that removed itself. A node being removed campaigns as a
// voter does (see Dynamic voters).
//
// # Events
//
// Beside the outbox the node queues Events, typed data for each change it
// makes (a role change, a vote granted, a truncation, news refused as
// unsafe...), in the order it makes them and before the messages that
// reveal them; the driver drains them with TakeEvents and words them. A
// steady stream of commits queues none.
//
// # What is persisted, when
//
// The ElectionState (epoch, leader, vote) is written to the
// QuorumStateStore before a transition that changes it takes effect: a vote
// before the Vote response goes out, a new epoch before any message of it,
// leadership (votedId -1, as Kafka's leader writes it) before the
// LeaderChange record. Prospective and Resigned are
// memory-only, as in Kafka. A node that was leader restarts Resigned in its
// epoch (no second vote, no reuse of offsets whose records were lost); one
// whose log has a later epoch than its quorum state starts Unattached there.
//
// # Flush ordering
//
// A follower appends fetched batches, and the driver flushes; the node does
// not send its next Fetch, which acknowledges the records, until Flushed
// (under push, the answer that acknowledges them waits in the node).
// A leader appends (after controller.quorum.append.linger.ms of batching),
// completes parked fetches at once since its log end moved, and counts its
// own records toward the high watermark only after Flushed. Network I/O of
// the outbox thus overlaps the fsync.
//
// # Kafka behaviours covered
//
// kraftlab models Kafka 4.4 (the 4.2+ behaviour of KafkaRaftClient).
// Pre-vote (a follower that has fetched from its leader grants none, even
// after an EndQuorumEpoch, which only shortens its fetch timer by its place
// among the successors; a resigned leader grants it, so a handover stays
// fast; a prospective node that grants a vote stays prospective), vote
// rules, no candidate backoff (a candidate waits out its election timeout,
// then is prospective again), a resigned leader moving to the next epoch
// when its election timer expires, BeginQuorumEpoch resent every fetch
// timeout / 2 to voters that stopped fetching, the LeaderChange record
// opening each epoch, Fetch validation (valid, DivergingEpoch with
// truncation never below the high watermark, SnapshotId then FetchSnapshot
// in chunks), the errors that name the current leader
// (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH),
// INCONSISTENT_CLUSTER_ID, INVALID_REQUEST, the long-poll fetch purgatory
// (completed by appends and by any move of the high watermark, and skipped
// for a fetcher whose Fetch v18 high watermark is behind, KIP-1166), the high
// watermark rule (a majority of voters, only past the epoch start, never
// back; followers take min(log end, leader's); none on a resigned leader),
// check-quorum (1.5 fetch timeouts, credit only from valid fetches and
// FetchSnapshot, skipped for one voter), followers that fetch from another
// voter while their leader fails, listener semantics (committed data only, a
// leader learns of its own leadership once caught up and never loads a
// snapshot), DescribeQuorum (a bare NOT_LEADER_OR_FOLLOWER off the leader).
//
// # Push replication
//
// With Config.Replication set to Push the node runs classic Raft's
// replication (the Raft paper; etcd/raft's design) on the same log,
// quorum-state store, snapshots, listener, driver contract and elections
// (pre-vote, check-quorum, LeaderChange, EndQuorumEpoch): only how
// records travel differs. The RPCs are package pushrpc's, under private
// API keys.
//
//   - The leader keeps a progress per replica (etcd's Progress): probing,
//     one AppendEntries at a time, until the replica's log is found to
//     match; then replicating, streaming records from the next offset
//     with up to MaxInflight requests ahead of the answers; or
//     snapshotting, pushing its snapshot in InstallSnapshot chunks when
//     the replica's next record is gone from the log. It builds its
//     requests when the driver takes the outbox: one AppendEntries per
//     replica carries all it wrote since (up to AppendMaxBytes, which a
//     controller's listener takes as one request frame), and the
//     high watermark, as etcd sends one MsgApp per follower per Ready.
//     Past the linger it writes appends once a follower voter has no
//     records in flight (its answer prompts the write) or drainDeferMax
//     passed, as a pull leader gathers while no Fetch waits, so under
//     load batches grow instead of requests. It sends an empty
//     AppendEntries to a replica that heard nothing for
//     HeartbeatInterval, or when the high watermark moved and no records
//     carry it. A request unanswered within the request timeout was lost:
//     the leader probes again from the last match.
//   - A replica accepts a push if its log holds the leader's record before
//     the base offset, with that epoch; it keeps records it holds, cuts a
//     conflicting suffix (never below its high watermark) and appends the
//     rest, and answers once they are flushed (the answer waits in the
//     node until Flushed). It refuses a push it cannot match with a hint
//     (etcd's findConflictByTerm), so probing takes a round trip per epoch.
//   - The leader commits what a majority of voters acknowledged past its
//     epoch's start, as a pull leader does, and sends the high watermark
//     in every push; a replica takes it up to what matches.
//   - Pushes announce the leader, so no BeginQuorumEpoch is sent; a
//     follower whose leader's pushes stop for a fetch timeout starts a
//     pre-vote, and goes back to following if a push arrives meanwhile.
//     Check-quorum counts answers instead of fetches.
//   - Observers are learners the leader pushes to without counting them;
//     since the leader knows only its voters, an observer asks with
//     ObserveQuorum, and the leader forgets one that stops answering for
//     five minutes, as it forgets one that stops fetching.
//
// A push node answers Fetch, FetchSnapshot and BeginQuorumEpoch, and a
// pull node push's RPCs, with INVALID_REQUEST: a quorum runs one mode.
//
// # Dynamic voters
//
// A static quorum (kraft.version 0) has the voters of Config.Voters
// (controller.quorum.voters) for ever; a Vote, BeginQuorumEpoch or
// EndQuorumEpoch from outside them is refused with INVALID_REQUEST. A
// dynamic quorum (kraft.version 1, KIP-853) keeps its voter set in the
// log, as Kafka's KRaftControlRecordStateMachine does:
//
//   - BootstrapVoters formats a log with KRaftVersionRecord and a first
//     VotersRecord (one voter: Kafka's --standalone; several, the same on
//     each: --initial-controllers). A node formatted with none leaves
//     Config.Voters empty and finds the leader through Config.Bootstrap.
//   - The latest VotersRecord in the log, or in the snapshot the log
//     starts from, is the voter set in force on that node, from the moment
//     it is appended, committed or not; a truncation that cuts it brings
//     back the one before. Elections, the high watermark, check-quorum and
//     whether the node itself votes all follow it. Snapshots hold the
//     kraft.version and the voter set at their end.
//   - The leader changes the set one voter at a time with AddVoter and
//     RemoveVoter, under Kafka's rules: only once it has committed in its
//     epoch, only while no VotersRecord is uncommitted, a new voter only
//     once it has fetched up to the leader's end within the fetch timeout.
//     VoterChange shows the change until it commits. A leader that removed
//     itself leads, without counting itself, until the change commits,
//     then resigns and goes on as an observer. One that stopped first, its
//     removal still uncommitted, campaigns for the new set's votes when it
//     comes back, so that it can commit the change (Kafka lets no
//     non-voter campaign, and deadlocks there).
//   - Each voter keeps its own entry right (update.go): a follower whose
//     entry differs from what it is (Config.Listeners, its directory id,
//     the kraft.version range it supports) sends UpdateRaftVoter to the
//     leader once per fetch timeout until it agrees, and a leader writes
//     its own. The leader checks the request as Kafka's
//     UpdateVoterHandler does, with its error codes, appends the updated
//     VotersRecord under the same one-change-at-a-time rule, and answers
//     without waiting for the commit. A driver that learns its listener
//     only once bound tells the node with SetListeners.
//   - Vote, BeginQuorumEpoch and EndQuorumEpoch are taken from any node,
//     as in Kafka, since voter sets differ between replicas while a change
//     spreads. A Vote or BeginQuorumEpoch names the voter it is for by id
//     and directory id; a node of that id with another directory (one
//     that lost its disk) answers INVALID_VOTER_KEY and does not vote;
//     EndQuorumEpoch names its preferred candidates the same way.
//   - A replica looking for the leader asks its bootstrap servers
//     (Config.Bootstrap) when it has them, never the voters its log names,
//     as Kafka's RequestManager does.
//
// AddRaftVoter and RemoveRaftVoter belong to the server layer, which
// calls AddVoter and RemoveVoter; UpdateRaftVoter is raft's own RPC,
// sent and answered by the node.
//
// A static quorum becomes a dynamic one with UpgradeKRaftVersion
// (upgrade.go; Kafka's `kafka-features upgrade --feature
// kraft.version=1`, which the server layer routes here): each voter
// describes itself to every new leader once with UpdateRaftVoter, the
// leader keeps those entries in memory, and once every voter supports
// kraft.version 1 and named its directory id, it appends
// KRaftVersionRecord and a VotersRecord of them in one control batch.
//
// # Left out and different
//
// docs/design.md ("Differences from Kafka") has the full table.
// The directory id of the vote a replica remembers (Vote,
// BeginQuorumEpoch and EndQuorumEpoch carry directory ids, voterkey.go);
// voter changes and the kraft.version upgrade under push replication. A
// leader serves a
// VotersRecord only once it flushed it (Kafka's leader flushes everything
// before serving it). Endpoints in messages (the network layer fills in
// LeaderEndpoints/NodeEndpoints), unattached voters fetching from bootstrap
// servers (KAFKA-17030), fetch sessions and compression. News that would
// break safety (a second leader in an epoch, a truncation below the high
// watermark) stops Kafka's raft thread; here it is ignored, reported as
// EventUnsafe and returned as ErrUnsafe, and the node goes on. Epochs that
// cannot be incremented (2^31-1) are refused from the wire and from disk.
// Kafka keeps log behind a snapshot until retention removes it; here
// creating a snapshot moves the log start to it at once, so catching up
// through snapshots is easy to watch. A response that carries
// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH without news backs off
// (retry.backoff.ms) instead of retrying at once, and so does one with
// UNKNOWN_LEADER_EPOCH.
package raft
