package controller

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// The election types of ElectLeaders (Kafka's ElectionType).
const (
	electionTypePreferred int8 = 0
	electionTypeUnclean   int8 = 1
)

// electLeaders is Kafka's ReplicationControlManager.electLeaders, what
// kafka-leader-election sends: PREFERRED makes each partition's preferred
// replica (its first) the leader when it is in the ISR and acceptable;
// UNCLEAN elects a leader for a leaderless partition, from outside the ISR
// if need be. ELECTION_NOT_NEEDED where the leader is already the one
// asked for; with no partitions named, every partition, leaving out those.
func (c *QuorumController) electLeaders(r *kmsg.ElectLeadersRequest) outcome {
	resp := kmsg.NewPtrElectLeadersResponse()
	o := outcome{resp: resp}
	img := c.st.working
	var el election
	switch r.ElectionType {
	case electionTypePreferred:
		el = electionPreferred
	case electionTypeUnclean:
		el = electionUnclean
	default:
		resp.ErrorCode = kerr.InvalidRequest.Code
		return o
	}
	pending := image.NewMetadataDelta(img) // a partition named twice sees its first election
	elect := func(name string, pid int32) (int16, string) {
		t := img.Topics().TopicByName(name)
		if t == nil || t.Partition(pid) == nil {
			return kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("No such partition as %s-%d", name, pid)
		}
		p := t.Partition(pid)
		if td := pending.TopicsDelta(); td != nil && td.Changed(t.ID()) != nil {
			p = td.Changed(t.ID()).Partition(pid)
		}
		if (el == electionPreferred && p.HasLeader() && len(p.Replicas) > 0 && p.Leader == p.Replicas[0]) ||
			(el == electionUnclean && p.HasLeader()) {
			return kerr.ElectionNotNeeded.Code, ""
		}
		b := c.changeFor(img, t, pid, p, p.Isr, leaderAcceptor(img, p, acceptableLeader(img, -1, -1)))
		b.election = el
		ch, how := b.build()
		if ch == nil || ch.Leader == record.NoLeaderChange {
			if el == electionPreferred {
				return kerr.PreferredLeaderNotAvailable.Code, ""
			}
			return kerr.EligibleLeadersNotAvailable.Code, ""
		}
		if err := pending.Replay(ch); err != nil {
			return kerr.UnknownServerError.Code, err.Error()
		}
		reason := "ElectLeaders (preferred)"
		if el == electionUnclean {
			reason = "ElectLeaders (unclean)"
		}
		o.records = append(o.records, ch)
		o.events = append(o.events, changeEvents(name, ch, p, how, reason)...)
		return 0, ""
	}
	result := func(topic string) kmsg.ElectLeadersResponseTopic {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = topic
		return rt
	}
	partResult := func(pid int32, code int16, msg string) kmsg.ElectLeadersResponseTopicPartition {
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode = pid, code
		if msg != "" {
			rp.ErrorMessage = &msg
		}
		return rp
	}
	if r.Topics == nil {
		for _, name := range img.Topics().Names() {
			rt := result(name)
			for _, pid := range img.Topics().TopicByName(name).PartitionIDs() {
				if code, msg := elect(name, pid); code != kerr.ElectionNotNeeded.Code {
					rt.Partitions = append(rt.Partitions, partResult(pid, code, msg))
				}
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return o
	}
	for _, t := range r.Topics {
		rt := result(t.Topic)
		for _, pid := range t.Partitions {
			code, msg := elect(t.Topic, pid)
			rt.Partitions = append(rt.Partitions, partResult(pid, code, msg))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return o
}

// maybeBalanceLeaders is Kafka's maybeBalancePartitionLeaders, the
// periodic task of auto.leader.rebalance.enable: every partition whose
// leader is not its preferred replica gets a preferred election (which
// changes nothing where the preferred replica may not lead), at most
// maxElectionsPerImbalance a run.
func (c *QuorumController) maybeBalanceLeaders() {
	img := c.st.working
	ok := acceptableLeader(img, -1, -1)
	var recs []record.Record
	var evs []Event
	for _, name := range img.Topics().Names() {
		t := img.Topics().TopicByName(name)
		for _, pid := range t.PartitionIDs() {
			if len(recs) >= maxElectionsPerImbalance {
				break
			}
			p := t.Partition(pid)
			if !p.HasLeader() || len(p.Replicas) == 0 || p.Leader == p.Replicas[0] {
				continue
			}
			b := c.changeFor(img, t, pid, p, p.Isr, leaderAcceptor(img, p, ok))
			b.election = electionPreferred
			ch, _ := b.build()
			if ch == nil || ch.Leader == record.NoLeaderChange {
				continue
			}
			recs = append(recs, ch)
			evs = append(evs, changeEvent(name, ch, p, "preferred leader election (auto.leader.rebalance.enable)"))
		}
	}
	if len(recs) == 0 {
		return
	}
	c.log.Info("electing preferred leaders", "partitions", len(recs))
	if err := c.write(recs, evs, nil); err != nil {
		c.log.Error("cannot write preferred leader elections", "err", err)
	}
}

// ElectLeadersError is the answer to r that says code for it all: at the
// top (v1+) and for every partition it names. A broker that forwards
// ElectLeaders answers with it too when no controller answered.
func ElectLeadersError(r *kmsg.ElectLeadersRequest, code int16, msg *string) *kmsg.ElectLeadersResponse {
	resp := kmsg.NewPtrElectLeadersResponse()
	resp.ErrorCode = code
	for _, t := range r.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, pid := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = pid, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
