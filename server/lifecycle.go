package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerState is a broker's state in its lifecycle, Kafka's
// org.apache.kafka.metadata.BrokerState, with Kafka's values.
type BrokerState int8

// The broker states a KRaft broker goes through.
const (
	BrokerNotRunning BrokerState = 0
	// BrokerStarting: registering, then catching up with the metadata log.
	BrokerStarting BrokerState = 1
	// BrokerRecovery: caught up; fenced until the controller unfences it.
	BrokerRecovery BrokerState = 2
	// BrokerRunning: unfenced, may lead partitions.
	BrokerRunning BrokerState = 3
	// BrokerPendingControlledShutdown: asked to shut down; waiting for the
	// controller to move its leaderships away.
	BrokerPendingControlledShutdown BrokerState = 6
	// BrokerShuttingDown: no longer talks to the controller.
	BrokerShuttingDown BrokerState = 7
)

// String is Kafka's name of the state.
func (s BrokerState) String() string {
	switch s {
	case BrokerNotRunning:
		return "NOT_RUNNING"
	case BrokerStarting:
		return "STARTING"
	case BrokerRecovery:
		return "RECOVERY"
	case BrokerRunning:
		return "RUNNING"
	case BrokerPendingControlledShutdown:
		return "PENDING_CONTROLLED_SHUTDOWN"
	case BrokerShuttingDown:
		return "SHUTTING_DOWN"
	}
	return "UNKNOWN"
}

// Kafka's defaults for the lifecycle (KRaftConfigs, and the client
// settings of its heartbeat channel).
const (
	// DefaultBrokerHeartbeatInterval is broker.heartbeat.interval.ms.
	DefaultBrokerHeartbeatInterval = 2 * time.Second
	// DefaultInitialRegistrationTimeout is
	// initial.broker.registration.timeout.ms.
	DefaultInitialRegistrationTimeout = 60 * time.Second
	// DefaultLifecycleRetryBackoff is reconnect.backoff.ms, the pause
	// before the heartbeat channel tries a controller again.
	DefaultLifecycleRetryBackoff = 50 * time.Millisecond
)

// The versions the lifecycle sends: Kafka 4.4's newest, which kmsg also
// encodes.
const (
	BrokerRegistrationVersion int16 = 4
	BrokerHeartbeatVersion    int16 = 2
)

// SupportedFeatures are the feature ranges a kraftlab broker registers
// with: the metadata.version levels its records and image read,
// eligible.leader.replicas.version 0-1 (KIP-966) and kraft.version 0-1
// (static and dynamic voters, upgradable). Kafka leaves out a feature
// whose highest supported level is 0
// (BrokerFeatures.defaultSupportedFeatures), which is every feature
// kraftlab does not implement.
var SupportedFeatures = []record.BrokerFeature{
	{Name: record.MetadataVersionFeature, MinSupportedVersion: record.MetadataVersionMinimum, MaxSupportedVersion: record.MetadataVersion4_4IV2},
	{Name: record.EligibleLeaderReplicasFeature, MinSupportedVersion: record.EligibleLeaderReplicasOff, MaxSupportedVersion: record.EligibleLeaderReplicasOn},
	{Name: image.KRaftVersionFeature, MinSupportedVersion: int16(raft.KRaftVersion0), MaxSupportedVersion: int16(raft.KRaftVersion1)},
}

