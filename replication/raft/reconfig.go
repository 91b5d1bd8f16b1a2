package raft

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// Errors of AddVoter and RemoveVoter. The comment of each names the error
// code Kafka's AddRaftVoter and RemoveRaftVoter answer with.
var (
	// ErrStaticQuorum: the log finalized no kraft.version 1, so the voter
	// set cannot change (UNSUPPORTED_VERSION).
	ErrStaticQuorum = errors.New("the quorum is static (kraft.version 0)")
	// ErrLeaderNotReady: the leader has not committed an offset of its
	// epoch yet, so earlier voter changes may still be uncommitted
	// (REQUEST_TIMED_OUT).
	ErrLeaderNotReady = errors.New("the leader has not committed in its epoch yet")
	// ErrVoterChangePending: the latest VotersRecord is not committed; one
	// change at a time (REQUEST_TIMED_OUT).
	ErrVoterChangePending = errors.New("a voter change is not committed yet")
	// ErrDuplicateVoter: the id already votes (DUPLICATE_VOTER).
	ErrDuplicateVoter = errors.New("already a voter")
	// ErrVoterNotFound: no voter has that id and directory id
	// (VOTER_NOT_FOUND).
	ErrVoterNotFound = errors.New("not a voter")
	// ErrNotCaughtUp: the replica to add has not fetched up to the leader's
	// log end within the last fetch timeout (REQUEST_TIMED_OUT).
	ErrNotCaughtUp = errors.New("the replica is not caught up")
	// ErrUnsupportedKRaftVersion: the replica to add does not support the
	// finalized kraft.version (INVALID_REQUEST).
	ErrUnsupportedKRaftVersion = errors.New("the replica does not support the finalized kraft.version")
)

// BootstrapVoters formats an empty log for a dynamic quorum: it writes
// kraft.version 1 and the first voter set, as Kafka's
// `kafka-storage format --standalone` (one voter, this node) or
// `--initial-controllers` (every initial voter, the same on each) does.
//
// Kafka writes these two records in a bootstrap checkpoint, a snapshot
// with id (0, 0) next to the empty log. kraftlab writes them as the log's
// first batch instead, a control batch in epoch 0, which no leader ever
// writes in: it is then read, replicated, truncated and snapshotted as any
// other record, and nothing else needs to know of a bootstrap snapshot.
// Replicas formatted with the same voters hold the same batch; a replica
// formatted with none (joining later) gets it from the leader with the
// rest of the log. The records commit with the first leader's first
// commit, but like any VotersRecord they are in force from the start.
func BootstrapVoters(log Log, voters VoterSet, now time.Time) error {
	if log.LogEndOffset() != 0 || log.LogStartOffset() != 0 {
		return fmt.Errorf("raft: bootstrap voters: the log is not empty (offsets %d to %d)", log.LogStartOffset(), log.LogEndOffset())
	}
	if _, ok := log.LatestSnapshot(); ok {
		return errors.New("raft: bootstrap voters: the log has a snapshot")
	}
	if len(voters) == 0 {
		return errors.New("raft: bootstrap voters: no voters")
	}
	seen := map[int32]bool{}
	for _, v := range voters {
		if v.ID < 0 || seen[v.ID] {
			return fmt.Errorf("raft: bootstrap voters: voter id %d negative or listed twice", v.ID)
		}
		seen[v.ID] = true
	}
	recs := []storage.Record{storage.KRaftVersionRecord(int16(KRaftVersion1)), append(VoterSet(nil), voters...).sorted().record()}
	if _, _, err := log.AppendControl(recs, 0, now.UnixMilli()); err != nil {
		return fmt.Errorf("raft: bootstrap voters: %w", err)
	}
	if err := log.Flush(); err != nil {
		return fmt.Errorf("raft: bootstrap voters: %w", err)
	}
	return nil
}

