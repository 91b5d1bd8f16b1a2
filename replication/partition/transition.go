package partition

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// MakeLeader makes the replica the leader in leaderEpoch, as the metadata
// says (Kafka's Partition.makeLeader). A new leader epoch starts at the log
// end offset: the start of the epoch is remembered (the epoch cache takes it
// with the epoch's first batch), any ISR change in flight is dropped, and
// what the leader knows of its followers is reset: their log end offsets
// are forgotten until they fetch in the new epoch, the rest too if it was
// not leading before. The same epoch with a newer partition epoch only updates
// the replicas and the ISR. A leader epoch or partition epoch below the
// replica's is stale and refused with FENCED_LEADER_EPOCH. isNewLeaderEpoch
// reports whether the epoch changed.
func (p *Partition) MakeLeader(leaderEpoch, partitionEpoch int32, replicas, isr []int32, now time.Time) (isNewLeaderEpoch bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkTransition(leaderEpoch, partitionEpoch, replicas, isr); err != nil {
		return false, err
	}
	if !slices.Contains(replicas, p.cfg.LocalBrokerID) {
		return false, fmt.Errorf("partition %s: broker %d leads but is not a replica %v: %w", p.name, p.cfg.LocalBrokerID, replicas, kerr.InvalidRequest)
	}
	newLeader := p.role != RoleLeader
	isNewLeaderEpoch = leaderEpoch > p.leaderEpoch
	p.setAssignment(replicas, isr)
	if newLeader {
		// What it appended as a follower, or led before, is not kept.
		p.tail.Reset()
	}
	if isNewLeaderEpoch || newLeader {
		p.leaderEpochStart = p.log.LogEndOffset()
		for id, r := range p.remotes {
			r.reset(now, p.leaderEpochStart, newLeader, slices.Contains(isr, id))
		}
	}
	p.role, p.leaderID, p.leaderEpoch, p.partitionEpoch = RoleLeader, p.cfg.LocalBrokerID, leaderEpoch, partitionEpoch
	p.maybeIncrementHighWatermark(now)
	return isNewLeaderEpoch, nil
}

// MakeFollower makes the replica a follower of leader (-1: none known) in
// leaderEpoch (Kafka's makeFollower). It does not truncate: the fetcher
// finds the divergence point from the leader's epochs and calls TruncateTo.
// Stale epochs are refused as in MakeLeader. isNewLeaderEpoch reports
// whether the epoch changed, so the caller knows to restart fetching.
func (p *Partition) MakeFollower(leader, leaderEpoch, partitionEpoch int32, replicas, isr []int32) (isNewLeaderEpoch bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail.Reset()
	if err := p.checkTransition(leaderEpoch, partitionEpoch, replicas, isr); err != nil {
		return false, err
	}
	if leader == p.cfg.LocalBrokerID {
		return false, fmt.Errorf("partition %s: broker %d cannot follow itself: %w", p.name, leader, kerr.InvalidRequest)
	}
	isNewLeaderEpoch = leaderEpoch > p.leaderEpoch
	p.setAssignment(replicas, isr)
	clear(p.remotes)
	p.role, p.leaderID, p.leaderEpoch, p.partitionEpoch = RoleFollower, leader, leaderEpoch, partitionEpoch
	p.leaderEpochStart = -1
	return isNewLeaderEpoch, nil
}

func (p *Partition) checkTransition(leaderEpoch, partitionEpoch int32, replicas, isr []int32) error {
	if leaderEpoch < 0 || partitionEpoch < 0 {
		return fmt.Errorf("partition %s: leader epoch %d, partition epoch %d: %w", p.name, leaderEpoch, partitionEpoch, kerr.InvalidRequest)
	}
	if leaderEpoch < p.leaderEpoch || partitionEpoch < p.partitionEpoch {
		return fmt.Errorf("partition %s: leader epoch %d partition epoch %d is older than %d/%d: %w",
			p.name, leaderEpoch, partitionEpoch, p.leaderEpoch, p.partitionEpoch, kerr.FencedLeaderEpoch)
	}
	for i, id := range replicas {
		if slices.Contains(replicas[:i], id) {
			return fmt.Errorf("partition %s: replicas %v name %d twice: %w", p.name, replicas, id, kerr.InvalidRequest)
		}
	}
	if err := checkISR(replicas, isr); err != nil {
		return fmt.Errorf("partition %s: %w", p.name, err)
	}
	return nil
}

// setAssignment is Kafka's updateAssignmentAndIsr: the committed ISR is
// the given one (no change in flight), and the leader tracks exactly the
// other replicas.
func (p *Partition) setAssignment(replicas, isr []int32) {
	p.replicas = slices.Clone(replicas)
	p.isr = isrState{committed: slices.Clone(isr)}
	for id := range p.remotes {
		if !slices.Contains(replicas, id) {
			delete(p.remotes, id)
		}
	}
	for _, id := range replicas {
		if _, ok := p.remotes[id]; !ok && id != p.cfg.LocalBrokerID {
			p.remotes[id] = &replicaState{leo: -1, lastFetchLeaderLEO: -1, brokerEpoch: -1}
		}
	}
}