// LifecycleConfig configures a broker's LifecycleManager. Its inputs are
// functions so that the manager can run against any controller and
// metadata loader.
type LifecycleConfig struct {
	NodeID    int32
	ClusterID string
	// IncarnationID is new and random each time the broker process
	// starts; the controller tells incarnations apart by it.
	IncarnationID record.Uuid
	// Listener is the endpoint clients reach the broker at.
	Listener func() record.BrokerEndpoint
	// LogDirs are the broker's log directories, sent sorted; may be empty.
	LogDirs []record.Uuid
	// PreviousBrokerEpoch is the epoch of the broker's last incarnation if
	// it shut down cleanly, -1 otherwise (Kafka reads it from the clean
	// shutdown file); the controller may then keep its partitions' ELR.
	PreviousBrokerEpoch int64
	// AppliedOffset is the offset of the last metadata record the broker
	// applied, -1 before any: what it reports in heartbeats.
	AppliedOffset func() int64
	// ReadyToUnfence reports that the broker may serve as a replica; nil
	// means as soon as it has caught up (Kafka's BrokerServer says so after
	// loading its logs).
	ReadyToUnfence func() bool
	// Controller is the active controller as the broker's raft client
	// knows it.
	Controller func() (id int32, addr string, ok bool)
	// Send sends req to controller to at addr and waits for its answer
	// until ctx ends.
	Send func(ctx context.Context, to int32, addr string, req kmsg.Request) (kmsg.Response, error)
	// HeartbeatInterval is broker.heartbeat.interval.ms; 0 means
	// DefaultBrokerHeartbeatInterval. It is also how long one registration
	// or heartbeat may keep trying controllers, as Kafka's heartbeat
	// channel does, and the pause after one that failed.
	HeartbeatInterval time.Duration
	// InitialRegistrationTimeout is initial.broker.registration.timeout.ms:
	// a broker that has not registered by then shuts down. 0 means
	// DefaultInitialRegistrationTimeout.
	InitialRegistrationTimeout time.Duration
	// RetryBackoff is the pause before trying a controller again within
	// one registration or heartbeat; 0 means DefaultLifecycleRetryBackoff.
	RetryBackoff time.Duration
	// OnEvent, if set, hears each change of state and each registration,
	// on the manager's goroutine (STARTING on Start's); it must not block.
	OnEvent func(LifecycleEvent)
	// Now is the clock of the recorded times; nil means Clock's.
	Now func() time.Time
	// Clock is the cluster clock the heartbeats, the registration
	// deadline and the retries are timed on; nil is the wall clock.
	Clock *clock.Clock
	// Logger receives the manager's log; nil discards it.
	Logger *slog.Logger
}

// LifecycleEventKind says what a LifecycleEvent reports.
type LifecycleEventKind int8

// The lifecycle events.
const (
	// EventRegistered: the controller accepted a registration.
	EventRegistered LifecycleEventKind = iota + 1
	// EventStateChanged: the broker moved to State.
	EventStateChanged
	// EventRegistrationTimedOut: no controller accepted a registration
	// within the initial registration timeout; the broker shuts down.
	EventRegistrationTimedOut
	// EventRegistrationRefused: the controller refused the registration
	// because the broker's previous incarnation still has a live session
	// (DUPLICATE_BROKER_REGISTRATION); the broker tries again each
	// heartbeat interval. Reported once per incarnation.
	EventRegistrationRefused
)

// LifecycleEvent is one change in a broker's lifecycle.
type LifecycleEvent struct {
	Kind        LifecycleEventKind
	At          time.Time
	State       BrokerState
	BrokerEpoch int64
	// Controller is the controller that answered, -1 if none.
	Controller int32
}

// HeartbeatStatus is what a broker last heard in its heartbeats.
type HeartbeatStatus struct {
	// Sent is when the last heartbeat was sent, Acked when the last one
	// was answered without error; zero if never.
	Sent, Acked time.Time
	// Fenced and CaughtUp are the last answer's IsFenced and IsCaughtUp.
	Fenced, CaughtUp bool
	// Controller is the controller that last answered, -1 if none.
	Controller int32
}

// LifecycleFailures counts the sends that failed: not answered, or
// answered with an error (NOT_CONTROLLER among them).
type LifecycleFailures struct {
	Registrations, Heartbeats uint64
}

// ErrRegistrationTimedOut is the manager's error when no controller
// accepted its registration within the initial registration timeout.
var ErrRegistrationTimedOut = errors.New("unable to register with the controller quorum")

