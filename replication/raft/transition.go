package raft

import (
	"fmt"
	"time"
)

// electionState is the persisted part of a node's state.
type electionState struct {
	epoch, leader, voted int32
	votedDir             DirectoryID
}

// writeElection persists the election state if it changed. Durable
// transitions call it before they take effect.
func (n *Node) writeElection(epoch, leader, voted int32, votedDir DirectoryID) error {
	e := electionState{epoch, leader, voted, votedDir}
	if e == n.persisted {
		return nil
	}
	st := ElectionState{Epoch: epoch, LeaderID: leader, VotedID: voted}
	if n.dynamic() {
		// Kafka's data_version 1: a dynamic quorum's voters are in the
		// log, and a vote names the candidate's directory.
		st.DataVersion, st.VotedDirectoryID = 1, votedDir
	} else {
		st.Voters = n.cfg.Voters
	}
	if err := n.store.Write(st); err != nil {
		return fmt.Errorf("write quorum state (epoch %d, leader %d, voted %d): %w", epoch, leader, voted, err)
	}
	n.persisted = e
	return nil
}

// setRole leaves the current role, dropping what belonged to it, and
// enters r. Connections are reset, so responses to requests sent in the old
// role are ignored.
func (n *Node) setRole(r Role) {
	if n.lead != nil {
		n.lead.failParked(n)
		n.lead = nil
		n.metrics.writes = n.metrics.writes[:0]
	}
	if n.fetchingSnapshot != nil {
		_ = n.fetchingSnapshot.Abort()
		n.fetchingSnapshot = nil
	}
	n.election = nil
	n.resign = nil
	n.fetchedFromLeader = false
	n.updatedLeader = false
	n.refuseHeldAcks()
	n.observing = false
	clear(n.conns)
	n.role = r
	n.transitions++
}

// nextEpoch is the epoch after the current one; an epoch that cannot be
// incremented is refused (the wire and the disk never let one in).
func (n *Node) nextEpoch() (int32, error) {
	if n.epoch >= maxEpoch {
		return 0, n.unsafe(false, "epoch %d cannot be incremented", n.epoch)
	}
	return n.epoch + 1, nil
}

// becomeUnattached moves to a higher epoch whose leader is unknown
// (QuorumState.transitionToUnattached).
func (n *Node) becomeUnattached(now time.Time, epoch int32) error {
	if err := n.writeElection(epoch, -1, -1, DirectoryID{}); err != nil {
		return err
	}
	keep := n.electionDeadline
	// A running election timer carries over: a candidate's, an unattached
	// or resigned node's (an expired one makes it Prospective at once), a
	// prospective node's unless its pre-vote was rejected.
	carry := n.role == Unattached || n.role == Candidate || n.role == Resigned ||
		(n.role == Prospective && !n.election.lost(n))
	n.logger.Info("unattached", "epoch", epoch, "from", n.role, "fromEpoch", n.epoch)
	n.epoch, n.leader, n.voted, n.votedDir = epoch, -1, -1, DirectoryID{}
	n.setRole(Unattached)
	switch {
	case !n.participates():
		n.electionDeadline = time.Time{}
	case carry && !keep.IsZero():
		n.electionDeadline = keep
	default:
		n.electionDeadline = now.Add(n.randomElectionTimeout())
	}
	n.reportRole()
	return nil
}

// becomeUnattachedVoted records a binding vote for candidate in the current
// epoch. An unattached node stays Unattached, a prospective one Prospective
// (QuorumState.unattachedAddVotedState, prospectiveAddVotedState); both
// restart their election timer, as the candidate has as good a chance as
// they do.
func (n *Node) becomeUnattachedVoted(now time.Time, candidate int32, dir DirectoryID) error {
	if err := n.writeElection(n.epoch, n.leader, candidate, dir); err != nil {
		return err
	}
	n.logger.Info("voted", "epoch", n.epoch, "candidate", candidate, "role", n.role)
	n.voted, n.votedDir = candidate, dir
	if n.role == Prospective {
		// A new ProspectiveState: a fresh tally, the connections kept.
		n.election = newElection(n, true)
		n.transitions++
	} else {
		n.setRole(Unattached)
	}
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	n.reportRole()
	return nil
}

