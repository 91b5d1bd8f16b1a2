package controller

import (
	"fmt"
	"strconv"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// leaderChanged follows the quorum's leader: the controller claims the
// leadership when its node leads, and renounces it otherwise.
func (c *QuorumController) leaderChanged(l raft.LeaderAndEpoch) {
	st := &c.st
	if l.Epoch < st.leader.Epoch {
		return
	}
	st.leader = l
	if st.active && (l.LeaderID != c.cfg.NodeID || l.Epoch != st.epoch) {
		c.renounce(fmt.Sprintf("the quorum's leader is now %d in epoch %d", l.LeaderID, l.Epoch))
	}
	if l.LeaderID == c.cfg.NodeID && !st.active && !st.closing {
		c.claim(l.Epoch)
	}
}

// claim becomes active in epoch (Kafka's QuorumController.claim): the
// controller serves from its committed image at once; an image with no
// metadata.version is bootstrapped first (Kafka's ActivationRecordsGenerator
// with BootstrapMetadata at the release's latest production version).
func (c *QuorumController) claim(epoch int32) {
	st := &c.st
	now := c.now()
	st.active, st.epoch, st.claimedAt, st.ready = true, epoch, now, false
	st.working = st.committed
	st.nextOffset = st.committed.Provenance().LastContainedOffset + 1
	st.nextNoOp = now.Add(c.cfg.NoOpInterval)
	st.nextFenceScan = now.Add(c.tickEvery)
	c.activeEpoch.Store(int64(epoch))
	c.resetHeartbeats(now)
	c.log.Info("controller activated", "epoch", epoch, "offset", st.committed.Provenance().LastContainedOffset)
	if _, ok := st.committed.Features().MetadataVersion(); ok {
		c.ready()
		return
	}
	recs := c.bootstrapRecords()
	err := c.write(recs, nil, func(ok bool, _ int64) {
		if ok && c.st.active && c.st.epoch == epoch {
			c.ready()
		}
	})
	if err != nil {
		c.renounce(fmt.Sprintf("cannot write the bootstrap records: %v", err))
	}
}

// bootstrapRecords are ActivationRecordsGenerator.recordsForEmptyLog's
// records for what kafka-storage format would have chosen:
// metadata.version, then eligible.leader.replicas.version when its level
// is above 0 (format leaves a level-0 feature out) together with the
// cluster-level min.insync.replicas that KIP-966 wants set, from the
// controller's own configuration.
func (c *QuorumController) bootstrapRecords() []record.Record {
	recs := []record.Record{&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: bootstrapMetadataVersion}}
	if level := c.cfg.EligibleLeaderReplicasVersion; level > 0 {
		minIsr := strconv.Itoa(c.minIsrDefault())
		recs = append(recs,
			&record.FeatureLevelRecord{Name: record.EligibleLeaderReplicasFeature, FeatureLevel: level},
			&record.ConfigRecord{ResourceType: record.ResourceBroker, Name: minInsyncReplicas, Value: &minIsr})
	}
	return recs
}

// ready reports the activation done.
func (c *QuorumController) ready() {
	c.st.ready = true
	took := c.now().Sub(c.st.claimedAt)
	c.log.Info("controller ready", "epoch", c.st.epoch, "took", took)
	c.emit(Event{Kind: EventActivated, Took: took})
}
