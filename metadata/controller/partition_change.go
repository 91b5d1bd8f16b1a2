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

// elected says how a partition change chose its leader.
type elected int

const (
	// electedClean: the leader stayed, or came from the ISR, or none was
	// found.
	electedClean elected = iota
	// electedFromElr: the ISR was empty and the leader came from the
	// eligible leader replicas (KIP-966); the ISR becomes it alone.
	electedFromElr
	// electedLastKnown: the ISR and ELR were both empty and the last known
	// leader (LastKnownElr) came back; Kafka counts it unclean: the ISR
	// becomes it alone, RECOVERING.
	electedLastKnown
	// electedUnclean: the topic allows unclean.leader.election.enable and
	// the leader came from outside the ISR and ELR.
	electedUnclean
)

// unclean reports whether the election forced the ISR to the new leader
// alone and marked it RECOVERING.
func (e elected) unclean() bool { return e == electedLastKnown || e == electedUnclean }

// changeBuilder is Kafka's PartitionChangeBuilder: it moves partition p
// to targetIsr and elects a leader. The current leader stays if it may
// lead, else the first replica in the target ISR that may, else (ISR
// empty, ELR on) the first in the ELR, else (ELR on) the last known
// leader, else with electionUnclean any acceptable replica. With
// eligible leader replicas on (elr), an ISR below minIsr keeps the
// members it loses in the ELR (minus replicas that shut down uncleanly),
// and may become empty; off, the ISR never becomes empty: a target of
// none keeps its last member. Kafka's useLastKnownLeaderInBalancedRecovery
// is always true in its controller, so LastKnownElr holds the last
// leader of a partition that went leaderless.
type changeBuilder struct {
	topic     record.Uuid
	id        int32
	p         *image.PartitionRegistration
	targetIsr []int32
	// to is where the replicas go: as they are, or a reassignment's
	// target, completed first if the target ISR allows.
	to         assignment
	acceptable func(int32) bool
	election   election
	v          versions
	// elr is eligible.leader.replicas.version >= 1, and minIsr the
	// topic's effective min.insync.replicas (capped at its replication
	// factor: getTopicEffectiveMinIsr).
	elr    bool
	minIsr int
	// uncleanShutdown is a broker whose replica shut down uncleanly: it
	// leaves the ELR (setUncleanShutdownReplicas); -1 for none.
	uncleanShutdown int32
	// recovery, when not LeaderRecoveryNoChange, is the leader recovery
	// state AlterPartition asks for.
	recovery int8
}

// newChange starts a change of partition id of topic to targetIsr with
// ELR off, which is how Kafka's builder starts until told.
func newChange(topic record.Uuid, id int32, p *image.PartitionRegistration, targetIsr []int32,
	acceptable func(int32) bool, el election, v versions) *changeBuilder {
	return &changeBuilder{topic: topic, id: id, p: p, targetIsr: targetIsr, to: assignmentOf(p), acceptable: acceptable, election: el, v: v,
		uncleanShutdown: -1, recovery: record.LeaderRecoveryNoChange}
}

// build is PartitionChangeBuilder.build: nil when nothing changes.
func (b *changeBuilder) build() (*record.PartitionChangeRecord, elected) {
	p := b.p
	// completeReassignmentIfNeeded comes before the election, which then
	// runs over the target replicas.
	to, targetIsr := b.to.complete(b.targetIsr)
	isr := slices.Clone(targetIsr)
	elr := b.targetElr(isr)
	leader, how := b.electLeader(to.replicas, isr, elr)
	c := record.NewPartitionChangeRecord(b.topic, b.id)
	c.Version = b.v.partitionChange
	if leader != p.Leader {
		c.Leader = leader
		switch how {
		case electedFromElr:
			isr = []int32{leader}
			elr = slices.DeleteFunc(elr, func(r int32) bool { return r == leader })
		case electedLastKnown, electedUnclean:
			// The ISR is forced to the new leader alone. That may lose
			// data, hence RECOVERING.
			c.Isr = []int32{leader}
			if p.LeaderRecoveryState != record.LeaderRecovering {
				c.LeaderRecoveryState = record.LeaderRecovering
			}
		}
	} else {
		how = electedClean
	}
	// maybeUpdateRecordElr: an unclean election or ELR off clears it.
	if c.Isr != nil || !b.elr {
		elr = nil
	}
	// The ELR fields exist from PartitionChangeRecord v2 (4.0-IV1), which
	// the feature needs.
	elrFields := b.v.partitionChange >= 2
	if elrFields && !slices.Equal(elr, p.Elr) {
		c.EligibleLeaderReplicas = nonNil(elr)
	}
	if c.Isr == nil && (len(isr) > 0 || b.elr) && !slices.Equal(isr, p.Isr) {
		c.Isr = nonNil(isr)
	}
	// maybeUpdateLastKnownLeader: the leader a partition had when it
	// first went leaderless, cleared once it has one again.
	if b.elr && elrFields {
		if c.Leader == record.NoLeader && len(p.LastKnownElr) == 0 {
			c.LastKnownElr = []int32{p.Leader}
		} else if c.Leader >= 0 && len(p.LastKnownElr) > 0 {
			c.LastKnownElr = []int32{}
		}
	}
	if b.recovery != record.LeaderRecoveryNoChange && b.recovery != p.LeaderRecoveryState && c.LeaderRecoveryState == record.LeaderRecoveryNoChange {
		c.LeaderRecoveryState = b.recovery
	}
	to.record(c, p, b.v)
	if changeIsNoOp(c) {
		return nil, electedClean
	}
	return c, how
}

