package controller

import (
	"slices"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// acceptableLeader is Kafka's isAcceptableLeader: a broker that is
// registered, unfenced and not shutting down (ClusterControlManager.isActive),
// minus one being removed or plus one being unfenced.
func acceptableLeader(img *image.MetadataImage, removing, adding int32) func(int32) bool {
	return func(r int32) bool {
		if r == removing {
			return false
		}
		if r == adding {
			return true
		}
		b := img.Cluster().Broker(r)
		return b != nil && !b.Fenced && !b.InControlledShutdown
	}
}

// leaderAcceptor is Kafka's LeaderAcceptor: a broker acceptable as leader
// whose replica of p is in a log directory it has online, so that a
// replica in a lost directory (a damaged one) is never elected.
func leaderAcceptor(img *image.MetadataImage, p *image.PartitionRegistration, acceptable func(int32) bool) func(int32) bool {
	return func(r int32) bool {
		return acceptable(r) && p.ReplicaOnline(r, img.Cluster().Broker(r))
	}
}

// election is how a partition change may pick its leader (Kafka's
// PartitionChangeBuilder.Election).
type election int

const (
	// electionOnline elects only from the target ISR.
	electionOnline election = iota
	// electionUnclean falls back, when no ISR member is acceptable, to the
	// first acceptable replica outside it: the topic allows
	// unclean.leader.election.enable.
	electionUnclean
	// electionPreferred elects the preferred replica (the first of the
	// replicas) when it is in the target ISR and acceptable, else as
	// electionOnline (electPreferredLeader).
	electionPreferred
)

// partitionChange builds the PartitionChangeRecord that moves partition p
// to targetIsr and elects a leader, as Kafka's PartitionChangeBuilder does
// with eligible leader replicas off: the current leader stays if it is in
// the target ISR and acceptable, else the first replica that is; with
// electionUnclean and none, the first acceptable replica at all, with the
// ISR forced to it alone and the leader marked RECOVERING (it may lack
// records the ISR had). No leader gives NoLeader. With ELR off the ISR
// never becomes empty: a target of none keeps the ISR (its last member
// stays). nil means no change; unclean says the leader came from outside
// the ISR.
func partitionChange(topic record.Uuid, id int32, p *image.PartitionRegistration, targetIsr []int32,
	acceptable func(int32) bool, el election, v versions) (c *record.PartitionChangeRecord, unclean bool) {
	return partitionChangeTo(topic, id, p, assignmentOf(p), targetIsr, acceptable, el, v)
}

// partitionChangeTo is partitionChange towards the assignment to: a
// reassignment the target ISR completes is completed first (Kafka's
// completeReassignmentIfNeeded), and the leader is elected among the
// target replicas.
func partitionChangeTo(topic record.Uuid, id int32, p *image.PartitionRegistration, to assignment, targetIsr []int32,
	acceptable func(int32) bool, el election, v versions) (c *record.PartitionChangeRecord, unclean bool) {
	to, targetIsr = to.complete(targetIsr)
	valid := func(r int32) bool { return slices.Contains(targetIsr, r) && acceptable(r) }
	leader := record.NoLeader
	if el == electionPreferred && len(to.replicas) > 0 && valid(to.replicas[0]) {
		leader = to.replicas[0]
	} else if p.Leader >= 0 && valid(p.Leader) {
		leader = p.Leader
	} else if i := slices.IndexFunc(to.replicas, valid); i >= 0 {
		leader = to.replicas[i]
	} else if el == electionUnclean {
		if i := slices.IndexFunc(to.replicas, acceptable); i >= 0 {
			leader, unclean = to.replicas[i], true
		}
	}
	c = record.NewPartitionChangeRecord(topic, id)
	c.Version = v.partitionChange
	changed := false
	if leader != p.Leader {
		c.Leader, changed = leader, true
	}
	switch {
	case unclean:
		// Kafka's tryElection: the ISR is forced to the new leader alone.
		// That may lose data, hence RECOVERING.
		c.Isr = []int32{leader}
		if p.LeaderRecoveryState != record.LeaderRecovering {
			c.LeaderRecoveryState = record.LeaderRecovering
		}
	case len(targetIsr) > 0 && !slices.Equal(targetIsr, p.Isr):
		c.Isr, changed = slices.Clone(targetIsr), true
	}
	changed = to.record(c, p, v) || changed
	if !changed {
		return nil, false
	}
	return c, unclean
}

// without is isr without r.
func without(isr []int32, r int32) []int32 {
	out := make([]int32, 0, len(isr))
	for _, x := range isr {
		if x != r {
			out = append(out, x)
		}
	}
	return out
}

// changeEvent reports a partition change once it commits.
func changeEvent(topic string, c *record.PartitionChangeRecord, p *image.PartitionRegistration, reason string) Event {
	isr := c.Isr
	if isr == nil {
		isr = p.Isr
	}
	leader := c.Leader
	if leader == record.NoLeaderChange {
		leader = p.Leader
	}
	return Event{Kind: EventPartitionChanged, Topic: topic, TopicID: c.TopicID, Partition: c.PartitionID,
		Leader: leader, Isr: slices.Clone(isr), Reason: reason}
}

// uncleanEvent reports an unclean election once it commits.
func uncleanEvent(topic string, c *record.PartitionChangeRecord, p *image.PartitionRegistration, reason string) Event {
	return Event{Kind: EventUncleanLeaderElection, Topic: topic, TopicID: c.TopicID, Partition: c.PartitionID,
		Leader: c.Leader, Isr: slices.Clone(c.Isr), LastIsr: slices.Clone(p.Isr), Reason: reason}
}

// changeEvents are the events of a change: an unclean election is told
// as such before the change itself.
func changeEvents(topic string, c *record.PartitionChangeRecord, p *image.PartitionRegistration, unclean bool, reason string) []Event {
	if unclean {
		return []Event{uncleanEvent(topic, c, p, reason), changeEvent(topic, c, p, reason+", unclean election")}
	}
	return []Event{changeEvent(topic, c, p, reason)}
}

// removeBrokerFromIsrs is Kafka's generateLeaderAndIsrUpdates with a broker
// to remove: every partition whose ISR holds it loses it (keeping a last
// member), and those it led elect another leader.
func (c *QuorumController) removeBrokerFromIsrs(img *image.MetadataImage, id int32, reason string) ([]record.Record, []Event) {
	v := c.versions(img)
	ok := acceptableLeader(img, id, -1)
	var recs []record.Record
	var evs []Event
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, pid := range t.PartitionIDs() {
			p := t.Partition(pid)
			if !p.InIsr(id) && p.Leader != id {
				continue
			}
			if ch, unclean := partitionChange(t.ID(), pid, p, without(p.Isr, id), leaderAcceptor(img, p, ok), c.electionFor(img, name), v); ch != nil {
				recs = append(recs, ch)
				evs = append(evs, changeEvents(name, ch, p, unclean, reason)...)
			}
		}
	}
	return recs, evs
}

