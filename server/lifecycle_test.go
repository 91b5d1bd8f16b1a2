package server

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testController is a tiny stand-in for the active controller: it
// registers brokers with epoch 500+n, says a broker has caught up once its
// offset reaches caughtUpAt, unfences a caught-up broker that does not
// want fencing, and lets a broker shut down once release is set. While not
// active it answers NOT_CONTROLLER; while mute it answers nothing.
type testController struct {
	id         int32
	addr       string
	caughtUpAt int64
	active     atomic.Bool
	mute       atomic.Bool
	release    atomic.Bool
	received   atomic.Int32

	mu            sync.Mutex
	registrations []*kmsg.BrokerRegistrationRequest
	heartbeats    []*kmsg.BrokerHeartbeatRequest
	notController int
}

func startTestController(t *testing.T, id int32, caughtUpAt int64) *testController {
	t.Helper()
	tc := &testController{id: id, caughtUpAt: caughtUpAt}
	mux := wire.NewMux()
	h := wire.HandlerFunc(tc.serve)
	for _, api := range []wire.APIRange{
		{Key: kmsg.BrokerRegistration.Int16(), MaxVersion: BrokerRegistrationVersion},
		{Key: kmsg.BrokerHeartbeat.Int16(), MaxVersion: BrokerHeartbeatVersion},
	} {
		if err := mux.Handle(api, h); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := wire.Listen(wire.ServerConfig{NodeID: id, APIs: mux.APIs(), Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	tc.addr = ln.Addr()
	return tc
}

func (tc *testController) serve(req *wire.Request) {
	tc.received.Add(1)
	if tc.mute.Load() {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	active := tc.active.Load()
	if !active {
		tc.notController++
	}
	switch r := req.Body.(type) {
	case *kmsg.BrokerRegistrationRequest:
		resp := kmsg.NewPtrBrokerRegistrationResponse()
		if !active {
			resp.ErrorCode = kerr.NotController.Code
		} else {
			tc.registrations = append(tc.registrations, r)
			resp.BrokerEpoch = 500 + int64(len(tc.registrations))
		}
		req.Respond(resp)
	case *kmsg.BrokerHeartbeatRequest:
		resp := kmsg.NewPtrBrokerHeartbeatResponse()
		if !active {
			resp.ErrorCode = kerr.NotController.Code
			req.Respond(resp)
			return
		}
		tc.heartbeats = append(tc.heartbeats, r)
		resp.IsCaughtUp = r.CurrentMetadataOffset >= tc.caughtUpAt
		resp.IsFenced = !resp.IsCaughtUp || r.WantFence
		resp.ShouldShutdown = r.WantShutdown && tc.release.Load()
		req.Respond(resp)
	}
}

func (tc *testController) lastHeartbeat() *kmsg.BrokerHeartbeatRequest {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if len(tc.heartbeats) == 0 {
		return nil
	}
	return tc.heartbeats[len(tc.heartbeats)-1]
}

func (tc *testController) counts() (registrations, heartbeats, notController int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return len(tc.registrations), len(tc.heartbeats), tc.notController
}

// lifecycleRig runs one LifecycleManager against test controllers.
type lifecycleRig struct {
	offset atomic.Int64
	active atomic.Int32 // the controller the broker believes active
	addrs  map[int32]string
	events chan LifecycleEvent

	mu      sync.Mutex
	clients map[int32]*wire.Client
}

func newLifecycleRig(t *testing.T, addrs map[int32]string, cfg LifecycleConfig) (*lifecycleRig, *LifecycleManager) {
	t.Helper()
	rig := &lifecycleRig{addrs: addrs, clients: map[int32]*wire.Client{}, events: make(chan LifecycleEvent, 64)}
	rig.offset.Store(0)
	cfg.NodeID, cfg.ClusterID = 101, testClusterID
	cfg.IncarnationID = record.NewUuid(42, 43)
	cfg.PreviousBrokerEpoch = -1
	cfg.Listener = func() record.BrokerEndpoint {
		return record.BrokerEndpoint{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9101}
	}
	cfg.LogDirs = []record.Uuid{record.NewUuid(9, 2), record.NewUuid(9, 1)}
	cfg.AppliedOffset = rig.offset.Load
	cfg.Controller = func() (int32, string, bool) {
		id := rig.active.Load()
		addr, ok := rig.addrs[id]
		return id, addr, ok
	}
	cfg.Send = rig.send
	cfg.OnEvent = func(e LifecycleEvent) {
		select {
		case rig.events <- e:
		default:
		}
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 100 * time.Millisecond
	}
	cfg.RetryBackoff = 5 * time.Millisecond
	m, err := NewLifecycleManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		rig.mu.Lock()
		defer rig.mu.Unlock()
		for _, c := range rig.clients {
			c.Close()
		}
	})
	return rig, m
}

func (rig *lifecycleRig) send(ctx context.Context, to int32, addr string, req kmsg.Request) (kmsg.Response, error) {
	rig.mu.Lock()
	c := rig.clients[to]
	if c == nil {
		var err error
		if c, err = wire.NewClient(wire.ClientConfig{From: 101, To: to, Addr: addr, DialTimeout: time.Second}); err != nil {
			rig.mu.Unlock()
			return nil, err
		}
		rig.clients[to] = c
	}
	rig.mu.Unlock()
	return c.Do(ctx, req)
}

// A broker registers with Kafka 4.4's fields, stays STARTING (and asks to
// stay fenced) until its applied offset reaches what the controller
// wants, then moves to RECOVERY and, unfenced, to RUNNING.
func TestLifecycleRegistersRecoversAndRuns(t *testing.T) {
	c := startTestController(t, 1, 20)
	c.active.Store(true)
	rig, m := newLifecycleRig(t, map[int32]string{1: c.addr}, LifecycleConfig{})
	rig.active.Store(1)
	rig.offset.Store(5)
	m.Start()
	waitFor(t, "three heartbeats", func() bool { _, hb, _ := c.counts(); return hb >= 3 })
	if st := m.State(); st != BrokerStarting || !m.Fenced() {
		t.Errorf("behind the controller: state %v fenced %v, want STARTING fenced", st, m.Fenced())
	}
	// A registration whose answer came late is sent again (Kafka's
	// retry), so the epoch is that of the latest one: 500 + how many.
	c.mu.Lock()
	reg, epoch := c.registrations[0], 500+int64(len(c.registrations))
	c.mu.Unlock()
	if hb := c.lastHeartbeat(); hb.BrokerID != 101 || hb.BrokerEpoch != epoch || hb.CurrentMetadataOffset != 5 || !hb.WantFence || hb.WantShutdown {
		t.Errorf("heartbeat while behind: %+v, want broker epoch %d", hb, epoch)
	}
	if reg.BrokerID != 101 || reg.ClusterID != testClusterID || reg.IncarnationID != record.NewUuid(42, 43) || reg.Version != BrokerRegistrationVersion ||
		len(reg.Listeners) != 1 || reg.Listeners[0].Name != "PLAINTEXT" || reg.Listeners[0].Port != 9101 || reg.Rack != nil ||
		len(reg.Features) != 3 || reg.Features[2].Name != image.KRaftVersionFeature || reg.Features[2].MaxSupportedVersion != 1 || reg.Features[0].Name != record.MetadataVersionFeature || reg.Features[0].MaxSupportedVersion != record.MetadataVersion4_4IV2 ||
		reg.Features[1].Name != record.EligibleLeaderReplicasFeature || reg.Features[1].MaxSupportedVersion != record.EligibleLeaderReplicasOn ||
		reg.PreviousBrokerEpoch != -1 || len(reg.LogDirs) != 2 || reg.LogDirs[0] != record.NewUuid(9, 1) {
		t.Errorf("registration: %+v", reg)
	}
	if m.BrokerEpoch() != epoch {
		t.Errorf("broker epoch %d, want %d", m.BrokerEpoch(), epoch)
	}
	rig.offset.Store(25)
	waitFor(t, "RUNNING", func() bool { return m.State() == BrokerRunning })
	if hb := c.lastHeartbeat(); hb.WantFence || hb.CurrentMetadataOffset != 25 {
		t.Errorf("heartbeat when caught up: %+v", hb)
	}
	if m.Fenced() || m.LastHeartbeat().Controller != 1 || m.LastHeartbeat().Acked.Before(m.LastHeartbeat().Sent) {
		t.Errorf("last heartbeat %+v fenced %v", m.LastHeartbeat(), m.Fenced())
	}
	var seen []BrokerState
	for len(seen) < 3 {
		e := <-rig.events
		if e.Kind == EventStateChanged {
			seen = append(seen, e.State)
		}
	}
	want := []BrokerState{BrokerStarting, BrokerRecovery, BrokerRunning}
	if seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] {
		t.Errorf("states %v, want %v", seen, want)
	}
}

// A controller that is not active answers NOT_CONTROLLER; the broker asks
// again who is and registers there.
func TestLifecycleFindsTheActiveController(t *testing.T) {
	c1, c2 := startTestController(t, 1, 0), startTestController(t, 2, 0)
	c2.active.Store(true)
	rig, m := newLifecycleRig(t, map[int32]string{1: c1.addr, 2: c2.addr}, LifecycleConfig{})
	rig.active.Store(1)
	m.Start()
	waitFor(t, "controller 1 to say NOT_CONTROLLER", func() bool { _, _, n := c1.counts(); return n > 0 })
	rig.active.Store(2) // the raft client learns the new leader
	waitFor(t, "RUNNING", func() bool { return m.State() == BrokerRunning })
	if r, _, _ := c2.counts(); r != 1 || m.LastHeartbeat().Controller != 2 {
		t.Errorf("registrations at 2: %d; last heartbeat %+v", r, m.LastHeartbeat())
	}
}

// With no controller reachable the broker keeps trying, a heartbeat
// interval apart, counting failures, and registers once one is back.
func TestLifecycleRetriesAnUnreachableController(t *testing.T) {
	c := startTestController(t, 2, 0)
	c.active.Store(true)
	rig, m := newLifecycleRig(t, map[int32]string{1: deadAddr(t), 2: c.addr}, LifecycleConfig{})
	rig.active.Store(1)
	m.Start()
	waitFor(t, "two failed registrations", func() bool { return m.Failures().Registrations >= 2 })
	if m.State() != BrokerStarting || m.BrokerEpoch() != -1 {
		t.Errorf("unregistered: state %v epoch %d", m.State(), m.BrokerEpoch())
	}
	rig.active.Store(2)
	waitFor(t, "RUNNING", func() bool { return m.State() == BrokerRunning })
}

// A controlled shutdown heartbeats WantShutDown and waits in
// PENDING_CONTROLLED_SHUTDOWN until the controller says ShouldShutDown.
func TestLifecycleControlledShutdown(t *testing.T) {
	c := startTestController(t, 1, 0)
	c.active.Store(true)
	rig, m := newLifecycleRig(t, map[int32]string{1: c.addr}, LifecycleConfig{})
	rig.active.Store(1)
	m.Start()
	waitFor(t, "RUNNING", func() bool { return m.State() == BrokerRunning })
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- m.Shutdown(ctx)
	}()
	waitFor(t, "a heartbeat asking to shut down", func() bool {
		hb := c.lastHeartbeat()
		return m.State() == BrokerPendingControlledShutdown && hb.WantShutdown
	})
	c.release.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m.State() != BrokerShuttingDown {
		t.Errorf("state %v after shutdown", m.State())
	}
}

