package server

import (
	"fmt"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// initProducerIDVersions are the InitProducerId versions Kafka 4.4 serves
// (v6, two-phase commit, is still unstable there) and kmsg encodes.
var initProducerIDVersions = wire.APIRange{Key: kmsg.InitProducerID.Int16(), MinVersion: 0, MaxVersion: 5}

// register serves InitProducerId on mux.
func (m *producerIDManager) register(mux *wire.Mux) error {
	if err := mux.Handle(initProducerIDVersions, wire.HandlerFunc(m.handleInitProducerID)); err != nil {
		return fmt.Errorf("producer id manager: %w", err)
	}
	return nil
}

func (m *producerIDManager) handleInitProducerID(req *wire.Request) {
	req.Respond(m.initProducerID(req.Body.(*kmsg.InitProducerIDRequest)))
}

// initProducerID is KafkaApis.handleInitProducerIdRequest with the
// transaction coordinator's handleInitProducerId for an idempotent
// producer: a producer id and epoch must be both given or both -1
// (INVALID_REQUEST), and one without a transactional id gets a fresh
// producer id at epoch 0 whatever it had. kraftlab has no transaction
// coordinator: an empty transactional id is INVALID_REQUEST, as in Kafka,
// and any other is NOT_COORDINATOR, Kafka's answer from a broker that
// does not coordinate that id, which here is every broker (the client's
// next step, FindCoordinator, is an API kraftlab's brokers do not list).
func (m *producerIDManager) initProducerID(r *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	noID, noEpoch := r.ProducerID == -1, r.ProducerEpoch == -1
	switch {
	case noID != noEpoch:
		resp.ErrorCode = kerr.InvalidRequest.Code
	case r.TransactionalID != nil && *r.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
	case r.TransactionalID != nil:
		resp.ErrorCode = kerr.NotCoordinator.Code
	default:
		id, err := m.generateProducerID()
		if err != nil {
			resp.ErrorCode = partition.ErrorCode(err)
			break
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
	}
	return resp
}