// LifecycleManager is a broker's part that registers it with the active
// controller and heartbeats, moving it through Kafka's broker states
// (Kafka's BrokerLifecycleManager): STARTING until a heartbeat answer says
// it has caught up with the metadata log, RECOVERY until one says it is
// unfenced, RUNNING until a controlled shutdown, which waits in
// PENDING_CONTROLLED_SHUTDOWN for the controller to let it go, then
// SHUTTING_DOWN. One goroutine talks to the controller; its methods never
// wait for it, except Close and Shutdown, which are bounded.
type LifecycleManager struct {
	cfg LifecycleConfig
	log *slog.Logger

	ctx      context.Context
	cancel   context.CancelFunc
	shutdown chan struct{} // closed by BeginControlledShutdown
	shutOnce sync.Once
	done     chan struct{} // closed when the goroutine ends

	mu         sync.Mutex
	state      BrokerState
	epoch      int64
	registered bool
	// refused: a registration was refused for the previous incarnation's
	// live session, and reported.
	refused   bool
	heartbeat HeartbeatStatus
	failures  LifecycleFailures
	err       error
	// gotShutdownAnswer: a heartbeat in PENDING_CONTROLLED_SHUTDOWN was
	// answered once already.
	gotShutdownAnswer bool
}

// NewLifecycleManager checks cfg and returns a manager that is not started.
func NewLifecycleManager(cfg LifecycleConfig) (*LifecycleManager, error) {
	switch {
	case cfg.Listener == nil || cfg.AppliedOffset == nil || cfg.Controller == nil || cfg.Send == nil:
		return nil, fmt.Errorf("broker %d lifecycle: Listener, AppliedOffset, Controller and Send are required", cfg.NodeID)
	case cfg.IncarnationID == record.ZeroUuid:
		return nil, fmt.Errorf("broker %d lifecycle: no incarnation id", cfg.NodeID)
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultBrokerHeartbeatInterval
	}
	if cfg.InitialRegistrationTimeout <= 0 {
		cfg.InitialRegistrationTimeout = DefaultInitialRegistrationTimeout
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = DefaultLifecycleRetryBackoff
	}
	if cfg.Now == nil {
		cfg.Now = cfg.Clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &LifecycleManager{
		cfg: cfg, log: cfg.Logger.With("part", "lifecycle"),
		ctx: ctx, cancel: cancel,
		shutdown: make(chan struct{}), done: make(chan struct{}),
		state: BrokerNotRunning, epoch: -1,
		heartbeat: HeartbeatStatus{Controller: -1},
	}, nil
}

// Start moves the broker to STARTING and starts registering. Call it once.
func (m *LifecycleManager) Start() {
	m.setState(BrokerStarting, -1)
	go m.run()
}

// State is the broker's state.
func (m *LifecycleManager) State() BrokerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

// BrokerEpoch is the epoch the controller gave this incarnation, -1 before
// it registered.
func (m *LifecycleManager) BrokerEpoch() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.epoch
}

// IncarnationID is the id this incarnation registers with.
func (m *LifecycleManager) IncarnationID() record.Uuid { return m.cfg.IncarnationID }

// LastHeartbeat is what the broker last sent and heard.
func (m *LifecycleManager) LastHeartbeat() HeartbeatStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heartbeat
}

// Fenced reports whether the broker is fenced as it last heard: true until
// a heartbeat answer says otherwise.
func (m *LifecycleManager) Fenced() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heartbeat.Acked.IsZero() || m.heartbeat.Fenced
}

// Failures counts the registrations and heartbeats that failed.
func (m *LifecycleManager) Failures() LifecycleFailures {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failures
}

// Err is why the manager stopped by itself (ErrRegistrationTimedOut), nil
// otherwise.
func (m *LifecycleManager) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Done is closed when the manager's goroutine has ended: after Close, or
// once it reached SHUTTING_DOWN.
func (m *LifecycleManager) Done() <-chan struct{} { return m.done }

// BeginControlledShutdown asks the controller to let the broker go: a
// RUNNING broker moves to PENDING_CONTROLLED_SHUTDOWN and heartbeats with
// WantShutDown at once; a broker in any other state goes straight to
// SHUTTING_DOWN, as Kafka's does. It does not wait.
func (m *LifecycleManager) BeginControlledShutdown() {
	m.shutOnce.Do(func() { close(m.shutdown) })
}

