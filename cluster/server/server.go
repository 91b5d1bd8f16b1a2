package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/metadata/cache"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// Config configures a Server.
type Config struct {
	// Kind says which parts the server has.
	Kind Kind
	// Raft configures the server's raft client: the node's id, the
	// voters, its folder, how it reaches its peers. A controller must be
	// one of Raft.Raft.Voters and a broker must not. Raft.Secret, the
	// playground's member secret (LoadSecret), is required: the listener
	// serves the quorum's RPCs only to connections that authenticate with
	// it, and the node's clients authenticate with it.
	Raft quorum.Config
	// Addr is the address to listen on; empty means 127.0.0.1 on a port
	// the system picks. A restarted server listens on the address it got
	// the first time, so its peers find it again.
	Addr string
	// Publishers, if set, returns the parts that subscribe to the metadata
	// loader of one incarnation (the quorum controller on a controller,
	// the lifecycle manager on a broker). It is called at each start,
	// before the new loader is handed any record, so the parts see every
	// image from the first.
	Publishers func() []loader.Publisher
	// OnLoaderEvent, if set, receives the loader's events from its own
	// goroutine; it must not block.
	OnLoaderEvent func(loader.Event)
	// Controller configures a controller's quorum controller.
	Controller ControllerConfig
	// Broker configures a broker's lifecycle manager.
	Broker BrokerConfig
	// Listener configures the node's listener.
	Listener ListenerConfig
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
}

// ListenerConfig bounds what peers and clients may make a node's listener
// hold: Kafka's socket server settings. Zero values take wire.ServerConfig's
// defaults.
type ListenerConfig struct {
	// SocketRequestMaxBytes is socket.request.max.bytes on a broker and
	// kraftlab.controller.socket.request.max.bytes on a controller.
	SocketRequestMaxBytes int32
	// QueuedMaxRequestBytes is queued.max.request.bytes; negative means
	// unbounded.
	QueuedMaxRequestBytes int64
	// MaxConnections and MaxConnectionsPerIP are max.connections and
	// max.connections.per.ip.
	MaxConnections      int
	MaxConnectionsPerIP int
	// ConnectionsMaxIdle is connections.max.idle.ms.
	ConnectionsMaxIdle time.Duration
	// FailedAuthenticationDelay is
	// connection.failed.authentication.delay.ms; negative means none.
	FailedAuthenticationDelay time.Duration
	// SaslServerMaxReceiveSize is sasl.server.max.receive.size.
	SaslServerMaxReceiveSize int32
	// SaslAuthenticationTimeout is kraftlab.sasl.authentication.timeout.ms.
	SaslAuthenticationTimeout time.Duration
}

// ControllerConfig configures the quorum controller a controller runs in
// each incarnation; it acts while its node leads the quorum.
type ControllerConfig struct {
	// SessionTimeout is broker.session.timeout.ms; 0 means Kafka's 9 s.
	SessionTimeout time.Duration
	// NoOpInterval is metadata.max.idle.interval.ms; 0 writes no NoOps.
	NoOpInterval time.Duration
	// DefaultNumPartitions and DefaultReplicationFactor are num.partitions
	// and default.replication.factor; 0 means Kafka's 1.
	DefaultNumPartitions     int32
	DefaultReplicationFactor int16
	// UncleanLeaderElectionEnable is unclean.leader.election.enable, the
	// cluster default a topic's config overrides.
	UncleanLeaderElectionEnable bool
	// UncleanLeaderElectionInterval is unclean.leader.election.interval.ms;
	// 0 means Kafka's 5 min.
	UncleanLeaderElectionInterval time.Duration
	// OnEvent, if set, receives the controller's events, from its
	// goroutine; it must not block.
	OnEvent func(controller.Event)
}