// A controlled shutdown that the controller never grants ends with the
// caller's context.
func TestLifecycleControlledShutdownBoundedByContext(t *testing.T) {
	c := startTestController(t, 1, 0)
	c.active.Store(true)
	rig, m := newLifecycleRig(t, map[int32]string{1: c.addr}, LifecycleConfig{})
	rig.active.Store(1)
	m.Start()
	waitFor(t, "RUNNING", func() bool { return m.State() == BrokerRunning })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := m.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want the context's deadline", err)
	}
}

// Close ends a registration the controller never answers, without
// waiting for it.
func TestLifecycleCloseDuringSend(t *testing.T) {
	c := startTestController(t, 1, 0)
	c.active.Store(true)
	c.mute.Store(true)
	rig, m := newLifecycleRig(t, map[int32]string{1: c.addr}, LifecycleConfig{HeartbeatInterval: time.Hour})
	rig.active.Store(1)
	m.Start()
	waitFor(t, "the controller to hold the registration", func() bool { return c.received.Load() == 1 })
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the controller")
	}
}

// A broker that no controller registers within the initial registration
// timeout shuts down, saying why.
func TestLifecycleGivesUpWithoutRegistration(t *testing.T) {
	rig, m := newLifecycleRig(t, map[int32]string{}, LifecycleConfig{InitialRegistrationTimeout: 200 * time.Millisecond})
	rig.active.Store(-1)
	m.Start()
	select {
	case <-m.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("still trying")
	}
	if !errors.Is(m.Err(), ErrRegistrationTimedOut) || m.State() != BrokerShuttingDown {
		t.Errorf("err %v state %v", m.Err(), m.State())
	}
}