// AddVoter makes the leader of epoch add v to the voter set, with Kafka's
// rules (AddVoterHandler): the log's kraft.version is 1, the leader has
// committed an offset of its epoch, no voter change is uncommitted, v's
// id is not a voter, v supports the kraft.version, and v has fetched up to
// the leader's log end within the last fetch timeout (as an observer),
// so that it does not hold back the high watermark once it counts. The
// leader then appends the new VotersRecord, in force at once; AddVoter
// returns its offset, and the change is done once the high watermark
// passes it (VoterChange). Kafka's leader first asks v's ApiVersions for
// its kraft.version range; here the caller does and fills in
// v.MinVersion and v.MaxVersion.
func (n *Node) AddVoter(now time.Time, epoch int32, v Voter) (int64, error) {
	if err := n.enter(now); err != nil {
		return 0, err
	}
	defer n.exit()
	off, err := n.addVoter(now, epoch, v)
	if err != nil {
		return 0, fmt.Errorf("raft node %d: add voter %d: %w", n.id, v.ID, err)
	}
	if err := n.poll(now); err != nil {
		return 0, fmt.Errorf("raft node %d: add voter %d: %w", n.id, v.ID, err)
	}
	return off, nil
}

func (n *Node) addVoter(now time.Time, epoch int32, v Voter) (int64, error) {
	if err := n.canChangeVoters(epoch); err != nil {
		return 0, err
	}
	set := n.history.last()
	if set.Contains(v.ID) {
		return 0, fmt.Errorf("%w: voters %v", ErrDuplicateVoter, set)
	}
	if kv := n.history.kraftVersion(); kv < v.MinVersion || kv > v.MaxVersion {
		return 0, fmt.Errorf("%w: it supports %d to %d, the log has %d", ErrUnsupportedKRaftVersion, v.MinVersion, v.MaxVersion, kv)
	}
	if err := n.lead.caughtUp(n, v, now); err != nil {
		return 0, err
	}
	return n.appendVoters(now, set.with(v))
}

// RemoveVoter makes the leader of epoch remove the voter (id, dir) from the
// voter set, with Kafka's rules (RemoveVoterHandler): kraft.version 1, a
// commit in the leader's epoch, no uncommitted voter change, and a voter
// with that id (and directory id, unless dir is zero). The leader appends
// the new VotersRecord, in force at once, and returns its offset. A
// leader that removed itself goes on leading, without counting itself,
// until the change commits, then resigns.
func (n *Node) RemoveVoter(now time.Time, epoch int32, id int32, dir DirectoryID) (int64, error) {
	if err := n.enter(now); err != nil {
		return 0, err
	}
	defer n.exit()
	off, err := n.removeVoter(now, epoch, id, dir)
	if err != nil {
		return 0, fmt.Errorf("raft node %d: remove voter %d: %w", n.id, id, err)
	}
	if err := n.poll(now); err != nil {
		return 0, fmt.Errorf("raft node %d: remove voter %d: %w", n.id, id, err)
	}
	return off, nil
}

func (n *Node) removeVoter(now time.Time, epoch int32, id int32, dir DirectoryID) (int64, error) {
	if err := n.canChangeVoters(epoch); err != nil {
		return 0, err
	}
	set := n.history.last()
	v, ok := set.Voter(id)
	if !ok || !v.matches(id, dir) {
		return 0, fmt.Errorf("%w: voters %v", ErrVoterNotFound, set)
	}
	if len(set) == 1 {
		return 0, fmt.Errorf("%w: it is the only voter", ErrVoterNotFound)
	}
	return n.appendVoters(now, set.without(id))
}

// canChangeVoters checks what AddVoter and RemoveVoter have in common.
func (n *Node) canChangeVoters(epoch int32) error {
	switch {
	case n.role != Leader || n.epoch != epoch || n.lead.resignRequested || n.shuttingDown:
		return fmt.Errorf("%w (node %d is %v in epoch %d)", ErrNotLeader, n.id, n.role, n.epoch)
	case n.cfg.Replication == Push:
		return fmt.Errorf("%w: voter changes need pull replication", ErrStaticQuorum)
	case n.history.kraftVersion() < KRaftVersion1 || n.history.lastOffset() < 0:
		return ErrStaticQuorum
	case n.lead.hwm < 0:
		return ErrLeaderNotReady
	case n.history.lastOffset() >= n.lead.hwm:
		return fmt.Errorf("%w: VotersRecord at %d, high watermark %d", ErrVoterChangePending, n.history.lastOffset(), n.lead.hwm)
	}
	return nil
}

