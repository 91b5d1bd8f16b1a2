package server

import (
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
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

// maxInitProducerIDPark bounds how long an InitProducerId waits for the
// broker's first block before it is answered COORDINATOR_LOAD_IN_PROGRESS.
const maxInitProducerIDPark = time.Second

// parkedInit is an InitProducerId waiting for a block.
type parkedInit struct {
	req   *wire.Request
	timer *clock.Timer
}

// handleInitProducerID answers at once, except when the broker has no
// producer id block yet: Kafka answers COORDINATOR_LOAD_IN_PROGRESS then
// and the client retries after its backoff; here the request waits (up to
// maxInitProducerIDPark) for the block it set off, so the first producer
// of a broker starts a client backoff sooner.
func (m *producerIDManager) handleInitProducerID(req *wire.Request) {
	resp := m.initProducerID(req.Body.(*kmsg.InitProducerIDRequest))
	if resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		req.Respond(resp)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nextBlock != nil || m.ctx.Err() != nil {
		// A block came meanwhile (or the broker stops): answer again now.
		go req.Respond(m.initProducerID(req.Body.(*kmsg.InitProducerIDRequest)))
		return
	}
	p := &parkedInit{req: req}
	p.timer = m.clock.AfterFunc(maxInitProducerIDPark, func() { m.unpark(p, resp) })
	m.parked = append(m.parked, p)
}

// unpark answers p with resp unless a block answered it first.
func (m *producerIDManager) unpark(p *parkedInit, resp *kmsg.InitProducerIDResponse) {
	m.mu.Lock()
	i := slices.Index(m.parked, p)
	if i >= 0 {
		m.parked = slices.Delete(m.parked, i, i+1)
	}
	m.mu.Unlock()
	if i >= 0 {
		p.req.Respond(resp)
	}
}

// answerParkedLocked answers every parked InitProducerId now that a block
// is there. m.mu is held; the answers are sent outside it.
func (m *producerIDManager) answerParkedLocked() {
	parked := m.parked
	m.parked = nil
	if len(parked) == 0 {
		return
	}
	// Whoever takes a request off m.parked answers it: its timer, once
	// stopped or fired, finds it gone.
	go func() {
		for _, p := range parked {
			p.timer.Stop()
			p.req.Respond(m.initProducerID(p.req.Body.(*kmsg.InitProducerIDRequest)))
		}
	}()
}

// initProducerID is KafkaApis.handleInitProducerIdRequest with the
// transaction coordinator's handleInitProducerId for an idempotent
// producer: a producer id and epoch must be both given or both -1
// (INVALID_REQUEST), and one without a transactional id gets a fresh
// producer id at epoch 0 whatever it had. kraftlab has no transaction
// coordinator: an empty transactional id is INVALID_REQUEST, as in Kafka,
// and any other is NOT_COORDINATOR, Kafka's answer from a broker that
// does not coordinate that id, which here is every broker (the client's
// next step, FindCoordinator for a transactional id, answers
// COORDINATOR_NOT_AVAILABLE, saying there is no transaction coordinator).
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