func TestBrokerStateNamesAreKafkas(t *testing.T) {
	for s, want := range map[BrokerState]string{
		BrokerNotRunning: "NOT_RUNNING", BrokerStarting: "STARTING", BrokerRecovery: "RECOVERY", BrokerRunning: "RUNNING",
		BrokerPendingControlledShutdown: "PENDING_CONTROLLED_SHUTDOWN", BrokerShuttingDown: "SHUTTING_DOWN", 127: "UNKNOWN",
	} {
		if s.String() != want {
			t.Errorf("%d: %s, want %s", s, s, want)
		}
	}
}

// A broker's lifecycle config points at the quorum's leader through the
// node's own controller channel, and advertises the node's listener.
func TestBrokerLifecycleConfigFromServer(t *testing.T) {
	ts := startServers(t)
	s := ts.byID[101]
	waitFor(t, "the broker to know a leader", func() bool { return s.Raft().Status().LeaderID > 0 })
	ch := newControllerChannel(s)
	defer ch.close()
	cfg, err := brokerLifecycleConfig(s, ch, func() int64 { return 7 })
	if err != nil {
		t.Fatal(err)
	}
	again, _ := brokerLifecycleConfig(s, ch, func() int64 { return 7 })
	if cfg.IncarnationID == record.ZeroUuid || cfg.IncarnationID == again.IncarnationID {
		t.Errorf("incarnation ids %v and %v", cfg.IncarnationID, again.IncarnationID)
	}
	ep := cfg.Listener()
	if want := s.Addr(); ep.Name != "PLAINTEXT" || ep.Host != "127.0.0.1" || want != "127.0.0.1:"+strconv.Itoa(int(ep.Port)) {
		t.Errorf("listener %+v, server at %s", ep, want)
	}
	id, addr, ok := cfg.Controller()
	if leader := s.Raft().Status().LeaderID; !ok || id != leader || addr != ts.byID[leader].Addr() {
		t.Errorf("controller %d at %s (%v), leader %d", id, addr, ok, leader)
	}
}
