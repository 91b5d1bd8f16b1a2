package partition

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ChangeKind says whether an ISR change adds a replica or removes some.
type ChangeKind int8

// ISR change kinds.
const (
	// ExpandISR adds one caught-up replica (Kafka's PendingExpandIsr).
	ExpandISR ChangeKind = iota + 1
	// ShrinkISR removes the members that fell behind (PendingShrinkIsr).
	ShrinkISR
)

// String returns "expand" or "shrink".
func (k ChangeKind) String() string {
	if k == ExpandISR {
		return "expand"
	}
	return "shrink"
}

// Proposal is an ISR change for the caller to send to the controller in
// an AlterPartition request.
type Proposal struct {
	Kind ChangeKind
	// LeaderEpoch and PartitionEpoch are the state the change applies to
	// (AlterPartition's LeaderEpoch and PartitionEpoch).
	LeaderEpoch    int32
	PartitionEpoch int32
	// ISR is the ISR asked for (NewIsrWithEpochs).
	ISR []int32
	// BrokerEpochs are, for each member of ISR, the broker epoch its
	// fetches to this leader named (Kafka's addBrokerEpochToIsr), -1 when
	// unknown and for the leader itself, whose caller knows its own.
	BrokerEpochs []int64
	// Changed are the replicas added or removed.
	Changed []int32
}

// isrState is Kafka's PartitionState: the ISR last committed, and the
// change in flight, if any. While a change is in flight no other is made.
type isrState struct {
	committed []int32
	pending   *Proposal
}

// maximal is the ISR the high watermark waits for: while an expansion is in
// flight the new member already counts, so that the high watermark is safe
// whichever way the controller decides; a shrink counts only once committed.
func (s *isrState) maximal() []int32 {
	if s.pending != nil && s.pending.Kind == ExpandISR {
		return slices.Clone(s.pending.ISR)
	}
	return slices.Clone(s.committed)
}

func (s *isrState) inMaximal(id int32) bool {
	if s.pending != nil && s.pending.Kind == ExpandISR {
		return slices.Contains(s.pending.ISR, id)
	}
	return slices.Contains(s.committed, id)
}

// ISRChange returns the ISR change the leader should ask the controller
// for now, and marks it in flight: ok is false when the replica does not
// lead, a change is already in flight, or the ISR is right. A shrink
// (Kafka's maybeShrinkIsr) removes every member other than the leader that
// has not caught up to the leader's log end offset within
// replica.lag.time.max.ms; otherwise an expansion (maybeExpandIsr) adds one
// eligible replica whose log end offset is at least the high watermark and
// the start of the current leader epoch — a replica must hold this epoch's
// start before it may become leader, or it could lack committed records.
// As in Kafka, where maybeExpandIsr runs on the follower's fetch, only a
// replica that fetched since the last look is considered.
func (p *Partition) ISRChange(now time.Time) (Proposal, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleLeader || p.isr.pending != nil {
		return Proposal{}, false
	}
	leo := p.log.LogEndOffset()
	var out []int32
	for _, id := range p.isr.committed {
		if id == p.cfg.LocalBrokerID {
			continue
		}
		if r, ok := p.remotes[id]; !ok || !r.caughtUp(leo, now, p.cfg.ReplicaLagTimeMax) {
			out = append(out, id)
		}
	}
	if len(out) > 0 {
		isr := slices.DeleteFunc(slices.Clone(p.isr.committed), func(id int32) bool { return slices.Contains(out, id) })
		return p.propose(ShrinkISR, isr, out), true
	}
	for _, id := range p.replicas {
		r, ok := p.remotes[id]
		if !ok || !r.fetchedSinceISRCheck {
			continue
		}
		r.fetchedSinceISRCheck = false
		if slices.Contains(p.isr.committed, id) || !p.eligible(id) || !p.epochEligible(id, r) {
			continue
		}
		if r.leo >= p.hwm && p.leaderEpochStart >= 0 && r.leo >= p.leaderEpochStart {
			return p.propose(ExpandISR, append(slices.Clone(p.isr.committed), id), []int32{id}), true
		}
	}
	return Proposal{}, false
}