// BrokerConfig configures a broker's lifecycle manager and its
// ReplicaManager. Zero values take Kafka's defaults.
type BrokerConfig struct {
	// HeartbeatInterval is broker.heartbeat.interval.ms; 0 means Kafka's
	// 2 s.
	HeartbeatInterval time.Duration
	// OnEvent, if set, receives the lifecycle manager's events, from its
	// goroutine; it must not block.
	OnEvent func(LifecycleEvent)
	// ReplicaLagTimeMax is replica.lag.time.max.ms; 0 means Kafka's 30 s.
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms; 0 means Kafka's
	// 500 ms.
	ReplicaFetchWaitMax time.Duration
	// NumReplicaFetchers is num.replica.fetchers; 0 means Kafka's 1.
	NumReplicaFetchers int
	// ReplicaFetchBackoff is replica.fetch.backoff.ms; 0 means Kafka's 1 s.
	ReplicaFetchBackoff time.Duration
	// ReplicaFetchMinBytes, ReplicaFetchMaxBytes and
	// ReplicaFetchResponseMaxBytes are replica.fetch.min.bytes (1),
	// replica.fetch.max.bytes (1 MiB) and replica.fetch.response.max.bytes
	// (10 MiB).
	ReplicaFetchMinBytes         int32
	ReplicaFetchMaxBytes         int32
	ReplicaFetchResponseMaxBytes int32
	// MinInsyncReplicas is min.insync.replicas from the broker's own
	// configuration: the default below a topic's config and the dynamic
	// cluster default. 0 means Kafka's 1.
	MinInsyncReplicas int
}

// Server is one node of the cluster: a listener, the dispatcher behind it
// and the node's parts. Its methods are safe for concurrent use.
type Server struct {
	cfg  Config
	id   int32
	raft *quorum.Node
	log  *slog.Logger
	// loader is the current (or last) incarnation's metadata loader.
	loader atomic.Pointer[loader.Loader]
	// ctl is a controller's current (or last) quorum controller.
	ctl atomic.Pointer[controller.QuorumController]
	// lifecycle is a broker's current (or last) lifecycle manager.
	lifecycle atomic.Pointer[LifecycleManager]
	// replicas is a broker's current (or last) ReplicaManager.
	replicas atomic.Pointer[ReplicaManager]
	// parts are the publishers of the incarnation being started, for its
	// loader; set under life before the raft client starts.
	parts []loader.Publisher

	// life serialises Start, Stop and Kill.
	life sync.Mutex

	mu       sync.Mutex
	listener *wire.Server // nil while not running
	addr     string
}