// Shutdown begins a controlled shutdown and waits until the broker is
// SHUTTING_DOWN or ctx ends, then stops the manager. It returns ctx's
// error if the controller did not let the broker go in time.
func (m *LifecycleManager) Shutdown(ctx context.Context) error {
	if m.State() == BrokerNotRunning {
		return nil
	}
	m.BeginControlledShutdown()
	var err error
	select {
	case <-m.done:
	case <-ctx.Done():
		err = fmt.Errorf("broker %d controlled shutdown: %w", m.cfg.NodeID, ctx.Err())
	}
	m.Close()
	return err
}

// Close stops the manager at once, ending a send in flight, and waits for
// its goroutine.
func (m *LifecycleManager) Close() {
	m.cancel()
	m.mu.Lock()
	started := m.state != BrokerNotRunning
	m.mu.Unlock()
	if started {
		<-m.done
	}
}

func (m *LifecycleManager) setState(s BrokerState, controller int32) {
	m.mu.Lock()
	if m.state == s {
		m.mu.Unlock()
		return
	}
	m.log.Info("broker state", "from", m.state, "to", s)
	m.state = s
	epoch := m.epoch
	m.mu.Unlock()
	m.emit(LifecycleEvent{Kind: EventStateChanged, State: s, BrokerEpoch: epoch, Controller: controller})
}

func (m *LifecycleManager) emit(e LifecycleEvent) {
	if m.cfg.OnEvent != nil {
		e.At = m.cfg.Now()
		m.cfg.OnEvent(e)
	}
}

// run is the manager's goroutine: one communication at a time, each
// scheduled by the answer to the one before (Kafka's
// scheduleNextCommunication).
func (m *LifecycleManager) run() {
	defer close(m.done)
	regDeadline := m.cfg.Clock.NewTimer(m.cfg.InitialRegistrationTimeout)
	defer regDeadline.Stop()
	next := m.cfg.Clock.NewTimer(0)
	defer next.Stop()
	shutdown := m.shutdown
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-regDeadline.C:
			if !m.isRegistered() {
				m.log.Error("shutting down: unable to register with the controller quorum")
				m.mu.Lock()
				m.err = fmt.Errorf("broker %d: %w within %v", m.cfg.NodeID, ErrRegistrationTimedOut, m.cfg.InitialRegistrationTimeout)
				m.mu.Unlock()
				m.emit(LifecycleEvent{Kind: EventRegistrationTimedOut, State: BrokerShuttingDown, BrokerEpoch: -1, Controller: -1})
				m.setState(BrokerShuttingDown, -1)
				return
			}
		case <-shutdown:
			shutdown = nil
			if m.State() != BrokerRunning {
				// Nothing to hand over: Kafka skips the controlled shutdown.
				m.setState(BrokerShuttingDown, -1)
				return
			}
			m.setState(BrokerPendingControlledShutdown, -1)
			resetTimer(next, 0)
		case <-next.C:
			var wait time.Duration
			if m.isRegistered() {
				wait = m.sendHeartbeat()
			} else {
				wait = m.sendRegistration()
			}
			if m.State() == BrokerShuttingDown {
				return
			}
			resetTimer(next, wait)
		}
	}
}

func resetTimer(t *clock.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}

func (m *LifecycleManager) isRegistered() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.registered
}

