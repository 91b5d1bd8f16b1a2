package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// Server is one node of the cluster, the part every node shares (Kafka's
// SharedServer with the life KafkaRaftServer gives it): its listener and
// the dispatcher behind it, its raft client and metadata loader, and the
// start, graceful stop, kill and restart that act on the whole node. What
// only one kind of node runs is its ControllerServer or BrokerServer,
// made anew at each start. Its methods are safe for concurrent use.
type Server struct {
	cfg  Config
	id   int32
	raft *quorum.Node
	log  *slog.Logger
	// loader is the current (or last) incarnation's metadata loader.
	loader atomic.Pointer[loader.Loader]
	// controller and broker are the current (or last) incarnation's own
	// parts; only the one of the node's kind is ever set.
	controller atomic.Pointer[ControllerServer]
	broker     atomic.Pointer[BrokerServer]
	zkBroker   atomic.Pointer[ZkBrokerServer]
	// publishers are the loader publishers of the incarnation being
	// started, set under life before the raft client starts.
	publishers []loader.Publisher

	// life serialises Start, Stop and Kill.
	life sync.Mutex

	mu       sync.Mutex
	listener *wire.Server // nil while not running
	addr     string
	// restart is the supervision of a node that stopped on a disk fault
	// (restart.go), nil if none runs; down says a stop or kill by hand
	// came after the last start, so none may begin; streak counts the
	// restarts in a row whose incarnation failed quickly.
	restart *restarter
	down    bool
	streak  int
}

// part is what one kind of node runs beside the shared raft client and
// loader, for one incarnation: a ControllerServer or a BrokerServer. It
// registers its APIs on the incarnation's dispatcher when it is made.
type part interface {
	// listening runs once the listener has its address.
	listening() error
	// shutdown is the first step of a graceful stop, before the raft
	// client stops (a broker's controlled shutdown).
	shutdown(ctx context.Context) error
	// stopped runs when a graceful stop has closed the listener, so that
	// what the part keeps on disk is closed when Stop returns.
	stopped()
	// kill stops the part as a crash, before the raft client is killed.
	kill()
	// close stops the part once its incarnation has ended.
	close()
}