// New checks cfg and returns a server that is not started yet.
func New(cfg Config) (*Server, error) {
	id := cfg.Raft.Raft.NodeID
	voter := slices.Contains(cfg.Raft.Raft.Voters, id)
	switch {
	case cfg.Kind == Controller && !voter:
		return nil, fmt.Errorf("node %d: a controller must be one of the voters %v", id, cfg.Raft.Raft.Voters)
	case cfg.Kind == Broker && voter:
		return nil, fmt.Errorf("node %d: a broker cannot be a voter %v", id, cfg.Raft.Raft.Voters)
	case cfg.Kind != Controller && cfg.Kind != Broker:
		return nil, fmt.Errorf("node %d: unknown kind %v", id, cfg.Kind)
	case cfg.Raft.Secret == "":
		return nil, fmt.Errorf("node %d: no member secret (see LoadSecret)", id)
	case cfg.Raft.NewListener != nil:
		return nil, fmt.Errorf("node %d: the server makes its raft client's listener (its metadata loader); Raft.NewListener must be nil", id)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Raft.Logger == nil {
		cfg.Raft.Logger = cfg.Logger
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s := &Server{cfg: cfg, id: id, log: cfg.Logger.With("node", id), addr: cfg.Addr}
	// The loader runs on a queue of its own, as Kafka's MetadataLoader
	// does on its event queue: decoding records and building images stays
	// off the raft client's loop.
	cfg.Raft.NewListener = func() quorum.Listener { return quorum.NewListenerQueue(s.newLoader()) }
	q, err := quorum.NewNode(cfg.Raft)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", id, err)
	}
	s.raft = q
	return s, nil
}

// newLoader makes the metadata loader of a new incarnation: a restart
// replays the log, from the latest snapshot, into a fresh one.
func (s *Server) newLoader() quorum.Listener {
	pubs := slices.Clone(s.parts)
	if s.cfg.Publishers != nil {
		pubs = append(pubs, s.cfg.Publishers()...)
	}
	l := loader.New(loader.Config{NodeID: s.id, Publishers: pubs, OnEvent: s.cfg.OnLoaderEvent, Logger: s.cfg.Logger})
	s.loader.Store(l)
	return l
}

// Loader is the metadata loader of the node's current incarnation, or of
// its last one while it is stopped; nil before the first start.
func (s *Server) Loader() *loader.Loader { return s.loader.Load() }

// Controller is a controller's quorum controller of its current
// incarnation, or of its last one while it is stopped; nil on a broker and
// before the first start.
func (s *Server) Controller() *controller.QuorumController { return s.ctl.Load() }

// Lifecycle is a broker's lifecycle manager of its current incarnation,
// or of its last one while it is stopped; nil on a controller and before
// the first start.
func (s *Server) Lifecycle() *LifecycleManager { return s.lifecycle.Load() }

// ReplicaManager is a broker's ReplicaManager of its current incarnation,
// or of its last one while it is stopped; nil on a controller and before
// the first start.
func (s *Server) ReplicaManager() *ReplicaManager { return s.replicas.Load() }

// servedImage is the image a broker answers Metadata from: the one its
// ReplicaManager has reconciled (see appliedImage), or the loader's
// before it has a manager.
func (s *Server) servedImage() *image.MetadataImage {
	if rm := s.ReplicaManager(); rm != nil && s.Loader() != nil {
		return rm.AppliedImage()
	}
	return s.image()
}

// image is the current incarnation's published metadata image.
func (s *Server) image() *image.MetadataImage {
	if l := s.Loader(); l != nil {
		return l.Image()
	}
	return image.Empty
}

// appliedOffset is the last offset the current loader applied, -1 before
// any.
func (s *Server) appliedOffset() int64 {
	if l := s.Loader(); l != nil {
		return l.Metrics().LastAppliedRecordOffset
	}
	return -1
}

// ID is the node's id.
func (s *Server) ID() int32 { return s.id }

// Kind is what the node is.
func (s *Server) Kind() Kind { return s.cfg.Kind }

// Raft is the node's raft client: its status, and Append, Resign and
// Snapshot on it.
func (s *Server) Raft() *quorum.Node { return s.raft }

// Addr is the node's listener address; before the first start it may have
// port 0.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Running reports whether the server's listener is open.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listener != nil
}

