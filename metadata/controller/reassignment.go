package controller

import (
	"slices"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// assignment is where a partition's replicas are going (Kafka's
// PartitionReassignmentReplicas): its replica list, and of those the ones
// a reassignment in progress is adding and removing. While a reassignment
// runs, replicas hold the target replicas followed by those being
// removed.
type assignment struct {
	replicas, removing, adding []int32
	// dir is the log directory of a replica new to the partition (Kafka's
	// DefaultDirProvider); nil when no replica is new.
	dir func(int32) record.Uuid
}

// assignmentOf is p's assignment as it stands.
func assignmentOf(p *image.PartitionRegistration) assignment {
	return assignment{replicas: p.Replicas, removing: p.RemovingReplicas, adding: p.AddingReplicas}
}

// reassignmentTo is the assignment that starts moving current to target
// (Kafka's PartitionReassignmentReplicas from two PartitionAssignments):
// removing those of current not in target and adding those of target not
// in current, both in id order; the replicas are target then removing.
func reassignmentTo(current, target []int32) assignment {
	removing := difference(current, target)
	adding := difference(target, current)
	return assignment{replicas: append(slices.Clone(target), removing...), removing: removing, adding: adding}
}

// difference is a less b, sorted and without duplicates (a TreeSet's).
func difference(a, b []int32) []int32 {
	out := []int32{}
	for _, x := range a {
		if !slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// inProgress reports whether a reassignment is under way.
func (a assignment) inProgress() bool { return len(a.removing) > 0 || len(a.adding) > 0 }

// reassigning reports whether p is being reassigned (Kafka's
// isReassignmentInProgress).
func reassigning(p *image.PartitionRegistration) bool {
	return len(p.RemovingReplicas) > 0 || len(p.AddingReplicas) > 0
}

// complete is Kafka's maybeCompleteReassignment with the builder's
// completeReassignmentIfNeeded: once every adding replica is in the
// target ISR (and, when the reassignment shrinks the partition, every
// target replica is), the removing replicas leave the replicas and the
// ISR and the reassignment is over. Otherwise, or if that would leave no
// ISR or no replicas, a and isr as they are.
func (a assignment) complete(isr []int32) (assignment, []int32) {
	if !a.inProgress() {
		return a, isr
	}
	newIsr, newReplicas := isr, a.replicas
	if len(a.removing) > 0 {
		keep := func(r int32) bool { return !slices.Contains(a.removing, r) }
		newIsr = filter(isr, keep)
		newReplicas = filter(a.replicas, keep)
		if len(newIsr) == 0 || len(newReplicas) == 0 {
			return a, isr
		}
	}
	// Every adding replica must be in sync first: a new broker may be
	// unhealthy.
	if !containsAll(newIsr, a.adding) {
		return a, isr
	}
	// Shrinking the replication factor must not shrink the ISR for
	// nothing: wait for every target replica to be in it.
	if len(a.adding) < len(a.removing) && !containsAll(newIsr, newReplicas) {
		return a, isr
	}
	return assignment{replicas: newReplicas, removing: []int32{}, adding: []int32{}}, newIsr
}

// original are the replicas before the reassignment (Kafka's
// originalReplicas): the replicas less those being added.
func (a assignment) original() []int32 {
	return filter(a.replicas, func(r int32) bool { return !slices.Contains(a.adding, r) })
}

// revert is Kafka's PartitionReassignmentRevert: the replicas and ISR a
// cancelled reassignment leaves, the adding replicas taken out and the
// removing ones kept. If the ISR held only adding replicas, the first
// original replica becomes the ISR, which is an unclean election (unclean
// reports it). ok is false when the reassignment added every replica.
func revert(p *image.PartitionRegistration) (to assignment, isr []int32, unclean, ok bool) {
	a := assignmentOf(p)
	to = assignment{replicas: a.original(), removing: []int32{}, adding: []int32{}}
	isr = filter(p.Isr, func(r int32) bool { return !slices.Contains(a.adding, r) })
	if len(isr) == 0 {
		if len(to.replicas) == 0 {
			return to, nil, false, false
		}
		return to, []int32{to.replicas[0]}, true, true
	}
	return to, isr, false, true
}

// record sets on c what moves p to a (Kafka's setAssignmentChanges, with
// triggerLeaderEpochBumpForReplicaReassignmentIfNeeded): the replicas and
// their directories when they change, the adding and removing lists when
// they do; a replica leaving bumps the leader epoch, so that the leader
// takes the new replica set even when it stays leader. It reports
// whether it set anything.
func (a assignment) record(c *record.PartitionChangeRecord, p *image.PartitionRegistration, v versions) bool {
	changed := false
	if c.Leader == record.NoLeaderChange && !containsAll(a.replicas, p.Replicas) {
		c.Leader, changed = p.Leader, true
	}
	// The directories follow the replicas; with the same replicas they
	// are the same.
	if len(a.replicas) > 0 && !slices.Equal(a.replicas, p.Replicas) {
		if v.directoriesInRecs {
			dirs := make([]record.Uuid, len(a.replicas))
			for i, r := range a.replicas {
				switch {
				case p.HasReplica(r):
					dirs[i] = p.Directory(r)
				case a.dir != nil:
					dirs[i] = a.dir(r)
				default:
					dirs[i] = record.DirectoryUnassigned
				}
			}
			c.Directories = dirs
		}
		c.Replicas, changed = slices.Clone(a.replicas), true
	}
	if !slices.Equal(orNone(a.removing), orNone(p.RemovingReplicas)) {
		c.RemovingReplicas, changed = slices.Clone(orNone(a.removing)), true
	}
	if !slices.Equal(orNone(a.adding), orNone(p.AddingReplicas)) {
		c.AddingReplicas, changed = slices.Clone(orNone(a.adding)), true
	}
	return changed
}

func filter(rs []int32, keep func(int32) bool) []int32 {
	out := make([]int32, 0, len(rs))
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// containsAll reports whether a holds every member of b.
func containsAll(a, b []int32) bool {
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

func orNone(a []int32) []int32 {
	if a == nil {
		return []int32{}
	}
	return a
}
