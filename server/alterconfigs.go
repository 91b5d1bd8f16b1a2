package server

import (
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// incrementalAlterConfigsForward forwards IncrementalAlterConfigs (v0–1,
// what Kafka 4.4 serves) to the active controller, as Kafka's broker
// forwards every resource but BROKER_LOGGER; kraftlab's controller answers
// that one INVALID_REQUEST.
var incrementalAlterConfigsForward = forwardedAPI{
	api: wire.APIRange{Key: kmsg.IncrementalAlterConfigs.Int16(), MinVersion: 0, MaxVersion: 1},
	failed: func(r kmsg.Request, code int16) kmsg.Response {
		resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
		for _, res := range r.(*kmsg.IncrementalAlterConfigsRequest).Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, code
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	},
	notController: func(r kmsg.Response) bool {
		for _, res := range r.(*kmsg.IncrementalAlterConfigsResponse).Resources {
			if res.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	},
}