// Start starts the node's parts from its folder, then opens its listener
// with the APIs the parts registered. It fails if the node runs.
func (s *Server) Start(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.Running() {
		return errors.New("it is already running")
	}
	mux := wire.NewMux()
	var fwd *forwarder
	var ctl *controller.QuorumController
	var rm *ReplicaManager
	var pids *producerIDManager
	s.parts = nil
	switch s.cfg.Kind {
	case Controller:
		if err := s.raft.Register(mux); err != nil {
			return err
		}
		if err := s.registerDescribeControllers(mux); err != nil {
			return err
		}
		var err error
		if ctl, err = s.newController(mux); err != nil {
			return err
		}
		// Brokers forward their clients' admin requests in envelopes, as
		// a real Kafka broker that joins the controllers does.
		if err := mux.ServeEnvelopes(); err != nil {
			ctl.Close()
			return fmt.Errorf("node %d: %w", s.id, err)
		}
	case Broker:
		fwd = newForwarder(s)
		if err := fwd.register(mux); err != nil {
			return err
		}
		if err := cache.Register(mux, s.servedImage, s.cfg.Raft.Raft.ClusterID, s.id, listenerName); err != nil {
			fwd.close()
			return fmt.Errorf("node %d: %w", s.id, err)
		}
		var err error
		if rm, err = s.newReplicaManager(mux, fwd.ch); err != nil {
			fwd.close()
			return err
		}
		if pids, err = s.newProducerIDManager(mux, fwd.ch); err != nil {
			rm.Close()
			fwd.close()
			return err
		}
	}
	var lm *LifecycleManager
	stopParts := func() {
		if ctl != nil {
			ctl.Close()
		}
		if lm != nil {
			lm.Close()
		}
		if rm != nil {
			rm.Close()
		}
		if pids != nil {
			pids.close()
		}
		if fwd != nil {
			fwd.close()
		}
	}
	if err := s.raft.Start(ctx); err != nil {
		stopParts()
		return err
	}
	lc := s.cfg.Listener
	ln, err := wire.Listen(wire.ServerConfig{
		Addr:                      s.Addr(),
		NodeID:                    s.id,
		ClusterID:                 s.cfg.Raft.Raft.ClusterID,
		APIs:                      mux.APIs(),
		Handler:                   mux,
		MaxFrameSize:              lc.SocketRequestMaxBytes,
		QueuedMaxRequestBytes:     lc.QueuedMaxRequestBytes,
		MaxConnections:            lc.MaxConnections,
		MaxConnectionsPerIP:       lc.MaxConnectionsPerIP,
		IdleTimeout:               lc.ConnectionsMaxIdle,
		FailedAuthenticationDelay: lc.FailedAuthenticationDelay,
		SaslMaxReceiveSize:        lc.SaslServerMaxReceiveSize,
		AuthenticationTimeout:     lc.SaslAuthenticationTimeout,
		Secret:                    s.cfg.Raft.Secret,
		Counters:                  s.cfg.Raft.Counters,
		Logger:                    s.log,
	})
	if err != nil {
		s.raft.Kill()
		stopParts()
		return err
	}
	s.mu.Lock()
	s.listener, s.addr = ln, ln.Addr()
	s.mu.Unlock()
	if fwd != nil {
		// Registered once the listener has its port: the registration
		// carries it.
		if lm, err = s.newLifecycle(fwd); err != nil {
			s.closeListener(ln)
			s.raft.Kill()
			stopParts()
			return err
		}
	}
	// The raft client also ends by itself, on a disk failure: the whole
	// node goes down with it.
	done := s.raft.Done()
	go func() {
		<-done
		s.closeListener(ln)
		stopParts()
	}()
	return nil
}

func (s *Server) closeListener(ln *wire.Server) {
	ln.Close()
	s.mu.Lock()
	if s.listener == ln {
		s.listener = nil
	}
	s.mu.Unlock()
}

func (s *Server) running() *wire.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listener
}

// Stop shuts the node down gracefully: its raft client resigns if it
// leads and keeps serving until a successor is known or ctx ends; then the
// listener closes.
func (s *Server) Stop(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	ln := s.running()
	if ln == nil {
		return quorum.ErrNotRunning
	}
	var shutdownErr error
	if lm := s.Lifecycle(); lm != nil && s.cfg.Kind == Broker {
		// Kafka's controlled shutdown: the controller moves the broker's
		// leaderships away before it goes.
		shutdownErr = lm.Shutdown(ctx)
	}
	err := s.raft.Stop(ctx)
	s.closeListener(ln)
	if rm := s.ReplicaManager(); rm != nil {
		// Closed here, not only when the raft client's end is noticed, so
		// that the logs are flushed and closed when Stop returns.
		rm.Close()
	}
	return errors.Join(err, shutdownErr)
}

// Kill stops the node at once, as a crash: the listener and its
// connections close first, so nothing is answered after the crash, then
// every part stops without flushing.
func (s *Server) Kill() error {
	s.life.Lock()
	defer s.life.Unlock()
	ln := s.running()
	if ln == nil {
		return quorum.ErrNotRunning
	}
	s.closeListener(ln)
	if rm := s.ReplicaManager(); rm != nil {
		rm.kill()
	}
	if err := s.raft.Kill(); err != nil && !errors.Is(err, quorum.ErrNotRunning) {
		return err
	}
	return nil
}