// New checks cfg and returns a server that is not started yet.
func New(cfg Config) (*Server, error) {
	id := cfg.Raft.Raft.NodeID
	voter := slices.Contains(cfg.Raft.Raft.Voters, id)
	// A dynamic quorum (kraft.version 1) has no static voters: any
	// controller may become a voter, and one that joins later starts as an
	// observer.
	dynamic := len(cfg.Raft.Raft.Voters) == 0
	switch {
	case cfg.Kind == Controller && !voter && !dynamic:
		return nil, fmt.Errorf("node %d: a controller must be one of the voters %v", id, cfg.Raft.Raft.Voters)
	case cfg.Kind == Broker && voter:
		return nil, fmt.Errorf("node %d: a broker cannot be a voter %v", id, cfg.Raft.Raft.Voters)
	case cfg.Kind != Controller && cfg.Kind != Broker:
		return nil, fmt.Errorf("node %d: unknown kind %v", id, cfg.Kind)
	case cfg.Raft.Secret == "":
		return nil, fmt.Errorf("node %d: no member secret (see LoadSecret)", id)
	case cfg.ZooKeeper != nil && cfg.Kind != Broker:
		return nil, fmt.Errorf("node %d: only a broker runs in the ZooKeeper era", id)
	case cfg.ZooKeeper != nil && cfg.ZooKeeper.Addr == "":
		return nil, fmt.Errorf("node %d: no ZooKeeper address", id)
	case cfg.Raft.NewListener != nil:
		return nil, fmt.Errorf("node %d: the server makes its raft client's listener (its metadata loader); Raft.NewListener must be nil", id)
	}
	// A broker observes the quorum for ever, also a dynamic one.
	cfg.Raft.ObserverOnly = cfg.Kind == Broker
	if dynamic && cfg.Kind == Controller && cfg.ZooKeeper == nil {
		if err := dynamicVoter(&cfg); err != nil {
			return nil, fmt.Errorf("node %d: %w", id, err)
		}
	}
	// A static quorum's controller names its folder too: it describes
	// itself to the leader with it (UpdateRaftVoter), which a kraft.version
	// upgrade writes into the voter set.
	if (cfg.Kind == Broker || !dynamic) && cfg.ZooKeeper == nil {
		if err := folderDirectoryID(&cfg); err != nil {
			return nil, fmt.Errorf("node %d: %w", id, err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// A fault that fails the same way for every partition on every image
	// (out of file descriptors, say) writes a few lines a second.
	cfg.Logger = slog.New(newRateHandler(cfg.Logger.Handler(), slog.LevelWarn, 0, 0))
	if cfg.Raft.Logger == nil {
		cfg.Raft.Logger = cfg.Logger
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Clock == nil {
		cfg.Clock = cfg.Raft.Clock
	}
	cfg.Raft.Clock = cfg.Clock
	s := &Server{cfg: cfg, id: id, log: cfg.Logger.With("node", id), addr: cfg.Addr}
	if cfg.ZooKeeper != nil {
		// A broker of the ZooKeeper era has no raft client: the
		// controller pushes its metadata.
		return s, nil
	}
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
	pubs := slices.Clone(s.publishers)
	if s.cfg.Publishers != nil {
		pubs = append(pubs, s.cfg.Publishers()...)
	}
	l := loader.New(loader.Config{NodeID: s.id, Publishers: pubs, OnEvent: s.cfg.OnLoaderEvent, Logger: s.cfg.Logger, Clock: s.cfg.Clock})
	s.loader.Store(l)
	return l
}

// Loader is the metadata loader of the node's current incarnation, or of
// its last one while it is stopped; nil before the first start.
func (s *Server) Loader() *loader.Loader { return s.loader.Load() }

// ControllerServer is a controller's own parts of its current
// incarnation, or of its last one while it is stopped; nil on a broker and
// before the first start.
func (s *Server) ControllerServer() *ControllerServer { return s.controller.Load() }

// BrokerServer is a broker's own parts of its current incarnation, or of
// its last one while it is stopped; nil on a controller and before the
// first start.
func (s *Server) BrokerServer() *BrokerServer { return s.broker.Load() }

// Controller is a controller's quorum controller (ControllerServer's),
// nil on a broker and before the first start.
func (s *Server) Controller() *controller.QuorumController {
	if c := s.ControllerServer(); c != nil {
		return c.QuorumController()
	}
	return nil
}

// Lifecycle is a broker's lifecycle manager (BrokerServer's), nil on a
// controller and before the first start.
func (s *Server) Lifecycle() *LifecycleManager {
	if b := s.BrokerServer(); b != nil {
		return b.Lifecycle()
	}
	return nil
}

// ReplicaManager is a broker's ReplicaManager (BrokerServer's or
// ZkBrokerServer's), nil on a controller and before the first start.
func (s *Server) ReplicaManager() *ReplicaManager {
	if b := s.BrokerServer(); b != nil {
		return b.ReplicaManager()
	}
	if b := s.ZkBrokerServer(); b != nil {
		return b.ReplicaManager()
	}
	return nil
}

// ZkBrokerServer is a ZooKeeper-era broker's own parts of its current
// incarnation, or of its last one while it is stopped; nil on any other
// node and before the first start.
func (s *Server) ZkBrokerServer() *ZkBrokerServer { return s.zkBroker.Load() }

// servedImage is the image a broker answers Metadata from: the one its
// ReplicaManager has reconciled (see appliedImage), or the loader's
// before it has a manager or while the manager's registration gate holds
// the metadata back (the leaders it names are the cluster's, as every
// other broker answers).
func (s *Server) servedImage() *image.MetadataImage {
	if rm := s.ReplicaManager(); rm != nil && rm.Applying() && (s.Loader() != nil || s.cfg.ZooKeeper != nil) {
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
// Snapshot on it; nil on a ZooKeeper-era broker.
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
// with the APIs the parts registered. It fails if the node runs. A start by
// hand ends the node's own restarts, if it stopped on a disk fault.
func (s *Server) Start(ctx context.Context) error {
	s.endRestarts(false)
	s.life.Lock()
	defer s.life.Unlock()
	return s.start(ctx)
}

// start is Start with life held.
func (s *Server) start(ctx context.Context) error {
	started := s.cfg.Clock.Now()
	if s.Running() {
		return errors.New("it is already running")
	}
	mux := wire.NewMux()
	s.publishers = nil
	p, err := s.newPart(mux)
	if err != nil {
		return err
	}
	if s.raft == nil {
		return s.startZk(p, mux)
	}
	if err := s.raft.Start(ctx); err != nil {
		p.close()
		return err
	}
	ln, err := wire.Listen(s.listenerConfig(mux))
	if err != nil {
		s.raft.Kill()
		p.close()
		return err
	}
	s.mu.Lock()
	s.listener, s.addr = ln, ln.Addr()
	s.mu.Unlock()
	// A voter names its listener in the voter set (UpdateRaftVoter).
	s.raft.SetListener(ln.Addr())
	if err := p.listening(); err != nil {
		s.closeListener(ln)
		s.raft.Kill()
		p.close()
		return err
	}
	// The raft client also ends by itself, on a disk failure: the whole
	// node goes down with it, and starts again once its folder takes
	// writes (restart.go).
	done := s.raft.Done()
	go func() {
		<-done
		s.closeListener(ln)
		p.close()
		s.maybeRestart(started)
	}()
	return nil
}

// startZk starts a ZooKeeper-era broker: its listener, then its session.
// Its incarnation ends only by Stop or Kill.
func (s *Server) startZk(p part, mux *wire.Mux) error {
	ln, err := wire.Listen(s.listenerConfig(mux))
	if err != nil {
		p.close()
		return err
	}
	s.mu.Lock()
	s.listener, s.addr = ln, ln.Addr()
	s.mu.Unlock()
	if err := p.listening(); err != nil {
		s.closeListener(ln)
		p.close()
		return err
	}
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
// listener closes. It also ends the node's own restarts.
func (s *Server) Stop(ctx context.Context) error {
	s.endRestarts(true)
	s.life.Lock()
	defer s.life.Unlock()
	ln := s.running()
	if ln == nil {
		return quorum.ErrNotRunning
	}
	p := s.part()
	shutdownErr := p.shutdown(ctx)
	if s.raft == nil {
		s.closeListener(ln)
		p.stopped()
		p.close()
		return shutdownErr
	}
	err := s.raft.Stop(ctx)
	s.closeListener(ln)
	p.stopped()
	return errors.Join(err, shutdownErr)
}

// Kill stops the node at once, as a crash: the listener and its
// connections close first, so nothing is answered after the crash, then
// every part stops without flushing. It also ends the node's own restarts.
func (s *Server) Kill() error {
	s.endRestarts(true)
	s.life.Lock()
	defer s.life.Unlock()
	ln := s.running()
	if ln == nil {
		return quorum.ErrNotRunning
	}
	s.closeListener(ln)
	s.part().kill()
	if s.raft == nil {
		s.part().close()
		return nil
	}
	if err := s.raft.Kill(); err != nil && !errors.Is(err, quorum.ErrNotRunning) {
		return err
	}
	return nil
}

// newPart makes the incarnation's own part of the node's kind; its APIs
// go on mux.
func (s *Server) newPart(mux *wire.Mux) (part, error) {
	if s.cfg.Kind == Controller {
		c, err := newControllerServer(s, mux)
		if err != nil {
			return nil, err
		}
		s.controller.Store(c)
		return c, nil
	}
	if s.cfg.ZooKeeper != nil {
		b, err := newZkBrokerServer(s, mux)
		if err != nil {
			return nil, err
		}
		s.zkBroker.Store(b)
		return b, nil
	}
	b, err := newBrokerServer(s, mux)
	if err != nil {
		return nil, err
	}
	s.broker.Store(b)
	return b, nil
}

// part is the running (or last) incarnation's own part.
func (s *Server) part() part {
	if c := s.ControllerServer(); c != nil {
		return c
	}
	if b := s.ZkBrokerServer(); b != nil {
		return b
	}
	return s.BrokerServer()
}

// listenerConfig is the node's listener: its APIs, and the bounds of what
// peers and clients may make it hold (Config.listenerBounds).
func (s *Server) listenerConfig(mux *wire.Mux) wire.ServerConfig {
	c := s.cfg.listenerBounds()
	c.Addr, c.NodeID, c.ClusterID = s.Addr(), s.id, s.cfg.Raft.Raft.ClusterID
	c.APIs, c.Handler = mux.APIs(), mux
	c.Secret, c.Counters, c.Logger = s.cfg.Raft.Secret, s.cfg.Raft.Counters, s.log
	c.Clock = s.cfg.Clock
	if s.cfg.ZooKeeper == nil {
		c.Features = s.apiVersionsFeatures
	}
	return c
}