// becomeFollower follows leader in epoch (at least the current one).
func (n *Node) becomeFollower(now time.Time, epoch, leader int32) error {
	if leader == n.id {
		return fmt.Errorf("follow node %d in epoch %d: that is this node", leader, epoch)
	}
	voted, votedDir := int32(-1), DirectoryID{}
	if epoch == n.epoch {
		voted, votedDir = n.voted, n.votedDir
	}
	if err := n.writeElection(epoch, leader, voted, votedDir); err != nil {
		return err
	}
	n.logger.Info("follower", "epoch", epoch, "leader", leader, "from", n.role)
	n.epoch, n.leader, n.voted, n.votedDir = epoch, leader, voted, votedDir
	n.setRole(Follower)
	n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
	n.updateVoterDeadline = now.Add(n.cfg.FetchTimeout)
	n.electionEnded(now)
	n.reportRole()
	return nil
}

// becomeProspective starts a pre-vote (KIP-996) in the current epoch; only
// memory changes. A single voter goes on at once.
func (n *Node) becomeProspective(now time.Time) error {
	n.logger.Info("prospective", "epoch", n.epoch, "from", n.role)
	n.setRole(Prospective)
	n.election = newElection(n, true)
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	n.reportRole()
	if n.election.won(n) {
		return n.becomeCandidate(now)
	}
	n.electionStarted(now)
	return nil
}

// loseProspective ends a pre-vote that did not win
// (prospectiveTransitionAfterElectionLoss): back to following the leader it
// knew, or unattached in the same epoch. After a timeout the expired timer
// carries over, so a new pre-vote starts at once; after a rejection the node
// waits a new election timeout.
func (n *Node) loseProspective(now time.Time) error {
	if n.leader >= 0 && n.leader != n.id {
		lost := n.election
		if err := n.becomeFollower(now, n.epoch, n.leader); err != nil {
			return err
		}
		// It follows the leader it knew again, until its fetch timeout.
		n.emitElectionLost(lost, n.epoch, time.Time{})
		return nil
	}
	rejected := n.election.lost(n)
	n.logger.Info("unattached after pre-vote", "epoch", n.epoch, "rejected", rejected)
	lost := n.election
	keep := n.electionDeadline
	n.setRole(Unattached)
	n.electionDeadline = keep
	if rejected {
		n.electionDeadline = now.Add(n.randomElectionTimeout())
	}
	n.reportRole()
	n.emitElectionLost(lost, n.epoch, n.electionDeadline)
	return nil
}

// becomeCandidate bumps the epoch and votes for itself.
func (n *Node) becomeCandidate(now time.Time) error {
	epoch, err := n.nextEpoch()
	if err != nil {
		return err
	}
	if err := n.writeElection(epoch, -1, n.id, n.cfg.DirectoryID); err != nil {
		return err
	}
	n.logger.Info("candidate", "epoch", epoch)
	n.epoch, n.leader, n.voted, n.votedDir = epoch, -1, n.id, n.cfg.DirectoryID
	n.setRole(Candidate)
	n.election = newElection(n, false)
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	n.reportRole()
	if n.election.won(n) {
		return n.becomeLeader(now)
	}
	n.electionStarted(now)
	return nil
}

// becomeLeader takes the epoch it won and writes the LeaderChange record that
// starts it. The leader's quorum state names no vote (Kafka's LeaderState
// election has no voted key).
func (n *Node) becomeLeader(now time.Time) error {
	if err := n.writeElection(n.epoch, n.id, -1, DirectoryID{}); err != nil {
		return err
	}
	granting := n.election.granted
	start := n.log.LogEndOffset()
	n.logger.Info("leader", "epoch", n.epoch, "epochStartOffset", start)
	n.emit(Event{Kind: EventElectionWon, LogEndOffset: start})
	n.leader, n.voted, n.votedDir = n.id, -1, DirectoryID{}
	n.setRole(Leader)
	n.lead = newLeaderState(n, now)
	n.reportRole()
	err := n.lead.appendLeaderChange(n, now, granting)
	n.electionEnded(now)
	return err
}

// becomeResigned steps down from leadership in the same epoch, asking the
// other voters, most caught up first, to elect a successor.
func (n *Node) becomeResigned(now time.Time) {
	successors := n.lead.successors(n)
	n.logger.Info("resigned", "epoch", n.epoch, "successors", successors)
	n.setRole(Resigned)
	n.resign = &resignedInfo{successors: successors, unacked: n.remoteVoters()}
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	n.reportRole()
}
