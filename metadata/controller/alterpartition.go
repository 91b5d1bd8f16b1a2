package controller

import (
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// isrMember is one broker of a proposed ISR, with the broker epoch the
// leader saw (-1 before AlterPartition v3, which does not carry it).
type isrMember struct {
	id    int32
	epoch int64
}

// alterPartition is Kafka's ReplicationControlManager.alterPartition: a
// partition leader proposes a new ISR; the controller checks it against
// the partition's epochs and the brokers' states and writes the change.
func (c *QuorumController) alterPartition(r *kmsg.AlterPartitionRequest) outcome {
	resp := kmsg.NewPtrAlterPartitionResponse()
	img := c.st.working
	o := outcome{resp: resp}
	if b := img.Cluster().Broker(r.BrokerID); b == nil || b.Epoch != r.BrokerEpoch {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return o
	}
	pending := image.NewMetadataDelta(img) // so two changes of one partition in a request see each other
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.TopidID = t.TopicID
		topic := img.Topics().Topic(record.Uuid(t.TopicID))
		for _, pd := range t.Partitions {
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = pd.Partition
			if topic == nil {
				rp.ErrorCode = kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			var p *image.PartitionRegistration
			if td := pending.TopicsDelta(); td != nil && td.Changed(topic.ID()) != nil {
				p = td.Changed(topic.ID()).Partition(pd.Partition)
			} else {
				p = topic.Partition(pd.Partition)
			}
			members := make([]isrMember, 0, len(pd.NewISR)+len(pd.NewEpochISR))
			for _, id := range pd.NewISR {
				members = append(members, isrMember{id: id, epoch: -1})
			}
			for _, m := range pd.NewEpochISR {
				members = append(members, isrMember{id: m.BrokerID, epoch: m.BrokerEpoch})
			}
			code := validateAlterPartition(img, r.BrokerID, p, pd, members)
			if code != 0 {
				c.log.Info("refusing AlterPartition", "broker", r.BrokerID, "topic", topic.Name(), "partition", pd.Partition,
					"error", kerr.ErrorForCode(code).Error())
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			isr := make([]int32, len(members))
			for i, m := range members {
				isr[i] = m.id
			}
			// The sender leads and is in its ISR, so Kafka's unclean
			// fallback never applies here; with ELR on, an ISR shrinking
			// below min ISR keeps the members it loses in the ELR.
			b := c.changeFor(img, topic, pd.Partition, p, isr, leaderAcceptor(img, p, acceptableLeader(img, -1, -1)))
			b.recovery = pd.LeaderRecoveryState
			ch, _ := b.build()
			after := p
			if ch != nil {
				merged, err := p.Merge(ch)
				if err == nil {
					err = pending.Replay(ch)
				}
				if err != nil {
					rp.ErrorCode = kerr.UnknownServerError.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				after = merged
				o.records = append(o.records, ch)
				reason := fmt.Sprintf("AlterPartition from broker %d", r.BrokerID)
				if reassigning(p) && !reassigning(merged) {
					reason += " completed the reassignment"
				}
				o.events = append(o.events, changeEvent(topic.Name(), ch, p, reason))
				if ch.Leader != record.NoLeaderChange && ch.Leader != r.BrokerID {
					// Completing a reassignment took the sender's
					// leadership: it must learn the new metadata
					// before it proposes again, though the change is
					// written.
					rp.ErrorCode = kerr.NewLeaderElected.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
			}
			rp.LeaderID, rp.LeaderEpoch, rp.PartitionEpoch = after.Leader, after.LeaderEpoch, after.PartitionEpoch
			rp.ISR, rp.LeaderRecoveryState = slices.Clone(after.Isr), after.LeaderRecoveryState
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return o
}

// validateAlterPartition is Kafka's validateAlterPartitionData, in its order.
func validateAlterPartition(img *image.MetadataImage, broker int32, p *image.PartitionRegistration,
	pd kmsg.AlterPartitionRequestTopicPartition, members []isrMember) int16 {
	switch {
	case p == nil:
		return kerr.UnknownTopicOrPartition.Code
	case pd.LeaderEpoch > p.LeaderEpoch, pd.PartitionEpoch > p.PartitionEpoch:
		// The leader knows a newer partition: this controller is likely
		// no longer the active one.
		return kerr.NotController.Code
	case pd.LeaderEpoch < p.LeaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	case broker != p.Leader:
		return kerr.InvalidRequest.Code
	case pd.PartitionEpoch < p.PartitionEpoch:
		return kerr.InvalidUpdateVersion.Code
	}
	seen := map[int32]bool{}
	for _, m := range members {
		if seen[m.id] || !p.HasReplica(m.id) {
			return kerr.InvalidRequest.Code // an ISR with a duplicate or a non-replica
		}
		seen[m.id] = true
	}
	if !seen[p.Leader] {
		return kerr.InvalidRequest.Code // the ISR must hold its leader
	}
	switch pd.LeaderRecoveryState {
	case record.LeaderRecovered:
	case record.LeaderRecovering:
		if len(members) > 1 || p.LeaderRecoveryState == record.LeaderRecovered {
			return kerr.InvalidRequest.Code
		}
	default:
		return kerr.InvalidRequest.Code
	}
	for _, m := range members {
		b := img.Cluster().Broker(m.id)
		if b == nil || b.Fenced || b.InControlledShutdown || (m.epoch != -1 && m.epoch != b.Epoch) {
			return kerr.IneligibleReplica.Code
		}
		if !p.InIsr(m.id) && !p.ReplicaOnline(m.id, b) {
			// Beyond Kafka: a replica in a lost directory has not
			// fetched back what its files lost.
			return kerr.IneligibleReplica.Code
		}
	}
	return 0
}