// exchange sends the request built by build to the active controller,
// trying again (after RetryBackoff, on the controller then known) when
// none is known, the send fails or the answer says NOT_CONTROLLER, for
// up to one heartbeat interval, as Kafka's heartbeat channel does. It
// returns the answer and the controller that gave it.
func (m *LifecycleManager) exchange(build func() kmsg.Request, notController func(kmsg.Response) bool) (kmsg.Response, int32, error) {
	ctx, cancel := m.cfg.Clock.WithTimeout(m.ctx, m.cfg.HeartbeatInterval)
	defer cancel()
	var last error
	for {
		id, addr, ok := m.cfg.Controller()
		var resp kmsg.Response
		var err error
		if ok {
			resp, err = m.cfg.Send(ctx, id, addr, build())
			if err == nil && notController(resp) {
				err = fmt.Errorf("node %d: %w", id, kerr.NotController)
			}
			if err == nil {
				return resp, id, nil
			}
		} else {
			err = errors.New("no active controller known")
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, -1, last
		case <-m.cfg.Clock.After(m.cfg.RetryBackoff):
		}
	}
}

func (m *LifecycleManager) registrationRequest() kmsg.Request {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = BrokerRegistrationVersion
	req.BrokerID, req.ClusterID, req.IncarnationID = m.cfg.NodeID, m.cfg.ClusterID, m.cfg.IncarnationID
	ep := m.cfg.Listener()
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port, l.SecurityProtocol = ep.Name, ep.Host, ep.Port, ep.SecurityProtocol
	req.Listeners = []kmsg.BrokerRegistrationRequestListener{l}
	for _, f := range SupportedFeatures {
		rf := kmsg.NewBrokerRegistrationRequestFeature()
		rf.Name, rf.MinSupportedVersion, rf.MaxSupportedVersion = f.Name, f.MinSupportedVersion, f.MaxSupportedVersion
		req.Features = append(req.Features, rf)
	}
	for _, d := range sortedUuids(m.cfg.LogDirs) {
		req.LogDirs = append(req.LogDirs, d)
	}
	req.PreviousBrokerEpoch = m.cfg.PreviousBrokerEpoch
	return req
}

// sendRegistration registers; it returns when to communicate next.
func (m *LifecycleManager) sendRegistration() time.Duration {
	resp, from, err := m.exchange(m.registrationRequest, func(r kmsg.Response) bool {
		reg, ok := r.(*kmsg.BrokerRegistrationResponse)
		return ok && reg.ErrorCode == kerr.NotController.Code
	})
	reg, _ := resp.(*kmsg.BrokerRegistrationResponse)
	switch {
	case err != nil:
	case reg == nil:
		err = fmt.Errorf("controller %d answered %T", from, resp)
	case reg.ErrorCode != 0:
		err = fmt.Errorf("controller %d: %w", from, kerr.ErrorForCode(reg.ErrorCode))
	}
	if err != nil {
		m.mu.Lock()
		m.failures.Registrations++
		first := !m.refused && reg != nil && reg.ErrorCode == kerr.DuplicateBrokerRegistration.Code
		m.refused = m.refused || first
		m.mu.Unlock()
		if m.ctx.Err() == nil {
			m.log.Info("unable to register", "err", err)
		}
		if first {
			m.emit(LifecycleEvent{Kind: EventRegistrationRefused, State: m.State(), BrokerEpoch: -1, Controller: from})
		}
		return m.cfg.HeartbeatInterval
	}
	epoch := reg.BrokerEpoch
	m.mu.Lock()
	m.registered, m.epoch = true, epoch
	m.mu.Unlock()
	m.log.Info("registered", "brokerEpoch", epoch, "controller", from)
	m.emit(LifecycleEvent{Kind: EventRegistered, State: m.State(), BrokerEpoch: epoch, Controller: from})
	return 0 // heartbeat at once
}

