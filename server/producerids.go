package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's RPCProducerIdManager constants.
const (
	// producerIDRetryBackoff is how long the manager waits after a refused
	// or failed AllocateProducerIds before it asks again (RETRY_BACKOFF_MS).
	producerIDRetryBackoff = 50 * time.Millisecond
	// producerIDPrefetchPercent of a block handed out asks for the next one
	// (PID_PREFETCH_THRESHOLD, 0.90).
	producerIDPrefetchPercent = 90
	// producerIDIterationLimit bounds how many fresh blocks one call may
	// swap in (ITERATION_LIMIT).
	producerIDIterationLimit = 3
)

// errNoProducerIDBlock is the answer while no block is at hand. Kafka
// answers COORDINATOR_LOAD_IN_PROGRESS rather than REQUEST_TIMED_OUT
// because older clients take the latter as fatal; every client retries
// the former.
var errNoProducerIDBlock = fmt.Errorf("producer id block is full, waiting for the next block: %w", kerr.CoordinatorLoadInProgress)

// producerIDBlock is a range of producer ids the controller gave this
// broker (Kafka's ProducerIdsBlock) and how far it is used.
type producerIDBlock struct {
	first, size, next int64
}

// claim hands out the next id of the block, if any is left.
func (b *producerIDBlock) claim() (int64, bool) {
	if b.next >= b.first+b.size {
		return 0, false
	}
	id := b.next
	b.next++
	return id, true
}

// producerIDManager is a broker's Kafka RPCProducerIdManager: it hands
// out producer ids from the block the active controller allocated it,
// asks for the next block (AllocateProducerIds) in the background once
// 90% of the current one is used, and swaps it in when the current one
// runs out. One request is in flight at a time; a refused one is retried
// no sooner than producerIDRetryBackoff later.
type producerIDManager struct {
	brokerID    int32
	brokerEpoch func() int64
	controller  func() int32
	send        func(ctx context.Context, controller int32, req kmsg.Request) (kmsg.Response, error)
	timeout     time.Duration
	log         *slog.Logger
	clock       *clock.Clock

	mu           sync.Mutex
	current      producerIDBlock
	nextBlock    *producerIDBlock
	inFlight     bool
	backoffUntil time.Time
	// parked are InitProducerIds that came while no block was there;
	// each is answered when a block arrives or its wait ends.
	parked []*parkedInit

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type producerIDManagerConfig struct {
	brokerID    int32
	brokerEpoch func() int64
	// controller is the active controller as the broker knows it.
	controller func() int32
	send       func(ctx context.Context, controller int32, req kmsg.Request) (kmsg.Response, error)
	// timeout bounds one AllocateProducerIds.
	timeout time.Duration
	log     *slog.Logger
	clock   *clock.Clock
}

func newProducerIDManager(cfg producerIDManagerConfig) *producerIDManager {
	m := &producerIDManager{
		brokerID: cfg.brokerID, brokerEpoch: cfg.brokerEpoch, controller: cfg.controller,
		send: cfg.send, timeout: cfg.timeout, log: cfg.log, clock: cfg.clock,
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

// generateProducerID is Kafka's generateProducerId: the next id of the
// current block, else of the next block if it has arrived, else
// COORDINATOR_LOAD_IN_PROGRESS (and the next block is asked for).
func (m *producerIDManager) generateProducerID() (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for range producerIDIterationLimit + 1 {
		if id, ok := m.current.claim(); ok {
			if id == m.current.first+m.current.size*producerIDPrefetchPercent/100 {
				m.maybeRequestNextBlock()
			}
			return id, nil
		}
		if m.nextBlock == nil {
			m.maybeRequestNextBlock()
			return -1, errNoProducerIDBlock
		}
		m.current, m.nextBlock = *m.nextBlock, nil
		m.inFlight = false
	}
	return -1, errNoProducerIDBlock
}

// maybeRequestNextBlock sends AllocateProducerIds unless a block is
// waiting, a request is in flight, or the backoff after a refusal has not
// passed. m.mu is held.
func (m *producerIDManager) maybeRequestNextBlock() {
	if m.nextBlock != nil || m.inFlight || m.clock.Now().Before(m.backoffUntil) || m.ctx.Err() != nil {
		return
	}
	m.inFlight = true
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = m.brokerID, m.brokerEpoch()
	to := m.controller()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := m.clock.WithTimeout(m.ctx, m.timeout)
		resp, err := m.send(ctx, to, req)
		cancel()
		m.handleResponse(resp, err)
	}()
}

// handleResponse is handleAllocateProducerIdsResponse with its sanity
// check: a block that does not follow the current one, or that overflows,
// is refused like an error answer.
func (m *producerIDManager) handleResponse(resp kmsg.Response, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.inFlight = false
		if errors.Is(err, context.DeadlineExceeded) {
			// Kafka's onTimeout: ask again at the next chance, no backoff.
			m.log.Warn("AllocateProducerIds timed out", "err", err)
			return
		}
		m.log.Debug("AllocateProducerIds not sent", "err", err)
		m.backoffUntil = m.clock.Now().Add(producerIDRetryBackoff)
		return
	}
	r, ok := resp.(*kmsg.AllocateProducerIDsResponse)
	var bad error
	switch {
	case !ok:
		bad = fmt.Errorf("answered with %T", resp)
	case r.ErrorCode != 0:
		bad = kerr.ErrorForCode(r.ErrorCode)
	case r.ProducerIDStart <= m.current.first+m.current.size-1:
		bad = fmt.Errorf("block from %d does not follow the current block %d-%d", r.ProducerIDStart, m.current.first, m.current.first+m.current.size-1)
	case r.ProducerIDStart < 0 || r.ProducerIDLen < 0 || r.ProducerIDStart > math.MaxInt64-int64(r.ProducerIDLen):
		bad = fmt.Errorf("invalid block of %d from %d", r.ProducerIDLen, r.ProducerIDStart)
	}
	if bad != nil {
		m.log.Warn("AllocateProducerIds refused", "err", bad)
		m.inFlight = false
		m.backoffUntil = m.clock.Now().Add(producerIDRetryBackoff)
		return
	}
	// inFlight stays set until the block is swapped in, as Kafka's
	// requestInFlight does.
	m.nextBlock = &producerIDBlock{first: r.ProducerIDStart, size: int64(r.ProducerIDLen), next: r.ProducerIDStart}
	m.answerParkedLocked()
}

// close stops any request in flight and waits for it.
func (m *producerIDManager) close() {
	m.mu.Lock()
	m.cancel()
	parked := m.parked
	m.parked = nil
	m.mu.Unlock()
	for _, p := range parked {
		p.timer.Stop()
		resp := kmsg.NewPtrInitProducerIDResponse()
		resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = -1, -1, kerr.CoordinatorLoadInProgress.Code
		p.req.Respond(resp)
	}
	m.wg.Wait()
}

// newProducerIDManager makes a broker's producer id manager for a new
// incarnation: it asks the active controller for blocks through deps'
// channel, with the broker's epoch, and serves InitProducerId on mux.
func (s *Server) newProducerIDManager(mux *wire.Mux, deps brokerDeps) (*producerIDManager, error) {
	m := newProducerIDManager(producerIDManagerConfig{
		brokerID:    s.id,
		brokerEpoch: deps.brokerEpoch,
		controller:  deps.controller,
		send:        deps.ch.send,
		timeout:     s.cfg.Raft.Raft.RequestTimeout,
		log:         s.log,
		clock:       s.cfg.Clock,
	})
	if err := m.register(mux); err != nil {
		m.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	return m, nil
}
