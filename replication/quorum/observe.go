package quorum

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// observe reports what changed since the last look, fails the appends of
// a lost leadership and publishes the status.
func (in *instance) observe(now time.Time) {
	st := in.raft.Summary()
	prev := in.last
	changed := st.Role != prev.Role || st.Epoch != prev.Epoch || st.LeaderID != prev.LeaderID || st.VotedID != prev.VotedID ||
		in.sm.writable != in.pubWritable
	in.report(now)
	if len(in.commits) > 0 && (st.Role != raft.Leader || st.Epoch != in.commitEpoch) {
		in.failCommits(ErrNotLeader)
	}
	in.last = st
	in.publishStatus(now, st, changed)
}

// report hands the state machine's changes to the owner. settle calls
// it before raft's messages leave, so that no other node can report news
// of a change (a BeginQuorumEpoch it received, a vote it cast) before this
// node reports the change itself: the playground's event log then reads
// in cause-and-effect order.
func (in *instance) report(now time.Time) {
	evs := in.raft.TakeEvents()
	if len(evs) == 0 {
		return
	}
	st := in.raft.Summary()
	for _, ev := range evs {
		switch ev.Kind {
		case raft.EventTruncated:
			in.n.truncations.Add(1)
		case raft.EventSnapshotFetched:
			in.n.snapshotsLoaded.Add(1)
		case raft.EventSnapshotTaken:
			in.n.snapshotsTaken.Add(1)
		case raft.EventUnsafe:
			in.n.unsafe.Add(1)
			in.n.lastUnsafe.Store(&ev)
			in.n.log.Warn("ignored news that would break Raft's safety", "refused", ev.Refused, "kafka_stops", ev.KafkaStops)
		}
		in.emit(Event{Time: now, Kind: EventRaft, Raft: ev, Status: st})
	}
}

func (in *instance) emit(e Event) {
	if in.cfg.OnEvent == nil {
		return
	}
	e.Node = in.id
	e.AppliedOffset = in.sm.next
	in.cfg.OnEvent(e)
}

// emitRecovery reports what the start found on disk.
func (in *instance) emitRecovery() {
	in.emit(Event{Time: in.cfg.Clock.Now(), Kind: EventRecovery, Status: in.last, Recovery: in.log.Recovery()})
}

// status builds the node's Status around a raft status.
func (in *instance) status(st raft.Status) Status {
	state := StateRunning
	if in.stopping {
		state = StateStopping
	}
	s := Status{
		Status:          st,
		State:           state,
		Writable:        in.sm.writable,
		AppliedOffset:   in.sm.next,
		Truncations:     in.n.truncations.Load(),
		SnapshotsLoaded: in.n.snapshotsLoaded.Load(),
		SnapshotsTaken:  in.n.snapshotsTaken.Load(),
		Unsafe:          in.n.unsafe.Load(),
		LastUnsafe:      in.n.lastUnsafe.Load(),
		Recovery:        in.log.Recovery(),
		Starts:          in.starts,
	}
	if in.failErr != nil {
		// A leader handing over after a disk failure.
		s.Fault, s.Err = describe(in.failErr)
	}
	if in.snapErr != nil {
		_, s.SnapshotError = describe(in.snapErr)
	}
	return s
}

// publishStatus publishes the status now if it matters (force) or the
// last one is older than publishInterval; otherwise later, from wakeAt.
// st may lack Replicas (raft's Summary): they are taken at publish time.
func (in *instance) publishStatus(now time.Time, st raft.Status, force bool) {
	if !force && now.Sub(in.published) < publishInterval && !in.cfg.Clock.Paused() {
		in.unpublished = true
		return
	}
	// Replicas are built only here: a fresh slice per publish keeps every
	// published Status immutable.
	st.Replicas = in.raft.Replicas()
	s := in.status(st)
	in.n.status.Store(&s)
	in.publishMetrics()
	in.pubWritable = s.Writable
	in.published, in.unpublished = now, false
}

// publish publishes the status from raft's current one.
func (in *instance) publish(now time.Time, force bool) {
	in.publishStatus(now, in.raft.Summary(), force)
}