// sendHeartbeat heartbeats and moves the state as the answer says; it
// returns when to communicate next.
func (m *LifecycleManager) sendHeartbeat() time.Duration {
	state := m.State()
	ready := state != BrokerStarting
	if m.cfg.ReadyToUnfence != nil {
		ready = ready && m.cfg.ReadyToUnfence()
	}
	m.mu.Lock()
	epoch := m.epoch
	m.heartbeat.Sent = m.cfg.Now()
	m.mu.Unlock()
	build := func() kmsg.Request {
		req := kmsg.NewPtrBrokerHeartbeatRequest()
		req.Version = BrokerHeartbeatVersion
		req.BrokerID, req.BrokerEpoch = m.cfg.NodeID, epoch
		req.CurrentMetadataOffset = m.cfg.AppliedOffset()
		req.WantFence = !ready
		req.WantShutdown = state == BrokerPendingControlledShutdown
		return req
	}
	resp, from, err := m.exchange(build, func(r kmsg.Response) bool {
		hb, ok := r.(*kmsg.BrokerHeartbeatResponse)
		return ok && hb.ErrorCode == kerr.NotController.Code
	})
	hb, _ := resp.(*kmsg.BrokerHeartbeatResponse)
	switch {
	case err != nil:
	case hb == nil:
		err = fmt.Errorf("controller %d answered %T", from, resp)
	case hb.ErrorCode != 0:
		err = fmt.Errorf("controller %d: %w", from, kerr.ErrorForCode(hb.ErrorCode))
	}
	if err != nil {
		m.mu.Lock()
		m.failures.Heartbeats++
		m.mu.Unlock()
		if m.ctx.Err() == nil {
			m.log.Warn("heartbeat failed", "err", err)
		}
		return m.cfg.HeartbeatInterval
	}
	m.mu.Lock()
	m.heartbeat.Acked, m.heartbeat.Fenced, m.heartbeat.CaughtUp, m.heartbeat.Controller = m.cfg.Now(), hb.IsFenced, hb.IsCaughtUp, from
	m.mu.Unlock()
	switch m.State() {
	case BrokerStarting:
		if hb.IsCaughtUp {
			m.setState(BrokerRecovery, from)
		}
		// Soon again: with nothing to recover, the broker unfences quickly
		// (Kafka's 10 ms).
		return 10 * time.Millisecond
	case BrokerRecovery:
		if !hb.IsFenced {
			m.setState(BrokerRunning, from)
		}
	case BrokerPendingControlledShutdown:
		if hb.ShouldShutdown {
			m.setState(BrokerShuttingDown, from)
			return 0
		}
		m.mu.Lock()
		first := !m.gotShutdownAnswer
		m.gotShutdownAnswer = true
		m.mu.Unlock()
		if first {
			// The controller may be done soon: ask again sooner
			// (Kafka's 50 ms).
			return 50 * time.Millisecond
		}
	}
	return m.cfg.HeartbeatInterval
}

func sortedUuids(ids []record.Uuid) []record.Uuid {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b record.Uuid) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// brokerLifecycleConfig is the lifecycle configuration of broker s: a new
// random incarnation id, the node's listener as PLAINTEXT, the quorum's
// leader as the active controller (in KRaft the active controller is the
// raft leader), sends through ch, and the loader's applied offset.
func brokerLifecycleConfig(s *Server, ch *controllerChannel, appliedOffset func() int64) (LifecycleConfig, error) {
	var inc record.Uuid
	if _, err := rand.Read(inc[:]); err != nil {
		return LifecycleConfig{}, fmt.Errorf("broker %d: incarnation id: %w", s.id, err)
	}
	return LifecycleConfig{
		NodeID:              s.id,
		ClusterID:           s.cfg.Raft.Raft.ClusterID,
		IncarnationID:       inc,
		PreviousBrokerEpoch: -1,
		Listener: func() record.BrokerEndpoint {
			host, port, _ := net.SplitHostPort(s.Addr())
			p, _ := strconv.ParseUint(port, 10, 16)
			return record.BrokerEndpoint{Name: "PLAINTEXT", Host: host, Port: uint16(p), SecurityProtocol: record.SecurityProtocolPlaintext}
		},
		AppliedOffset: appliedOffset,
		Controller: func() (int32, string, bool) {
			id := s.raft.Status().LeaderID
			if id < 0 {
				return -1, "", false
			}
			addr, ok := s.cfg.Raft.Peers(id)
			return id, addr, ok
		},
		Send: func(ctx context.Context, to int32, _ string, req kmsg.Request) (kmsg.Response, error) {
			return ch.send(ctx, to, req)
		},
		Logger: s.log,
		Clock:  s.cfg.Clock,
	}, nil
}
