package server

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// alterPartitionVersion is the AlterPartition version a broker sends: v3
// names topics by id and each ISR member with its broker epoch, the
// version Kafka 4.4 sends and the quorum controller's highest.
const alterPartitionVersion = 3

// runISR asks the active controller for the ISR changes the leaders
// propose: every replica.lag.time.max.ms/2, as Kafka's isr-expiration
// task, and after a follower's fetch may have caught it up. A change
// whose send failed is sent again on the next round.
func (rm *ReplicaManager) runISR() {
	defer rm.wg.Done()
	tick := rm.clock.NewTicker(rm.lagTimeMax / 2)
	defer tick.Stop()
	for {
		select {
		case <-rm.ctx.Done():
			return
		case <-tick.C:
		case <-rm.isrWake:
		}
		rm.maybeChangeISR(rm.clock.Now())
	}
}

// maybeChangeISR collects the proposals of every leader and those still
// unanswered into one AlterPartition, and applies the answer.
func (rm *ReplicaManager) maybeChangeISR(now time.Time) {
	rm.mu.Lock()
	for _, h := range rm.hosted {
		if prop, ok := h.p.ISRChange(now); ok {
			rm.inflight[h.p] = prop
		}
	}
	sending := make(map[*partition.Partition]partition.Proposal, len(rm.inflight))
	for p, prop := range rm.inflight {
		// A new leader epoch or a metadata update dropped the change.
		if pend := p.State().Pending; pend == nil || pend.LeaderEpoch != prop.LeaderEpoch || pend.PartitionEpoch != prop.PartitionEpoch {
			delete(rm.inflight, p)
			continue
		}
		sending[p] = prop
	}
	rm.mu.Unlock()
	if len(sending) == 0 {
		return
	}
	req, order := rm.alterPartitionRequest(sending)
	ctx, cancel := rm.clock.WithTimeout(rm.ctx, 5*time.Second)
	resp, err := rm.ctl.send(ctx, rm.controller(), req)
	cancel()
	if err != nil {
		rm.log.Debug("AlterPartition not sent", "err", err)
		return
	}
	ar := resp.(*kmsg.AlterPartitionResponse)
	if ar.ErrorCode != 0 {
		// NOT_CONTROLLER or STALE_BROKER_EPOCH: the changes stay in flight
		// and go again, to the controller then known.
		rm.log.Debug("AlterPartition refused", "err", kerr.ErrorForCode(ar.ErrorCode))
		return
	}
	rm.applyAlterPartition(ar, order, now)
}

func (rm *ReplicaManager) alterPartitionRequest(sending map[*partition.Partition]partition.Proposal) (*kmsg.AlterPartitionRequest, map[isrKey]*partition.Partition) {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = alterPartitionVersion
	req.BrokerID, req.BrokerEpoch = rm.id, rm.brokerEpoch()
	topics := map[[16]byte]int{}
	order := map[isrKey]*partition.Partition{}
	for p, prop := range sending {
		id := p.TopicID()
		i, ok := topics[id]
		if !ok {
			i = len(req.Topics)
			topics[id] = i
			t := kmsg.NewAlterPartitionRequestTopic()
			t.TopicID = id
			req.Topics = append(req.Topics, t)
		}
		// Each member with the broker epoch its fetches named (Kafka's
		// addBrokerEpochToIsr).
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, prop.AlterPartition(p.Index(), rm.id, req.BrokerEpoch))
		order[isrKey{id, p.Index()}] = p
	}
	return req, order
}

type isrKey struct {
	topicID   [16]byte
	partition int32
}

// applyAlterPartition commits what the controller decided (Kafka's
// Partition.handleAlterPartitionUpdate): the new ISR and partition epoch,
// or, refused, the change is forgotten and the leader may propose again
// from the metadata it then has.
func (rm *ReplicaManager) applyAlterPartition(ar *kmsg.AlterPartitionResponse, sent map[isrKey]*partition.Partition, now time.Time) {
	for _, t := range ar.Topics {
		for _, rp := range t.Partitions {
			p := sent[isrKey{t.TopidID, rp.Partition}]
			if p == nil {
				continue
			}
			if rp.ErrorCode != 0 {
				// A refusal that may follow the change's own lost answer
				// keeps it pending until the metadata says; one Kafka
				// does not expect here is sent again.
				rm.log.Info("ISR change refused", "partition", p.Name(), "err", kerr.ErrorForCode(rp.ErrorCode))
				if !p.ISRChangeRefused(rp.ErrorCode) {
					rm.mu.Lock()
					delete(rm.inflight, p)
					rm.mu.Unlock()
				}
				continue
			}
			rm.mu.Lock()
			delete(rm.inflight, p)
			rm.mu.Unlock()
			moved, err := p.ApplyPartitionState(rp.ISR, rp.PartitionEpoch, now)
			if err != nil {
				// The metadata moved past the answer; what is still pending
				// belongs to no request any more.
				rm.log.Debug("ISR change answer not applied", "partition", p.Name(), "err", err)
				if p.State().Pending != nil {
					p.AbortISRChange()
				}
				continue
			}
			rm.log.Info("ISR changed", "partition", p.Name(), "isr", rp.ISR, "partitionEpoch", rp.PartitionEpoch)
			if moved {
				rm.produces.CheckAndComplete(p)
				rm.fetches.CheckAndComplete(p)
			}
		}
	}
}
