package engine

import (
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/controller"
)

// controllerMetricsView copies the controller's metrics that the view
// shows.
func controllerMetricsView(m controller.Metrics) view.ControllerMetrics {
	return view.ControllerMetrics{
		ActiveControllerCount:                    m.ActiveControllerCount,
		ActiveBrokerCount:                        m.ActiveBrokerCount,
		FencedBrokerCount:                        m.FencedBrokerCount,
		GlobalTopicCount:                         m.GlobalTopicCount,
		GlobalPartitionCount:                     m.GlobalPartitionCount,
		OfflinePartitionsCount:                   m.OfflinePartitionsCount,
		LastAppliedRecordOffset:                  m.LastAppliedRecordOffset,
		LastCommittedRecordOffset:                m.LastCommittedRecordOffset,
		TimedOutBrokerHeartbeatCount:             m.TimedOutBrokerHeartbeatCount,
		UncleanLeaderElectionsPerSec:             m.UncleanLeaderElectionsPerSec,
		ElectionFromEligibleLeaderReplicasPerSec: m.ElectionFromEligibleLeaderReplicasPerSec,
	}
}
