package quorum

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// observe reports what changed since the last look, fails the appends of
// a lost leadership and publishes the status.
func (in *instance) observe(now time.Time) {
	st := in.raft.Summary()
	prev := in.last
	changed := st.Role != prev.Role || st.Epoch != prev.Epoch || st.LeaderID != prev.LeaderID || st.VotedID != prev.VotedID ||
		in.sm.writable != in.pubWritable
	in.report(now, st)
	if len(in.commits) > 0 && (st.Role != raft.Leader || st.Epoch != in.commitEpoch) {
		in.failCommits(ErrNotLeader)
	}
	in.last = st
	in.publishStatus(now, st, changed)
}

// report turns what changed since the last report into events. settle
// reports before raft's messages leave, so that no other node can report
// news of a change (a BeginQuorumEpoch it received, a vote it cast) before
// this node reports the change itself: the playground's event log then
// reads in cause-and-effect order.
func (in *instance) report(now time.Time, st raft.Status) {
	prev := in.reported
	in.reported = st
	if st.Role != prev.Role || st.Epoch != prev.Epoch || st.LeaderID != prev.LeaderID {
		in.emitRoleChange(now, prev, st)
	}
	if st.Role == raft.Leader && st.HighWatermark >= 0 && (prev.Role != raft.Leader || prev.Epoch != st.Epoch || prev.HighWatermark < 0) {
		in.emit(now, EventHighWatermark, st.Epoch, "committed the first record of epoch %d: high watermark %d", st.Epoch, st.HighWatermark)
	}
	for _, note := range in.log.takeNotes() {
		switch note.kind {
		case noteTruncated:
			in.n.truncations.Add(1)
			in.emit(now, EventTruncation, st.Epoch, "truncated its log from offset %d to %d, where it agrees with leader %d; the %d records after it were never committed",
				note.from, note.to, st.LeaderID, note.from-note.to)
		case noteRestarted:
			in.n.snapshotsLoaded.Add(1)
			in.emit(now, EventSnapshotLoaded, st.Epoch, "fetched snapshot %v from leader %d and restarted its log at offset %d (it ended at %d)",
				st.LatestSnapshot, st.LeaderID, note.to, note.from)
		case noteStartAdvanced:
			in.emit(now, EventSnapshotTaken, st.Epoch, "moved its log start from %d to %d, the end of snapshot %v", note.from, note.to, st.LatestSnapshot)
		}
	}
	if id := in.sm.loaded; id != nil {
		in.sm.loaded = nil
		in.emit(now, EventSnapshotLoaded, st.Epoch, "loaded snapshot %v into its state: %d records committed before offset %d",
			*id, in.sm.tally.Records, id.EndOffset)
	}
}

func (in *instance) emitRoleChange(now time.Time, prev, st raft.Status) {
	in.emit(now, EventRoleChange, st.Epoch, "%s -> %s", describeRole(prev), describeRole(st))
	if st.Role == raft.Leader && (prev.Role != raft.Leader || prev.Epoch != st.Epoch) {
		in.emit(now, EventElection, st.Epoch, "elected leader of epoch %d, its log ending at offset %d", st.Epoch, st.LogEndOffset)
	}
}

func describeRole(s raft.Status) string {
	switch {
	case s.Role == raft.Follower && !s.Voter:
		return fmt.Sprintf("Observer of %d (epoch %d)", s.LeaderID, s.Epoch)
	case s.Role == raft.Follower:
		return fmt.Sprintf("Follower of %d (epoch %d)", s.LeaderID, s.Epoch)
	case s.Role == raft.Unattached && s.VotedID >= 0:
		return fmt.Sprintf("Unattached, voted for %d (epoch %d)", s.VotedID, s.Epoch)
	}
	return fmt.Sprintf("%v (epoch %d)", s.Role, s.Epoch)
}

func (in *instance) emit(now time.Time, kind EventKind, epoch int32, format string, args ...any) {
	if in.cfg.OnEvent == nil {
		return
	}
	in.cfg.OnEvent(Event{Time: now, Node: in.id, Kind: kind, Epoch: epoch, Message: fmt.Sprintf(format, args...)})
}

