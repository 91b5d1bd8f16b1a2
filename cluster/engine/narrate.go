package engine

import (
	"fmt"
	"github.com/dustin/go-humanize/english"
	"github.com/kraftlab/kraftlab/cluster"
	"time"

	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage"
)

// publish turns a node's event into a playground event. The stream stamps
// it as it publishes, not with the time the node's loop took for its
// batch, so that times rise with sequence numbers across nodes: a node
// that spent its batch in an fsync would otherwise publish an event dated
// before events of other nodes already on the stream.
func (e *engine) publish(ev quorum.Event) {
	if ev.Kind == quorum.EventRecovery {
		if n := e.lookup(ev.Node); n != nil {
			n.startLogEnd.Store(ev.Status.LogEndOffset)
		}
	}
	kind, msg, ok := narrate(ev)
	if !ok {
		return
	}
	epoch := ev.Status.Epoch
	if ev.Kind == quorum.EventRaft {
		epoch = ev.Raft.Epoch
		switch ev.Raft.Kind {
		case raft.EventVoteGranted:
			if !ev.Raft.PreVote {
				e.ballots.cast(ev.Raft.CandidateEpoch, ev.Node, ev.Raft.Candidate)
			}
		case raft.EventElectionLost:
			msg += e.ballots.story(ev.Raft, ev.Node, e.cfg.ControllerIDs())
		}
	}
	e.events.Publish(cluster.Event{Kind: kind, Node: ev.Node, Epoch: epoch, Message: msg})
}

// narrate puts a node's event into the event log's words: the one place
// where the engine's changes become sentences. ok is false for changes the
// log leaves out (a follower learning the high watermark).
func narrate(ev quorum.Event) (kind cluster.EventKind, msg string, ok bool) {
	switch ev.Kind {
	case quorum.EventRecovery:
		st := ev.Status
		snap := "no snapshot"
		if st.HasSnapshot {
			snap = "snapshot " + st.LatestSnapshot.String()
		}
		return cluster.EventRecovery, fmt.Sprintf("opened %s: log [%d, %d), %s, recovery: %v; starts %s",
			quorum.LogDirName, st.LogStartOffset, st.LogEndOffset, snap, ev.Recovery, quorumPlace(st.Role, st.Epoch, st.LeaderID, st.VotedID, st.Voter)), true
	case quorum.EventFailed:
		msg := "stopped on an error: " + storage.Describe(ev.Err)
		if storage.FaultOf(ev.Err) != storage.NoFault {
			msg += "; it starts again by itself once its folder takes writes"
		}
		return cluster.EventNodeFailed, msg, true
	case quorum.EventSnapshotFailed:
		return cluster.EventSnapshotFailed, fmt.Sprintf("could not write a snapshot: %s; it runs on from its log and tries again when the snapshot policy next says so", storage.Describe(ev.Err)), true
	}
	r := ev.Raft
	switch r.Kind {
	case raft.EventRoleChanged:
		voter := ev.Status.Voter
		return cluster.EventRoleChange, fmt.Sprintf("%s -> %s",
			quorumPlace(r.From, r.FromEpoch, r.FromLeader, r.FromVoted, voter), quorumPlace(r.To, r.Epoch, r.Leader, r.Voted, voter)), true
	case raft.EventElectionWon:
		return cluster.EventElection, fmt.Sprintf("elected leader of epoch %d, its log ending at offset %d", r.Epoch, r.LogEndOffset), true
	case raft.EventVoteGranted:
		if r.PreVote {
			// The request carries the candidate's epoch; it asks about the next.
			return cluster.EventVote, fmt.Sprintf("granted node %d a pre-vote for epoch %d (node %d is in epoch %d): only a promise, no vote recorded",
				r.Candidate, r.CandidateEpoch+1, r.Candidate, r.CandidateEpoch), true
		}
		return cluster.EventVote, fmt.Sprintf("voted for node %d in epoch %d", r.Candidate, r.CandidateEpoch), true
	case raft.EventBeginQuorumEpochReceived:
		return cluster.EventBeginQuorumEpoch, fmt.Sprintf("BeginQuorumEpoch from node %d: it leads epoch %d", r.Leader, r.Epoch), true
	case raft.EventEndQuorumEpochSent:
		return cluster.EventEndQuorumEpoch, fmt.Sprintf("no longer leads epoch %d: EndQuorumEpoch to the other voters, preferred successors %v (most caught up first)", r.Epoch, r.Successors), true
	case raft.EventEndQuorumEpochReceived:
		return cluster.EventEndQuorumEpoch, fmt.Sprintf("EndQuorumEpoch from node %d: it resigned epoch %d, preferred successors %v; the earlier in that list, the sooner this node's fetch timeout ends", r.Leader, r.Epoch, r.Successors), true
	case raft.EventTruncated:
		return cluster.EventTruncation, fmt.Sprintf("truncated its log from offset %d to %d, where it agrees with leader %d; the %d records after it were never committed",
			r.FromOffset, r.ToOffset, r.Leader, r.FromOffset-r.ToOffset), true
	case raft.EventSnapshotFetched:
		return cluster.EventSnapshotLoaded, fmt.Sprintf("fetched snapshot %v from leader %d and restarted its log at offset %d", r.Snapshot, r.Leader, r.Snapshot.EndOffset), true
	case raft.EventSnapshotLoaded:
		return cluster.EventSnapshotLoaded, fmt.Sprintf("handed snapshot %v to its metadata loader: the log before offset %d", r.Snapshot, r.Snapshot.EndOffset), true
	case raft.EventSnapshotTaken:
		return cluster.EventSnapshotTaken, fmt.Sprintf("took snapshot %v of its metadata image: the log before offset %d", r.Snapshot, r.Snapshot.EndOffset), true
	case raft.EventLogStartAdvanced:
		return cluster.EventSnapshotTaken, fmt.Sprintf("moved its log start from %d to %d, the end of its latest snapshot", r.FromOffset, r.ToOffset), true
	case raft.EventHighWatermarkKnown:
		if ev.Status.Role != raft.Leader || ev.Status.Epoch != r.Epoch {
			return "", "", false
		}
		return cluster.EventHighWatermark, fmt.Sprintf("committed the first record of epoch %d: high watermark %d", r.Epoch, r.HighWatermark), true
	case raft.EventElectionLost:
		if r.PreVote {
			return cluster.EventElection, fmt.Sprintf("its pre-vote for epoch %d found no majority (%d of %d voters needed)", r.Epoch+1, r.Majority, r.Voters), true
		}
		return cluster.EventElection, fmt.Sprintf("lost the election of epoch %d: no majority (%d of %d voters needed)", r.Epoch, r.Majority, r.Voters), true
	case raft.EventUnsafe:
		msg := "refused " + r.Refused
		if r.KafkaStops {
			msg += "; Kafka's raft client would stop with a fatal error here, kraftlab ignores the news and goes on"
		}
		return cluster.EventUnsafe, msg, true
	}
	return "", "", false
}

