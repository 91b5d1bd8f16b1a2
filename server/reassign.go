package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// alterReassignmentsForward forwards AlterPartitionReassignments (v0–1,
// what Kafka 4.4 serves; kafka-reassign-partitions --execute and --cancel
// send it) to the active controller, as Kafka's broker does.
var alterReassignmentsForward = forwardedAPI{
	api: wire.APIRange{Key: kmsg.AlterPartitionAssignments.Int16(), MinVersion: 0, MaxVersion: 1},
	failed: func(r kmsg.Request, code int16) kmsg.Response {
		return controller.AlterReassignmentsError(r.(*kmsg.AlterPartitionAssignmentsRequest), code, nil)
	},
	notController: func(r kmsg.Response) bool {
		resp := r.(*kmsg.AlterPartitionAssignmentsResponse)
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

// listReassignmentsForward forwards ListPartitionReassignments (v0;
// kafka-reassign-partitions --list and --verify) to the active
// controller.
var listReassignmentsForward = forwardedAPI{
	api: wire.APIRange{Key: kmsg.ListPartitionReassignments.Int16(), MinVersion: 0, MaxVersion: 0},
	failed: func(r kmsg.Request, code int16) kmsg.Response {
		return controller.ListReassignmentsError(r.(*kmsg.ListPartitionReassignmentsRequest), code, nil)
	},
	notController: func(r kmsg.Response) bool {
		return r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode == kerr.NotController.Code
	},
}
