package server

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// A damaged replica (partition.Damage: its files lost records it had made
// durable) is handled as Kafka handles a replica in a failed log
// directory, one partition at a time: the broker assigns the replica to
// record.DirectoryLost, and the controller moves the leadership and the
// ISR away from it. Until the controller has that news the replica refuses
// to lead, so that no follower truncates its intact copy to the damaged
// log. It follows whichever leader the controller picks and fetches back
// what it lost; then the broker assigns it to its own directory again and
// it may rejoin the ISR. Only if the controller finds no intact replica
// does it elect the damaged one, which then leads with what it has.

// noteDamage records what opening a replica found lost, and tells the
// controller its directory is lost.
func (rm *ReplicaManager) noteDamage(tp fetcher.TopicPartition, h *hostedReplica) {
	d, ok := h.p.Damage()
	if !ok {
		return
	}
	h.damage.Store(&d)
	rm.log.Warn("replica damaged: it will not lead while an intact replica may exist, and fetches back what it lost",
		"partition", tp, "damage", d.String())
	rm.assigner.assign(h.topicID, tp.Partition, record.DirectoryLost)
	rm.emit(ReplicaEvent{Kind: ReplicaDamaged, Topic: tp.Topic, Partition: tp.Partition, Damage: d, Leader: -1, LogEndOffset: h.p.LogEndOffset()})
}

// mayLead reports whether the replica may lead as reg says. A damaged
// replica leads only once the image shows the controller knew its
// directory was lost and elected it all the same: no intact replica was
// there to lead.
func (rm *ReplicaManager) mayLead(tp fetcher.TopicPartition, h *hostedReplica, reg *image.PartitionRegistration) bool {
	if h.damage.Load() == nil {
		return true
	}
	if reg.Directory(rm.id) != record.DirectoryLost {
		rm.log.Info("damaged replica refuses to lead until the controller knows its directory is lost", "partition", tp)
		return false
	}
	rm.repaired(tp, h, rm.id)
	return true
}

// maybeRepaired marks a damaged follower repaired once its log holds what
// it lost or all the leader has committed (leaderHWM), whichever is less:
// then it is as good as any follower.
func (rm *ReplicaManager) maybeRepaired(tp fetcher.TopicPartition, leaderHWM int64) {
	rm.mu.RLock()
	h := rm.hosted[tp]
	rm.mu.RUnlock()
	if h == nil {
		return
	}
	d := h.damage.Load()
	if d == nil || h.p.LogEndOffset() < min(d.To, leaderHWM) {
		return
	}
	st := h.p.State()
	if st.Role != partition.RoleFollower {
		return
	}
	rm.repaired(tp, h, st.LeaderID)
}

// repaired clears a replica's damage and assigns it to the broker's own
// directory again.
func (rm *ReplicaManager) repaired(tp fetcher.TopicPartition, h *hostedReplica, leader int32) {
	d := h.damage.Swap(nil)
	if d == nil {
		return
	}
	rm.log.Warn("damaged replica repaired", "partition", tp, "leader", leader, "logEndOffset", h.p.LogEndOffset())
	rm.assigner.assign(h.topicID, tp.Partition, rm.dirID)
	rm.emit(ReplicaEvent{Kind: ReplicaRepaired, Topic: tp.Topic, Partition: tp.Partition, Damage: *d, Leader: leader, LogEndOffset: h.p.LogEndOffset()})
	rm.checkpoint()
}