// electLeaderless elects leaders, now that broker id is acceptable, for the
// partitions that have none (Kafka's handleBrokerUnfenced over
// partitionsWithNoLeader): from the ISR, or, where the topic allows an
// unclean election and no ISR member is alive, from the other replicas.
func (c *QuorumController) electLeaderless(img *image.MetadataImage, id int32, reason string) ([]record.Record, []Event) {
	v := c.versions(img)
	ok := acceptableLeader(img, -1, id)
	var recs []record.Record
	var evs []Event
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, pid := range t.PartitionIDs() {
			p := t.Partition(pid)
			if p.HasLeader() || !p.HasReplica(id) {
				continue
			}
			if ch, unclean := partitionChange(t.ID(), pid, p, p.Isr, leaderAcceptor(img, p, ok), c.electionFor(img, name), v); ch != nil {
				recs = append(recs, ch)
				evs = append(evs, changeEvents(name, ch, p, unclean, reason)...)
			}
		}
	}
	return recs, evs
}

// leads reports whether broker id leads any partition.
func leads(img *image.MetadataImage, id int32) bool {
	for _, t := range img.Topics().Topics() {
		for _, p := range t.Partitions() {
			if p.Leader == id {
				return true
			}
		}
	}
	return false
}

func (c *QuorumController) versions(img *image.MetadataImage) versions {
	mv, _ := img.Features().MetadataVersion()
	return versionsFor(mv)
}