// newController makes the quorum controller of a new incarnation: it
// serves its APIs on mux and learns the committed metadata and the
// leadership from the incarnation's loader.
func (s *Server) newController(mux *wire.Mux) (*controller.QuorumController, error) {
	c := s.cfg.Controller
	ctl, err := controller.New(controller.Config{
		NodeID:                   s.id,
		ClusterID:                s.cfg.Raft.Raft.ClusterID,
		Raft:                     s.raft,
		SessionTimeout:           c.SessionTimeout,
		NoOpInterval:             c.NoOpInterval,
		DefaultNumPartitions:     c.DefaultNumPartitions,
		DefaultReplicationFactor: c.DefaultReplicationFactor,
		UncleanLeaderElection:    c.UncleanLeaderElectionEnable,
		UncleanElectionInterval:  c.UncleanLeaderElectionInterval,
		OnEvent:                  c.OnEvent,
		Logger:                   s.log,
	})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	if err := ctl.Register(mux); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	s.parts = append(s.parts, loader.PublisherFuncs{
		Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
			ctl.HandleCommittedImage(img)
		},
		Leader: ctl.HandleLeaderChange,
	})
	s.ctl.Store(ctl)
	return ctl, nil
}

// listenerName is the name brokers register their listener under and
// answer Metadata for, Kafka's default.
const listenerName = "PLAINTEXT"

// newLifecycle starts a broker's lifecycle manager for a new incarnation:
// it registers with the active controller through the forwarder's
// connections and heartbeats with the loader's applied offset.
func (s *Server) newLifecycle(fwd *forwarder) (*LifecycleManager, error) {
	cfg, err := brokerLifecycleConfig(s, fwd.ch, s.appliedOffset)
	if err != nil {
		return nil, err
	}
	dir, err := directoryID(s.cfg.Raft.Dir, s.cfg.Raft.Raft.ClusterID, s.id)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	cfg.LogDirs = []record.Uuid{dir}
	cfg.HeartbeatInterval = s.cfg.Broker.HeartbeatInterval
	cfg.OnEvent = s.cfg.Broker.OnEvent
	lm, err := NewLifecycleManager(cfg)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	lm.Start()
	s.lifecycle.Store(lm)
	return lm, nil
}

// newReplicaManager makes a broker's ReplicaManager for a new
// incarnation: its partitions live in the node's folder, its fetchers
// reach the other brokers as members through the playground's links, and
// it asks the active controller for ISR changes through ch.
func (s *Server) newReplicaManager(mux *wire.Mux, ch *controllerChannel) (*ReplicaManager, error) {
	rm, err := newReplicaManager(replicaManagerConfig{
		id:  s.id,
		dir: s.cfg.Raft.Dir,
		log: s.log,
		brokerEpoch: func() int64 {
			if lm := s.Lifecycle(); lm != nil {
				return lm.BrokerEpoch()
			}
			return -1
		},
		controller: func() int32 { return s.raft.Status().LeaderID },
		ctl:        ch,
		client:     ch.cfg,
		lagTimeMax: s.cfg.Broker.ReplicaLagTimeMax,
		minInsync:  s.cfg.Broker.MinInsyncReplicas,
		fetchers: fetcher.Config{
			NumReplicaFetchers:    s.cfg.Broker.NumReplicaFetchers,
			FetchWaitMax:          s.cfg.Broker.ReplicaFetchWaitMax,
			FetchMinBytes:         s.cfg.Broker.ReplicaFetchMinBytes,
			FetchMaxBytes:         s.cfg.Broker.ReplicaFetchMaxBytes,
			FetchResponseMaxBytes: s.cfg.Broker.ReplicaFetchResponseMaxBytes,
			FetchBackoff:          s.cfg.Broker.ReplicaFetchBackoff,
		},
		flush: s.cfg.Raft.Flush,
	})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	if err := rm.register(mux); err != nil {
		rm.Close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	s.parts = append(s.parts, rm.publisher())
	s.replicas.Store(rm)
	return rm, nil
}
