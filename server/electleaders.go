package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// electLeadersForward forwards ElectLeaders (v0–2, what Kafka 4.4 serves;
// kafka-leader-election's) to the active controller, as Kafka's broker
// does.
var electLeadersForward = forwardedAPI{
	api: wire.APIRange{Key: kmsg.ElectLeaders.Int16(), MinVersion: 0, MaxVersion: 2},
	failed: func(r kmsg.Request, code int16) kmsg.Response {
		return controller.ElectLeadersError(r.(*kmsg.ElectLeadersRequest), code, nil)
	},
	notController: func(r kmsg.Response) bool {
		resp := r.(*kmsg.ElectLeadersResponse)
		if resp.ErrorCode == kerr.NotController.Code {
			return true
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == kerr.NotController.Code {
					return true
				}
			}
		}
		return false
	},
}
