package controller

import (
	"time"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// Metrics are the controller's gauges and counters, by the names of Kafka's
// kafka.controller:type=KafkaController metrics.
type Metrics struct {
	// ActiveControllerCount is 1 while the controller is active, else 0.
	ActiveControllerCount int `json:"ActiveControllerCount"`
	// ActiveBrokerCount and FencedBrokerCount count the registered
	// brokers that are unfenced and fenced, in the working image.
	ActiveBrokerCount int `json:"ActiveBrokerCount"`
	FencedBrokerCount int `json:"FencedBrokerCount"`
	// GlobalTopicCount and GlobalPartitionCount count topics and
	// partitions; OfflinePartitionsCount the partitions without a leader.
	GlobalTopicCount       int `json:"GlobalTopicCount"`
	GlobalPartitionCount   int `json:"GlobalPartitionCount"`
	OfflinePartitionsCount int `json:"OfflinePartitionsCount"`
	// LastAppliedRecordOffset is the offset of the committed image.
	LastAppliedRecordOffset int64 `json:"LastAppliedRecordOffset"`
	// LastCommittedRecordOffset is the highest offset known committed,
	// from the committed image or the controller's own commits.
	LastCommittedRecordOffset int64 `json:"LastCommittedRecordOffset"`
	// TimedOutBrokerHeartbeatCount counts brokers fenced because their
	// session timed out, since the controller started.
	TimedOutBrokerHeartbeatCount int64 `json:"TimedOutBrokerHeartbeatCount"`
	// UncleanLeaderElectionsPerSec counts the unclean leader elections
	// this controller committed since it started: the count of Kafka's
	// kafka.controller:type=ControllerStats meter of that name.
	UncleanLeaderElectionsPerSec int64 `json:"UncleanLeaderElectionsPerSec"`
	// ElectionFromEligibleLeaderReplicasPerSec counts the leaders this
	// controller elected from an ELR since it started: the count of
	// Kafka's ControllerStats meter of that name.
	ElectionFromEligibleLeaderReplicasPerSec int64 `json:"ElectionFromEligibleLeaderReplicasPerSec"`
}

// BrokerHeartbeatState is what the active controller knows of one
// registered broker's session.
type BrokerHeartbeatState struct {
	ID    int32 `json:"id"`
	Epoch int64 `json:"epoch"`
	// LastHeartbeat is when the active controller last heard from it (or
	// started its session), zero when the controller is not active.
	LastHeartbeat        time.Time `json:"lastHeartbeat"`
	Fenced               bool      `json:"fenced"`
	CaughtUp             bool      `json:"caughtUp"`
	InControlledShutdown bool      `json:"inControlledShutdown"`
	// MetadataOffset is the offset it last reported applied, -1 if none.
	MetadataOffset int64 `json:"metadataOffset"`
}

// Metrics returns the controller's metrics as of its last event.
func (c *QuorumController) Metrics() Metrics { return *c.metrics.Load() }

// Brokers returns every registered broker's state, by id, as of the
// controller's last event.
func (c *QuorumController) Brokers() []BrokerHeartbeatState {
	return append([]BrokerHeartbeatState(nil), *c.brokerViews.Load()...)
}

// publish refreshes what the read methods return; it runs on the loop
// after each round of events.
func (c *QuorumController) publish() {
	st := &c.st
	img := st.working
	m := Metrics{
		LastAppliedRecordOffset:                  st.committed.Provenance().LastContainedOffset,
		LastCommittedRecordOffset:                st.lastCommitted,
		TimedOutBrokerHeartbeatCount:             st.timedOut,
		UncleanLeaderElectionsPerSec:             st.uncleanElections,
		ElectionFromEligibleLeaderReplicasPerSec: st.elrElections,
		GlobalTopicCount:                         img.Topics().Len(),
	}
	if st.active {
		m.ActiveControllerCount = 1
	}
	views := make([]BrokerHeartbeatState, 0, img.Cluster().Len())
	for _, id := range img.Cluster().BrokerIDs() {
		b := img.Cluster().Broker(id)
		if b.Fenced {
			m.FencedBrokerCount++
		} else {
			m.ActiveBrokerCount++
		}
		v := BrokerHeartbeatState{ID: id, Epoch: b.Epoch, Fenced: b.Fenced, InControlledShutdown: b.InControlledShutdown, MetadataOffset: -1}
		if hb := st.heartbeats[id]; hb != nil {
			v.LastHeartbeat, v.MetadataOffset = hb.lastContact, hb.metadataOffset
			v.CaughtUp = hb.metadataOffset >= 0 && hb.metadataOffset >= hb.registrationOffset
		}
		views = append(views, v)
	}
	if st.counted != img.Topics() {
		// Counted again only when the topics change: a scan of every
		// partition (the image keeps no count of leaderless ones).
		st.counted, st.partitions, st.offline = img.Topics(), 0, 0
		for _, t := range img.Topics().Topics() {
			for _, p := range t.Partitions() {
				st.partitions++
				if p.Leader == record.NoLeader {
					st.offline++
				}
			}
		}
	}
	m.GlobalPartitionCount, m.OfflinePartitionsCount = st.partitions, st.offline
	c.metrics.Store(&m)
	c.brokerViews.Store(&views)
}

// writeNoOp appends a NoOpRecord so that the high watermark and every
// observer's applied offset keep moving while nothing changes (Kafka's
// writeNoOpRecord task).
func (c *QuorumController) writeNoOp() {
	if err := c.write([]record.Record{&record.NoOpRecord{}}, nil, nil); err != nil {
		c.log.Error("cannot write a no-op record", "err", err)
	}
}