// targetElr is maybePopulateTargetElr: with ELR on and the target ISR
// below min ISR, the ELR gains the members the ISR loses and keeps its
// own, less the target ISR and a replica that shut down uncleanly; at or
// above min ISR it empties. Off, it stays as it is (build clears it).
func (b *changeBuilder) targetElr(isr []int32) []int32 {
	if !b.elr {
		return slices.Clone(b.p.Elr)
	}
	if len(isr) >= b.minIsr {
		return nil
	}
	candidates := javaHashSetOrder(len(b.p.Elr), append(slices.Clone(b.p.Elr), b.p.Isr...))
	return slices.DeleteFunc(candidates, func(r int32) bool {
		return slices.Contains(isr, r) || r == b.uncleanShutdown
	})
}

// electLeader is electPreferredLeader and electAnyLeader over replicas.
func (b *changeBuilder) electLeader(replicas, isr, elr []int32) (int32, elected) {
	p := b.p
	valid := func(r int32) bool {
		return (slices.Contains(isr, r) || (len(isr) == 0 && slices.Contains(elr, r))) && b.acceptable(r)
	}
	how := func(r int32) elected {
		if !slices.Contains(isr, r) {
			return electedFromElr
		}
		return electedClean
	}
	if b.election == electionPreferred && len(replicas) > 0 && valid(replicas[0]) {
		return replicas[0], how(replicas[0])
	}
	if p.Leader >= 0 && valid(p.Leader) {
		return p.Leader, electedClean
	}
	if i := slices.IndexFunc(replicas, valid); i >= 0 {
		return replicas[i], how(replicas[i])
	}
	// canElectLastKnownLeader: nothing else is left of the ISR and ELR.
	if b.elr && len(isr) == 0 && len(elr) == 0 && len(p.LastKnownElr) == 1 && b.acceptable(p.LastKnownElr[0]) {
		return p.LastKnownElr[0], electedLastKnown
	}
	if b.election == electionUnclean {
		if i := slices.IndexFunc(replicas, b.acceptable); i >= 0 {
			return replicas[i], electedUnclean
		}
	}
	return record.NoLeader, electedClean
}

// changeIsNoOp is PartitionChangeBuilder.changeRecordIsNoOp.
func changeIsNoOp(c *record.PartitionChangeRecord) bool {
	return c.Isr == nil && c.EligibleLeaderReplicas == nil && c.LastKnownElr == nil && c.Leader == record.NoLeaderChange &&
		c.Replicas == nil && c.RemovingReplicas == nil && c.AddingReplicas == nil &&
		c.LeaderRecoveryState == record.LeaderRecoveryNoChange && c.Directories == nil
}

// nonNil is ids, or an empty list for none: in a PartitionChangeRecord
// nil means no change.
func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// javaHashSetOrder is the order in which Java's HashSet<Integer>, sized
// for initial elements and then given the rest, iterates ids (duplicates
// dropped). Kafka's builder collects the ELR from such a set, and
// kafka-topics prints it in that order; keeping it keeps the two alike.
// An Integer's hash is its value, spread as h ^ (h >>> 16); buckets are
// visited in index order and each keeps insertion order, also across
// resizes.
func javaHashSetOrder(initial int, ids []int32) []int32 {
	var distinct []int32
	for _, id := range ids {
		if !slices.Contains(distinct, id) {
			distinct = append(distinct, id)
		}
	}
	table := 1
	for table < max(int(float32(initial)/0.75)+1, 16) {
		table <<= 1
	}
	for n := 1; n <= len(distinct); n++ {
		if float64(n) > 0.75*float64(table) {
			table <<= 1
		}
	}
	bucket := func(id int32) int {
		h := uint32(id)
		return int((h ^ h>>16) & uint32(table-1))
	}
	slices.SortStableFunc(distinct, func(x, y int32) int { return bucket(x) - bucket(y) })
	return distinct
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
	elr, lastKnown := c.EligibleLeaderReplicas, c.LastKnownElr
	if elr == nil {
		elr = p.Elr
	}
	if lastKnown == nil {
		lastKnown = p.LastKnownElr
	}
	return Event{Kind: EventPartitionChanged, Topic: topic, TopicID: c.TopicID, Partition: c.PartitionID,
		Leader: leader, Isr: slices.Clone(isr), Elr: slices.Clone(elr), LastKnownElr: slices.Clone(lastKnown), Reason: reason}
}