// emitRecovery reports what the start found on disk.
func (in *instance) emitRecovery() {
	st := in.last
	snap := "no snapshot"
	if st.HasSnapshot {
		snap = "snapshot " + st.LatestSnapshot.String()
	}
	in.emit(time.Now(), EventRecovery, st.Epoch, "opened %s: log [%d, %d), %s, recovery: %v; starts %s",
		LogDirName, st.LogStartOffset, st.LogEndOffset, snap, in.log.Recovery(), describeRole(st))
}

// noteInbound reports the quorum's announcements that reached this node.
func (in *instance) noteInbound(now time.Time, req kmsg.Request, resp kmsg.Response) {
	if errorCode(resp) != 0 {
		return
	}
	switch r := req.(type) {
	case *kmsg.BeginQuorumEpochRequest:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return
		}
		p := &r.Topics[0].Partitions[0]
		if p.LeaderEpoch > in.beginSeen {
			in.beginSeen = p.LeaderEpoch
			in.emit(now, EventBeginQuorumEpoch, p.LeaderEpoch, "BeginQuorumEpoch from node %d: it leads epoch %d", p.LeaderID, p.LeaderEpoch)
		}
	case *kmsg.EndQuorumEpochRequest:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return
		}
		p := &r.Topics[0].Partitions[0]
		if p.LeaderEpoch > in.endSeen {
			in.endSeen = p.LeaderEpoch
			in.emit(now, EventEndQuorumEpoch, p.LeaderEpoch, "EndQuorumEpoch from node %d: it resigned epoch %d, preferred successors %v",
				p.LeaderID, p.LeaderEpoch, successors(r))
		}
	}
}

// noteOutbound reports this node's resignation, once per epoch.
func (in *instance) noteOutbound(now time.Time, m raft.Message) {
	r, ok := m.Request.(*kmsg.EndQuorumEpochRequest)
	if !ok || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return
	}
	p := &r.Topics[0].Partitions[0]
	if p.LeaderEpoch > in.endSent {
		in.endSent = p.LeaderEpoch
		in.emit(now, EventEndQuorumEpoch, p.LeaderEpoch, "no longer leads epoch %d: EndQuorumEpoch to the other voters, preferred successors %v (most caught up first)",
			p.LeaderEpoch, successors(r))
	}
}

func successors(r *kmsg.EndQuorumEpochRequest) []int32 {
	p := &r.Topics[0].Partitions[0]
	if r.Version >= 1 {
		out := make([]int32, len(p.PreferredCandidates))
		for i, c := range p.PreferredCandidates {
			out[i] = c.CandidateID
		}
		return out
	}
	return p.PreferredSuccessors
}

// status builds the node's Status around a raft status.
func (in *instance) status(st raft.Status) Status {
	state := StateRunning
	if in.stopping {
		state = StateStopping
	}
	return Status{
		Status:          st,
		State:           state,
		Writable:        in.sm.writable,
		Tally:           in.sm.tally,
		Truncations:     in.n.truncations.Load(),
		SnapshotsLoaded: in.n.snapshotsLoaded.Load(),
		SnapshotsTaken:  in.n.snapshotsTaken.Load(),
		Recovery:        in.log.Recovery(),
		Starts:          in.starts,
	}
}

// publishStatus publishes the status now if it matters (force) or the
// last one is older than publishInterval; otherwise later, from wakeAt.
// st may lack Replicas (raft's Summary): they are taken at publish time.
func (in *instance) publishStatus(now time.Time, st raft.Status, force bool) {
	if !force && now.Sub(in.published) < publishInterval {
		in.unpublished = true
		return
	}
	// Replicas are built only here: a fresh slice per publish keeps every
	// published Status immutable.
	st.Replicas = in.raft.Replicas()
	s := in.status(st)
	in.n.status.Store(&s)
	in.pubWritable = s.Writable
	in.published, in.unpublished = now, false
}

// publish publishes the status from raft's current one.
func (in *instance) publish(now time.Time, force bool) {
	in.publishStatus(now, in.raft.Summary(), force)
}

// errorCode returns a quorum response's error: the top-level code, else
// its partition's.
func errorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.VoteResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.BeginQuorumEpochResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.EndQuorumEpochResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.DescribeQuorumResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.FetchSnapshotResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	}
	return 0
}