// epochEligible is Kafka's isBrokerEpochIsrEligible: the follower's
// fetches named the broker epoch the metadata holds for it, or none.
func (p *Partition) epochEligible(id int32, r *replicaState) bool {
	if p.cfg.AliveBrokerEpoch == nil {
		return true
	}
	cached, ok := p.cfg.AliveBrokerEpoch(id)
	return ok && (r.brokerEpoch == -1 || r.brokerEpoch == cached)
}

func (p *Partition) propose(kind ChangeKind, isr, changed []int32) Proposal {
	epochs := make([]int64, len(isr))
	for i, id := range isr {
		epochs[i] = -1
		if r, ok := p.remotes[id]; ok && id != p.cfg.LocalBrokerID {
			epochs[i] = r.brokerEpoch
		}
	}
	prop := Proposal{Kind: kind, LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch, ISR: isr, BrokerEpochs: epochs, Changed: changed}
	kept := prop
	kept.ISR = slices.Clone(isr)
	kept.BrokerEpochs = slices.Clone(epochs)
	p.isr.pending = &kept
	return prop
}

func (p *Partition) eligible(id int32) bool {
	return p.cfg.ReplicaEligible == nil || p.cfg.ReplicaEligible(id)
}

// ApplyPartitionState commits the ISR and partition epoch the controller
// decided: its answer to AlterPartition, or a PartitionChangeRecord in the
// same leader epoch. It ends any change in flight. A partition epoch below
// the replica's is stale and refused (Kafka ignores it too). It reports
// whether the high watermark moved, for the caller to complete delayed
// operations.
func (p *Partition) ApplyPartitionState(isr []int32, partitionEpoch int32, now time.Time) (hwmMoved bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if partitionEpoch < p.partitionEpoch {
		return false, fmt.Errorf("partition %s: partition epoch %d is below %d: %w", p.name, partitionEpoch, p.partitionEpoch, kerr.InvalidUpdateVersion)
	}
	if err := checkISR(p.replicas, isr); err != nil {
		return false, fmt.Errorf("partition %s: %w", p.name, err)
	}
	p.isr = isrState{committed: slices.Clone(isr)}
	p.partitionEpoch = partitionEpoch
	if p.role != RoleLeader {
		return false, nil
	}
	return p.maybeIncrementHighWatermark(now), nil
}

// ISRChangeRefused takes the controller's refusal of the change in
// flight, as Kafka's Partition.handleAlterPartitionError does, and
// reports whether to send the change again. Only OPERATION_NOT_ATTEMPTED
// and INELIGIBLE_REPLICA say that no controller applied it: the committed
// ISR stands and ISRChange may propose again. After any other refusal
// (a stale partition epoch, a fenced leader epoch, an unknown topic, an
// invalid request) the change may have been applied already, by a
// controller whose answer was lost, so it stays pending, and the high
// watermark keeps waiting for an expansion's new member, until metadata
// says what was decided. An error Kafka does not expect here is retried.
func (p *Partition) ISRChangeRefused(code int16) (retry bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch code {
	case kerr.OperationNotAttempted.Code, kerr.IneligibleReplica.Code:
		p.isr.pending = nil
		return false
	case kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code, kerr.FencedLeaderEpoch.Code,
		kerr.InvalidUpdateVersion.Code, kerr.InvalidRequest.Code, kerr.NewLeaderElected.Code:
		return false
	}
	return true
}

// AbortISRChange forgets the change in flight: the committed ISR stands
// and ISRChange may propose again. It is for a change that belongs to no
// request any more (the metadata moved past its answer).
func (p *Partition) AbortISRChange() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isr.pending = nil
}

// checkISR checks that isr holds distinct members of replicas.
func checkISR(replicas, isr []int32) error {
	for i, id := range isr {
		if !slices.Contains(replicas, id) {
			return fmt.Errorf("ISR member %d is not a replica %v: %w", id, replicas, kerr.InvalidRequest)
		}
		if slices.Contains(isr[:i], id) {
			return fmt.Errorf("ISR %v names %d twice: %w", isr, id, kerr.InvalidRequest)
		}
	}
	return nil
}

// InISR says whether replicaID is in the last committed ISR. A follower
// in it has no expansion to propose (a shrink is found on a timer), so its
// fetches need not wake whoever proposes ISR changes; one outside it, with
// an expansion pending or not, may.
func (p *Partition) InISR(replicaID int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.isr.committed, replicaID)
}
