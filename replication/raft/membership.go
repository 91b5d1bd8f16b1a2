package raft

import (
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// The node's voter set follows its log (Kafka's KRaftControlRecordStateMachine):
// n.history holds every VotersRecord and KRaftVersionRecord of the snapshot
// the log starts from and of the log itself, and the latest VotersRecord is
// the voter set in force from the moment it is appended, committed or not,
// as in Kafka. Whatever changes the log tells the history: the leader's
// own appends (appendVoters), a follower's fetched batches
// (votersAppended), a truncation (votersTruncated), a snapshot installed
// or taken (votersFromSnapshot, truncateOld). A quorum with no
// VotersRecord (kraft.version 0) keeps its static Config.Voters forever,
// and none of this changes what such a quorum does.

// loadVoterHistory rebuilds the history from the snapshot the log starts
// from and the whole log, at start.
func (n *Node) loadVoterHistory() error {
	if err := n.votersFromSnapshot(); err != nil {
		return err
	}
	for off := n.log.LogStartOffset(); off < n.log.LogEndOffset(); {
		data, err := n.log.Read(off, int(n.cfg.FetchMaxBytes))
		if err == nil {
			// Only control batches are decoded; the others are skipped by
			// their headers.
			err = n.history.scan(data, -1)
		}
		if err != nil {
			return fmt.Errorf("raft: read the log at %d for voter records: %w", off, err)
		}
		next := off
		for pos := 0; pos < len(data); {
			_, last, _, size, err := storage.PeekBatch(data[pos:])
			if err != nil {
				break
			}
			next, pos = last+1, pos+size
		}
		if next == off {
			break
		}
		off = next
	}
	n.setVoters()
	return nil
}

// votersFromSnapshot resets the history to what the snapshot the log starts
// from holds (its control records are in force at its last offset).
func (n *Node) votersFromSnapshot() error {
	n.history.clear()
	s, ok := n.snapshotAtStart()
	if !ok || s.EndOffset == 0 {
		return nil
	}
	data, err := n.readSnapshotBytes(s)
	if err != nil {
		return err
	}
	if err := n.history.scan(data, s.EndOffset-1); err != nil {
		return fmt.Errorf("raft: snapshot %v: %w", s, err)
	}
	return nil
}

// votersAppended reads the control records of batches just appended.
func (n *Node) votersAppended(data []byte) error {
	before := n.history.lastOffset()
	if err := n.history.scan(data, -1); err != nil {
		// The batches passed their CRC and went into the log: a record
		// the node cannot read is one it cannot follow, and so the log's.
		return fmt.Errorf("appended batches: %w", err)
	}
	if n.history.lastOffset() != before {
		n.votersMaybeChanged()
	}
	return nil
}

// votersTruncated drops the records of the log cut at end: the voter set
// in force goes back with the log.
func (n *Node) votersTruncated(end int64) {
	before := n.history.lastOffset()
	n.history.truncateNew(end)
	if n.history.lastOffset() != before {
		n.votersMaybeChanged()
	}
}

// votersReloaded re-reads the history after the log restarted at a snapshot.
func (n *Node) votersReloaded() error {
	before := n.history.last()
	if err := n.votersFromSnapshot(); err != nil {
		return err
	}
	if !n.history.last().Equal(before) {
		n.votersMaybeChanged()
	}
	return nil
}

// setVoters caches the voter set in force: its ids and whether this node
// is one of them (by id and, when both are known, directory id).
func (n *Node) setVoters() {
	s := n.history.last()
	n.voterIDs = s.IDs()
	v, ok := s.Voter(n.id)
	n.voter = ok && v.matches(n.id, n.cfg.DirectoryID)
}

// votersMaybeChanged applies a new voter set to the node's role.
func (n *Node) votersMaybeChanged() {
	old, wasVoter, was := n.voterIDs, n.voter, n.participates()
	n.setVoters()
	if slices.Equal(old, n.voterIDs) && wasVoter == n.voter {
		return
	}
	now := n.participates()
	n.logger.Info("voter set changed", "voters", n.voterIDs, "voter", n.voter, "offset", n.history.lastOffset())
	if len(old) > 0 && !StaticVoters(old).OverlappingMajority(n.history.last()) {
		// One change at a time never does this; a log written otherwise
		// (by hand, or a static set replaced) may.
		n.logger.Warn("the new voter set shares no majority with the old one", "old", old, "new", n.voterIDs)
	}
	if n.role == Leader {
		n.lead.updateVoters(n)
	}
	switch {
	case now && !was && n.role == Unattached && n.electionDeadline.IsZero():
		// An observer that became a voter takes part in elections.
		n.electionDeadline = n.now.Add(n.randomElectionTimeout())
	case !now && was && (n.role == Prospective || n.role == Candidate):
		// No longer a voter: stop asking for votes; its vote, if any,
		// stays recorded for the epoch.
		n.setRole(Unattached)
		n.electionDeadline = time.Time{}
		n.reportRole()
	}
}

// votesAs reports whether the replica (id, dir) is the voter with id in
// the voter set in force, or no voter has id: a replica with another
// directory id than the one its voter entry names is a new disk under an
// old id, an observer until it is added again.
func (n *Node) votesAs(id int32, dir DirectoryID) bool {
	v, ok := n.history.last().Voter(id)
	return !ok || v.matches(id, dir)
}

// isVoter reports whether id is in the voter set in force.
func (n *Node) isVoter(id int32) bool { return slices.Contains(n.voterIDs, id) }

// dynamic reports whether the voter set may change: the log finalized
// kraft.version 1, or no static voters are configured.
func (n *Node) dynamic() bool {
	return n.history.kraftVersion() >= KRaftVersion1 || len(n.cfg.Voters) == 0
}

// fetchTargets are the nodes a replica looking for the leader asks: the
// voters its log names, and in a dynamic quorum its bootstrap servers
// too. Kafka's RequestManager asks only the bootstrap servers when there
// are any; a playground starts its nodes with the initial controllers as
// bootstrap servers, so with Kafka's rule a broker would never find a
// leader among the controllers added since, once those initial ones are
// gone (an operator lists every controller, often behind one DNS name).
// See "Differences from Kafka".
func (n *Node) fetchTargets() []int32 {
	out := slices.Clone(n.voterIDs)
	if !n.dynamic() {
		return out
	}
	for _, id := range n.cfg.Bootstrap {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Voters returns the voter set in force on this node: the latest
// VotersRecord in its log, committed or not, or the static voters.
func (n *Node) Voters() VoterSet { return n.history.last().clone() }

// VotersAt returns the voter set in force at offset in this node's log
// and the offset of the VotersRecord that set it (-1 for the static
// voters). Offsets from the log start on (less one) are answered
// exactly; earlier ones may get the set in force at the log start.
func (n *Node) VotersAt(offset int64) (VoterSet, int64) {
	s, at := n.history.at(offset)
	return s.clone(), at
}

// KRaftVersion returns the kraft.version finalized in this node's log, 0
// when none is.
func (n *Node) KRaftVersion() KRaftVersion { return n.history.kraftVersion() }

// readSnapshotBytes reads a whole snapshot.
func (n *Node) readSnapshotBytes(id SnapshotID) ([]byte, error) {
	var data []byte
	for {
		chunk, size, err := n.log.ReadSnapshot(id, int64(len(data)), int(n.cfg.FetchMaxBytes))
		if err != nil {
			return nil, fmt.Errorf("read snapshot %v: %w", id, err)
		}
		data = append(data, chunk...)
		if int64(len(data)) >= size || len(chunk) == 0 {
			return data, nil
		}
	}
}

// participates reports whether the node takes part in elections: a voter,
// or a node being removed. The latter is one that the latest VotersRecord
// left out, while that record is not known to be committed (the high
// watermark has not passed it) and the set before it had the node. Kafka
// lets only voters campaign; but a leader that removed itself and stopped
// before any voter fetched the record holds records no voter has, and
// the voters, still counting on its vote, could never win it (their logs
// are shorter): a deadlock. Campaigning for the votes of the latest set,
// without a vote of its own, it can be elected, commit the record, and
// resign (voterChangeCommitted). Raft's safety does not ask a leader to be
// in its voter set, only that a majority of it elects it.
func (n *Node) participates() bool {
	if n.voter {
		return true
	}
	h := &n.history
	if len(h.sets) < 2 || h.lastOffset() < n.hwm {
		return false
	}
	v, ok := h.sets[len(h.sets)-2].set.Voter(n.id)
	return ok && v.matches(n.id, n.cfg.DirectoryID)
}