// uncleanEvent reports an unclean election once it commits.
func uncleanEvent(topic string, c *record.PartitionChangeRecord, p *image.PartitionRegistration, reason string) Event {
	return Event{Kind: EventUncleanLeaderElection, Topic: topic, TopicID: c.TopicID, Partition: c.PartitionID,
		Leader: c.Leader, Isr: slices.Clone(c.Isr), LastIsr: slices.Clone(p.Isr), Reason: reason}
}

// changeEvents are the events of a change: an unclean election is told
// as such before the change itself, and an election from the ELR says so.
func changeEvents(topic string, c *record.PartitionChangeRecord, p *image.PartitionRegistration, how elected, reason string) []Event {
	switch how {
	case electedUnclean:
		return []Event{uncleanEvent(topic, c, p, reason), changeEvent(topic, c, p, reason+", unclean election")}
	case electedLastKnown:
		return []Event{uncleanEvent(topic, c, p, reason+"; ISR and ELR empty, the last known leader"),
			changeEvent(topic, c, p, reason+", the last known leader (unclean)")}
	case electedFromElr:
		ev := changeEvent(topic, c, p, reason+", elected from the ELR")
		ev.FromElr = true
		return []Event{ev}
	}
	return []Event{changeEvent(topic, c, p, reason)}
}

// changeFor starts a change of topic's partition pid with the topic's
// election and the cluster's ELR rules (the builder Kafka's
// ReplicationControlManager makes for each partition it changes).
func (c *QuorumController) changeFor(img *image.MetadataImage, t *image.TopicImage, pid int32, p *image.PartitionRegistration,
	targetIsr []int32, acceptable func(int32) bool) *changeBuilder {
	b := newChange(t.ID(), pid, p, targetIsr, acceptable, c.electionFor(img, t.Name()), c.versions(img))
	b.elr = elrEnabled(img)
	b.minIsr = c.effectiveMinIsr(img, t)
	return b
}

// removeBrokerFromIsrs is Kafka's generateLeaderAndIsrUpdates with a broker
// to remove (handleBrokerFenced, handleBrokerInControlledShutdown, a clean
// shutdown): every partition whose ISR holds it loses it, and those it led
// elect another leader. With ELR off a last member stays; on, it moves to
// the ELR when the ISR falls below min ISR.
func (c *QuorumController) removeBrokerFromIsrs(img *image.MetadataImage, id int32, reason string) ([]record.Record, []Event) {
	ok := acceptableLeader(img, id, -1)
	return c.changeEach(img, reason, func(t *image.TopicImage, pid int32, p *image.PartitionRegistration) *changeBuilder {
		if !p.InIsr(id) && p.Leader != id {
			return nil
		}
		return c.changeFor(img, t, pid, p, without(p.Isr, id), leaderAcceptor(img, p, ok))
	})
}

// removeUncleanShutdown is Kafka's handleBrokerShutdown for an unclean
// shutdown with ELR on: the broker leaves every ISR and every ELR, since
// its log may have lost what it acknowledged, and may not lead.
func (c *QuorumController) removeUncleanShutdown(img *image.MetadataImage, id int32, reason string) ([]record.Record, []Event) {
	ok := acceptableLeader(img, id, -1)
	return c.changeEach(img, reason, func(t *image.TopicImage, pid int32, p *image.PartitionRegistration) *changeBuilder {
		if !p.InIsr(id) && !slices.Contains(p.Elr, id) {
			return nil
		}
		b := c.changeFor(img, t, pid, p, without(p.Isr, id), leaderAcceptor(img, p, ok))
		b.uncleanShutdown = id
		return b
	})
}

// electLeaderless elects leaders, now that broker id is acceptable, for the
// partitions that have none (Kafka's handleBrokerUnfenced over
// partitionsWithNoLeader): from the ISR, from the ELR when the ISR is
// empty, the last known leader when both are, or, where the topic allows
// an unclean election, from the other replicas.
func (c *QuorumController) electLeaderless(img *image.MetadataImage, id int32, reason string) ([]record.Record, []Event) {
	ok := acceptableLeader(img, -1, id)
	return c.changeEach(img, reason, func(t *image.TopicImage, pid int32, p *image.PartitionRegistration) *changeBuilder {
		if p.HasLeader() || !p.HasReplica(id) {
			return nil
		}
		return c.changeFor(img, t, pid, p, p.Isr, leaderAcceptor(img, p, ok))
	})
}

// changeEach builds, in topic name and partition order, the change
// change gives for each partition (nil: none), and the events of those
// that change something.
func (c *QuorumController) changeEach(img *image.MetadataImage, reason string,
	change func(t *image.TopicImage, pid int32, p *image.PartitionRegistration) *changeBuilder) ([]record.Record, []Event) {
	var recs []record.Record
	var evs []Event
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, pid := range t.PartitionIDs() {
			p := t.Partition(pid)
			b := change(t, pid, p)
			if b == nil {
				continue
			}
			if ch, how := b.build(); ch != nil {
				recs = append(recs, ch)
				evs = append(evs, changeEvents(name, ch, p, how, reason)...)
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