// caughtUp checks that the replica to add fetches as an observer and has
// reached the leader's log end within the last fetch timeout. Kafka asks
// only for a caught-up time and a fetch within the last hour; the fetch
// timeout is the bound within which a voter is expected to keep up, so a
// new voter that meets it does not stall the high watermark.
func (ls *leaderState) caughtUp(n *Node, v Voter, now time.Time) error {
	otherDir := false
	for _, r := range ls.observers {
		if r.id != v.ID {
			continue
		}
		if !v.matches(r.id, r.dir) {
			// The same id from another folder: one the node had before
			// it lost its disk, say.
			otherDir = true
			continue
		}
		if r.lastCaughtUp.IsZero() || now.Sub(r.lastCaughtUp) > n.cfg.FetchTimeout || now.Sub(r.lastFetch) > n.cfg.FetchTimeout {
			return fmt.Errorf("%w: node %d fetched at %d (log end %d), last caught up %v ago", ErrNotCaughtUp,
				v.ID, r.endOffset, n.log.LogEndOffset(), now.Sub(r.lastCaughtUp))
		}
		return nil
	}
	if otherDir {
		return fmt.Errorf("%w: node %d fetches with another directory id", ErrNotCaughtUp, v.ID)
	}
	return fmt.Errorf("%w: node %d does not fetch from the leader", ErrNotCaughtUp, v.ID)
}

// appendVoters writes a VotersRecord for set as its own control batch,
// after the records already handed to Append, and puts it in force.
func (n *Node) appendVoters(now time.Time, set VoterSet) (int64, error) {
	ls := n.lead
	if len(ls.pending) > 0 {
		// Append returned offsets counting on the pending records coming
		// first: write them now.
		if err := ls.drain(n, now); err != nil {
			return 0, err
		}
	}
	base, last, err := n.log.AppendControl([]storage.Record{set.record()}, n.epoch, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("append voters record: %w", err)
	}
	n.leaderWrote(base, last, now)
	n.history.addSet(base, set)
	ls.voterChange = base
	n.logger.Info("voters record appended", "offset", base, "voters", set)
	n.votersMaybeChanged()
	ls.onAppend(n, now)
	return base, nil
}

// voterChangeCommitted ends the leader's voter change once the high
// watermark passed its record; a leader not in the committed voter set
// resigns, as Kafka's RemoveVoterHandler makes it.
func (ls *leaderState) voterChangeCommitted(n *Node) {
	if ls.voterChange >= 0 && ls.hwm > ls.voterChange {
		n.logger.Info("voter change committed", "offset", ls.voterChange, "voters", n.voterIDs)
		ls.voterChange = -1
	}
	// Whoever wrote it: a leader elected while being removed (participates)
	// resigns once its removal commits, too.
	if !n.voter && !ls.resignRequested && ls.hwm > n.history.lastOffset() {
		n.logger.Info("leader is not in the committed voter set: resigning", "epoch", n.epoch, "voters", n.voterIDs)
		ls.resignRequested = true
	}
}

// VoterChange reports the uncommitted voter change of the leader: the
// offset of the latest VotersRecord while the high watermark has not
// passed it. ok is false on a node that does not lead, and when the
// change is committed (Kafka's uncommitted-voter-change metric).
func (n *Node) VoterChange() (offset int64, ok bool) {
	if n.role != Leader {
		return 0, false
	}
	off := n.history.lastOffset()
	if off < 0 || off < n.lead.hwm {
		return 0, false
	}
	return off, true
}