// publishLoader turns a node's loader event into a playground event.
func (e *engine) publishLoader(ev loader.Event) {
	if ev.Kind == loader.EventReplayed && !ev.HasSnapshot {
		if n := e.lookup(ev.Node); n == nil || n.startLogEnd.Load() == 0 {
			// A node that started with an empty log replays nothing: its
			// first records are live ones.
			return
		}
	}
	kind, msg, ok := narrateLoader(ev)
	if !ok {
		return
	}
	e.events.Publish(cluster.Event{Kind: kind, Node: ev.Node, Epoch: ev.Snapshot.Epoch, Message: msg})
}

// narrateLoader puts a loader's event into the event log's words. A loaded
// snapshot is told once the loader replayed the log after it, as Kafka
// logs its catching up at startup.
func narrateLoader(ev loader.Event) (kind cluster.EventKind, msg string, ok bool) {
	switch ev.Kind {
	case loader.EventReplayed:
		if ev.HasSnapshot {
			return cluster.EventSnapshotLoaded, fmt.Sprintf("loaded snapshot %v (%d records) into its metadata image, then replayed %d records up to offset %d",
				ev.Snapshot, ev.SnapshotRecords, ev.Records, ev.Offset), true
		}
		if ev.Records == 0 {
			return "", "", false // a fresh log: only the LeaderChange
		}
		return cluster.EventRecovery, fmt.Sprintf("replayed %d metadata records from its log into its image, up to offset %d", ev.Records, ev.Offset), true
	case loader.EventLoadError:
		return cluster.EventMetadataError, fmt.Sprintf("its metadata loader stopped at the %s at offset %d: %v; the image stays at the batch before it", ev.RecordType, ev.Offset, ev.Err), true
	case loader.EventApplyError:
		return cluster.EventMetadataError, fmt.Sprintf("a part failed on its metadata image: %v", ev.Err), true
	}
	return "", "", false
}

// describeRole spells a node's place in the quorum, as the event log and
// the role-change events show it.
func quorumPlace(role raft.Role, epoch, leader, voted int32, voter bool) string {
	switch {
	case role == raft.Follower && !voter:
		return fmt.Sprintf("Observer of %d (epoch %d)", leader, epoch)
	case role == raft.Follower:
		return fmt.Sprintf("Follower of %d (epoch %d)", leader, epoch)
	case (role == raft.Unattached || role == raft.Prospective) && voted >= 0:
		return fmt.Sprintf("%v, voted for %d (epoch %d)", role, voted, epoch)
	}
	return fmt.Sprintf("%v (epoch %d)", role, epoch)
}

// publishRestart tells the stream that node id started again by itself
// after a disk fault.
func (e *engine) publishRestart(id int32) func(server.RestartStatus) {
	return func(r server.RestartStatus) {
		e.events.Publish(cluster.Event{Kind: cluster.EventNodeRestarted, Node: id, Message: narrateRestart(r, e.clock.Since(r.Since))})
	}
}

// narrateRestart says a node started again after being down for down, in
// cluster time.
func narrateRestart(r server.RestartStatus, down time.Duration) string {
	msg := fmt.Sprintf("started again by itself %s after its disk fault: its folder takes writes again", roundDuration(down))
	if r.Attempts > 0 {
		msg += fmt.Sprintf(" (%s refused before: %s)", english.PluralWord(r.Attempts, "probe", ""), r.LastError)
	}
	return msg
}
