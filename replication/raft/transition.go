package raft

import (
	"fmt"
	"time"
)

// electionState is the persisted part of a node's state.
type electionState struct{ epoch, leader, voted int32 }

// writeElection persists the election state if it changed. Durable
// transitions call it before they take effect.
func (n *Node) writeElection(epoch, leader, voted int32) error {
	e := electionState{epoch, leader, voted}
	if e == n.persisted {
		return nil
	}
	st := ElectionState{Epoch: epoch, LeaderID: leader, VotedID: voted, Voters: n.cfg.Voters}
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
	}
	if n.fetchingSnapshot != nil {
		_ = n.fetchingSnapshot.Abort()
		n.fetchingSnapshot = nil
	}
	if r != Candidate && r != Prospective {
		n.retries = 0
	}
	n.election = nil
	n.backoffUntil = time.Time{}
	n.resign = nil
	n.fetchedFromLeader = false
	clear(n.conns)
	n.role = r
	n.transitions++
}

// becomeUnattached moves to a higher epoch whose leader is unknown.
func (n *Node) becomeUnattached(now time.Time, epoch int32) error {
	if err := n.writeElection(epoch, -1, -1); err != nil {
		return err
	}
	keep := n.electionDeadline
	wasWaiting := n.role == Unattached || n.role == Prospective || n.role == Candidate
	n.logger.Info("unattached", "epoch", epoch, "from", n.role, "fromEpoch", n.epoch)
	n.epoch, n.leader, n.voted = epoch, -1, -1
	n.setRole(Unattached)
	switch {
	case !n.voter:
		n.electionDeadline = time.Time{}
	case wasWaiting && !keep.IsZero():
		// An election already running keeps its timer (QuorumState does too).
		n.electionDeadline = keep
	default:
		n.electionDeadline = now.Add(n.randomElectionTimeout())
	}
	return nil
}

// becomeUnattachedVoted records a vote for candidate in the current epoch.
func (n *Node) becomeUnattachedVoted(now time.Time, candidate int32) error {
	if err := n.writeElection(n.epoch, -1, candidate); err != nil {
		return err
	}
	n.logger.Info("voted", "epoch", n.epoch, "candidate", candidate)
	n.voted = candidate
	n.setRole(Unattached)
	// The candidate has as good a chance as we do; give it a full timeout.
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	return nil
}

// becomeFollower follows leader in epoch (at least the current one).
func (n *Node) becomeFollower(now time.Time, epoch, leader int32) error {
	if leader == n.id {
		return fmt.Errorf("follow node %d in epoch %d: that is this node", leader, epoch)
	}
	voted := int32(-1)
	if epoch == n.epoch {
		voted = n.voted
	}
	if err := n.writeElection(epoch, leader, voted); err != nil {
		return err
	}
	n.logger.Info("follower", "epoch", epoch, "leader", leader, "from", n.role)
	n.epoch, n.leader, n.voted = epoch, leader, voted
	n.setRole(Follower)
	n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
	return nil
}

// becomeProspective starts a pre-vote (KIP-996) in the current epoch; only
// memory changes. A single voter goes on at once.
func (n *Node) becomeProspective(now time.Time) error {
	retries := n.retries
	n.logger.Info("prospective", "epoch", n.epoch, "from", n.role)
	n.setRole(Prospective)
	n.retries = retries
	n.election = newElection(n, true)
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	if n.election.won(n) {
		return n.becomeCandidate(now)
	}
	return nil
}

// loseProspective ends a pre-vote that did not win: back to following the
// leader it knew, or unattached in the same epoch.
func (n *Node) loseProspective(now time.Time) error {
	if n.leader >= 0 && n.leader != n.id {
		return n.becomeFollower(now, n.epoch, n.leader)
	}
	n.logger.Info("unattached after pre-vote", "epoch", n.epoch)
	n.setRole(Unattached)
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	return nil
}

// becomeCandidate bumps the epoch and votes for itself.
func (n *Node) becomeCandidate(now time.Time) error {
	epoch := n.epoch + 1
	if err := n.writeElection(epoch, -1, n.id); err != nil {
		return err
	}
	retries := n.retries + 1
	n.logger.Info("candidate", "epoch", epoch, "retries", retries)
	n.epoch, n.leader, n.voted = epoch, -1, n.id
	n.setRole(Candidate)
	n.retries = retries
	n.election = newElection(n, false)
	n.electionDeadline = now.Add(n.randomElectionTimeout())
	if n.election.won(n) {
		return n.becomeLeader(now)
	}
	return nil
}

// becomeLeader takes the epoch it won and writes the LeaderChange record that
// starts it.
func (n *Node) becomeLeader(now time.Time) error {
	if err := n.writeElection(n.epoch, n.id, n.id); err != nil {
		return err
	}
	granting := n.election.granted
	n.logger.Info("leader", "epoch", n.epoch, "epochStartOffset", n.log.LogEndOffset())
	n.leader = n.id
	n.setRole(Leader)
	n.lead = newLeaderState(n, now)
	return n.lead.appendLeaderChange(n, now, granting)
}

// becomeResigned steps down from leadership in the same epoch, asking the
// other voters, most caught up first, to elect a successor.
func (n *Node) becomeResigned(now time.Time) {
	successors := n.lead.successors(n)
	n.logger.Info("resigned", "epoch", n.epoch, "successors", successors)
	n.setRole(Resigned)
	n.resign = &resignedInfo{successors: successors, unacked: n.remoteVoters()}
	n.electionDeadline = now.Add(n.randomElectionTimeout())
}
