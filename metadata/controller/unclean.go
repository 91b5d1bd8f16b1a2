package controller

import (
	"strings"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// uncleanLeaderElectionEnable is the topic config (and cluster default)
// that allows electing a leader from outside the ISR.
const uncleanLeaderElectionEnable = "unclean.leader.election.enable"

// maxElectionsPerImbalance bounds the unclean elections of one periodic
// run, as Kafka's ReplicationControlManager does; the next run goes on.
const maxElectionsPerImbalance = 1000

// uncleanAllowed is Kafka's uncleanLeaderElectionEnabledForTopic: the
// topic's config, else the dynamic cluster default, else the controller's
// own; a value is true only if it reads "true" in any case, as Java's
// Boolean.parseBoolean.
func (c *QuorumController) uncleanAllowed(img *image.MetadataImage, topic string) bool {
	for _, res := range []image.ConfigResource{{Type: record.ResourceTopic, Name: topic}, {Type: record.ResourceBroker}} {
		if cfg := img.Configs().Resource(res); cfg != nil {
			if v, ok := cfg.Get(uncleanLeaderElectionEnable); ok {
				return strings.EqualFold(v, "true")
			}
		}
	}
	return c.cfg.UncleanLeaderElection
}

// electionFor is the election a change of topic's partitions may use.
func (c *QuorumController) electionFor(img *image.MetadataImage, topic string) election {
	if c.uncleanAllowed(img, topic) {
		return electionUnclean
	}
	return electionOnline
}

// maybeElectUncleanLeaders is Kafka's electUnclean periodic task
// (maybeTriggerUncleanLeaderElectionForLeaderlessPartitions): every
// leaderless partition whose topic allows it gets the first live replica
// as leader, at most maxElectionsPerImbalance a run. It is what elects a
// leader after the config is turned on, since a config change triggers
// no election by itself in Kafka's KRaft controller.
func (c *QuorumController) maybeElectUncleanLeaders() {
	img := c.st.working
	ok := acceptableLeader(img, -1, -1)
	var recs []record.Record
	var evs []Event
	for _, name := range img.Topics().Names() {
		if len(recs) >= maxElectionsPerImbalance {
			break
		}
		t := img.Topics().TopicByName(name)
		allowed := -1 // asked once per topic, and only if it has a leaderless partition
		for _, pid := range t.PartitionIDs() {
			p := t.Partition(pid)
			if p.HasLeader() {
				continue
			}
			if allowed < 0 {
				allowed = 0
				if c.uncleanAllowed(img, name) {
					allowed = 1
				}
			}
			if allowed == 0 {
				break
			}
			b := c.changeFor(img, t, pid, p, p.Isr, leaderAcceptor(img, p, ok))
			b.election = electionUnclean
			ch, how := b.build()
			if ch == nil {
				continue
			}
			c.log.Info("triggering unclean leader election for offline partition", "topic", name, "partition", pid,
				"isr", p.Isr, "replicas", p.Replicas, "leader", ch.Leader, "unclean", how.unclean())
			recs = append(recs, ch)
			evs = append(evs, changeEvents(name, ch, p, how, "no ISR member alive; the topic allows unclean.leader.election.enable")...)
			if len(recs) >= maxElectionsPerImbalance {
				break
			}
		}
	}
	if len(recs) == 0 {
		return
	}
	if err := c.write(recs, evs, nil); err != nil {
		c.log.Error("cannot write unclean leader elections", "err", err)
	}
}
