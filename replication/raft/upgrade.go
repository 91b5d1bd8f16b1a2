package raft

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// The kraft.version upgrade (Kafka 4.4's `kafka-features upgrade --feature
// kraft.version=1`): a static quorum becomes a dynamic one. Under
// kraft.version 0 the voter set lives in Config.Voters, ids only; each
// voter describes itself (directory id, listeners, kraft.version range)
// to every new leader with UpdateRaftVoter, and the leader keeps what it
// learns in memory (leaderState.learned, Kafka's volatile voters). The
// upgrade, on the leader only, checks that every voter supports the new
// version and is fully described, then appends one control batch with a
// KRaftVersionRecord and a VotersRecord of the described voters. Both are
// in force from their append, like any VotersRecord: from then on the
// node is dynamic (dynamic), its quorum state is written as data
// version 1, and AddVoter and RemoveVoter work once the batch commits.

// Errors of UpgradeKRaftVersion. The comment of each names the error code
// Kafka's controller answers UpdateFeatures with.
var (
	// ErrInvalidUpgrade: the version is a downgrade, not supported by
	// this code, or not by every voter (INVALID_UPDATE_VERSION).
	ErrInvalidUpgrade = errors.New("invalid kraft.version upgrade")
	// ErrVotersUnsupported: a voter's kraft.version range, as it told
	// this leader, leaves out the new version, or it told nothing yet
	// (INVALID_UPDATE_VERSION).
	ErrVotersUnsupported = fmt.Errorf("%w: not all of the voters support it", ErrInvalidUpgrade)
	// ErrVotersUndescribed: a voter has not told this leader its
	// directory id yet. Kafka's leader throws IllegalStateException,
	// which its controller answers with UNKNOWN_SERVER_ERROR.
	ErrVotersUndescribed = errors.New("directory id must be known for all of the voters")
)

// UpgradeKRaftVersion makes the leader of epoch upgrade the quorum's
// kraft.version to v, with Kafka's rules (LeaderState's
// maybeAppendUpgradedKRaftVersion): the same version is a no-op, a lower
// one an error; every voter must have described itself to this leader
// (UpdateRaftVoter) with a kraft.version range holding v and its
// directory id. With validateOnly it only checks. It returns the offset
// of the VotersRecord appended, -1 when nothing was; the upgrade is done
// once the high watermark passes it. Push replication, which changes no
// voters, refuses it with ErrStaticQuorum.
func (n *Node) UpgradeKRaftVersion(now time.Time, epoch int32, v KRaftVersion, validateOnly bool) (int64, error) {
	if err := n.enter(now); err != nil {
		return 0, err
	}
	defer n.exit()
	off, err := n.upgradeKRaftVersion(now, epoch, v, validateOnly)
	if err != nil {
		return 0, fmt.Errorf("raft node %d: upgrade kraft.version to %d: %w", n.id, v, err)
	}
	if err := n.poll(now); err != nil {
		return 0, fmt.Errorf("raft node %d: upgrade kraft.version to %d: %w", n.id, v, err)
	}
	return off, nil
}

func (n *Node) upgradeKRaftVersion(now time.Time, epoch int32, v KRaftVersion, validateOnly bool) (int64, error) {
	if n.role != Leader || n.epoch != epoch || n.lead.resignRequested || n.shuttingDown {
		return 0, fmt.Errorf("%w (node %d is %v in epoch %d)", ErrNotLeader, n.id, n.role, n.epoch)
	}
	kv := n.history.kraftVersion()
	switch {
	case v == kv:
		return -1, nil
	case v < kv:
		return 0, fmt.Errorf("%w: from %d to %d is a downgrade", ErrInvalidUpgrade, kv, v)
	case v > maxSupportedKRaftVersion:
		return 0, fmt.Errorf("%w: this node supports up to %d", ErrInvalidUpgrade, maxSupportedKRaftVersion)
	case n.cfg.Replication == Push:
		return 0, fmt.Errorf("%w: voter changes need pull replication", ErrStaticQuorum)
	}
	ls := n.lead
	// The leader's own entry may have changed since its epoch began (a
	// listener bound later, SetListeners).
	ls.learnSelf(n)
	set := ls.learned
	if !slices.Equal(set.IDs(), n.history.last().IDs()) {
		// Learned entries replace static ones by id: this cannot happen.
		return 0, fmt.Errorf("%w: learned voters %v differ from %v", ErrInvalidUpgrade, set, n.history.last())
	}
	for _, x := range set {
		if v < x.MinVersion || v > x.MaxVersion {
			return 0, fmt.Errorf("%w (voter %d supports %d to %d)", ErrVotersUnsupported, x.ID, x.MinVersion, x.MaxVersion)
		}
	}
	for _, x := range set {
		if x.DirectoryID.IsZero() {
			return 0, fmt.Errorf("%w: voter %d", ErrVotersUndescribed, x.ID)
		}
	}
	if validateOnly {
		return -1, nil
	}
	return n.appendUpgrade(now, v, set.clone())
}

// appendUpgrade writes the upgrade's control batch, KRaftVersionRecord
// then VotersRecord, after the records already handed to Append, and
// puts both in force.
func (n *Node) appendUpgrade(now time.Time, v KRaftVersion, set VoterSet) (int64, error) {
	ls := n.lead
	if len(ls.pending) > 0 {
		if err := ls.drain(n, now); err != nil {
			return 0, err
		}
	}
	recs := []storage.Record{storage.KRaftVersionRecord(int16(v)), set.record()}
	base, last, err := n.log.AppendControl(recs, n.epoch, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("append kraft.version upgrade: %w", err)
	}
	n.leaderWrote(base, last, now)
	n.history.addVersion(base, v)
	n.history.addSet(last, set)
	ls.voterChange, ls.learned = last, nil
	n.logger.Info("kraft.version upgraded", "version", v, "offset", base, "voters", set)
	n.votersMaybeChanged()
	ls.onAppend(n, now)
	return last, nil
}

// learn replaces the static entry of v.ID with what v says of itself
// (Kafka's updateVoterIgnoringDirectoryId).
func (ls *leaderState) learn(v Voter) {
	if !ls.learned.Contains(v.ID) {
		return
	}
	ls.learned = ls.learned.without(v.ID).with(v)
}

// learnSelf is the leader describing itself, when it can.
func (ls *leaderState) learnSelf(n *Node) {
	if local, ok := n.localVoter(); ok && ls.learned != nil {
		ls.learn(local)
	}
}
