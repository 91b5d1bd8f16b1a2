package cluster

import (
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/controller"
)

// controllerMetricsView copies the controller's metrics that the view
// shows. UncleanLeaderElectionsPerSec is not among them yet: the view
// (cluster/view) has no field for it.
func controllerMetricsView(m controller.Metrics) view.ControllerMetrics {
	return view.ControllerMetrics{
		ActiveControllerCount:        m.ActiveControllerCount,
		ActiveBrokerCount:            m.ActiveBrokerCount,
		FencedBrokerCount:            m.FencedBrokerCount,
		GlobalTopicCount:             m.GlobalTopicCount,
		GlobalPartitionCount:         m.GlobalPartitionCount,
		OfflinePartitionsCount:       m.OfflinePartitionsCount,
		LastAppliedRecordOffset:      m.LastAppliedRecordOffset,
		LastCommittedRecordOffset:    m.LastCommittedRecordOffset,
		TimedOutBrokerHeartbeatCount: m.TimedOutBrokerHeartbeatCount,
	}
}
