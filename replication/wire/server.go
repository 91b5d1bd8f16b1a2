package wire

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// Addr is the TCP address to listen on; empty means 127.0.0.1:0.
	Addr string
	// NodeID is the node the server belongs to, for Counters and for the
	// KIP-1242 check of ApiVersions v5 requests.
	NodeID int32
	// ClusterID, if set, is checked against ApiVersions v5 requests that
	// name a cluster (REBOOTSTRAP_REQUIRED on mismatch).
	ClusterID string
	// APIs are the APIs and versions Handler serves; ApiVersions answers
	// with exactly these. ApiVersions itself is answered by the server and
	// must not be listed.
	APIs []APIRange
	// Handler serves every request for an API and version in APIs.
	Handler Handler
	// MaxFrameSize bounds a request frame (Kafka's socket.request.max.bytes,
	// 100 MiB there); 0 means ControllerMaxFrameSize. A broker listener
	// passes BrokerMaxFrameSize. A larger frame closes the connection
	// before anything is allocated for it.
	MaxFrameSize int32
	// QueuedMaxRequestBytes bounds the memory that requests hold across
	// all of the server's connections, as Kafka's queued.max.request.bytes
	// does (unbounded there by default). It is two pools of this size: a
	// request is charged its frame in the first before it is read, and
	// decodeAmplification times its frame in the second before it is
	// decoded (cut to what the decoded request really holds for frames of
	// 64 KiB and more), until it is answered. A connection whose next frame
	// finds a pool exhausted stops reading until requests are answered; a
	// frame larger than the pool is still served once the pool drains. The
	// two pools keep a frame that waits to be decoded from holding back
	// the answers that would make room for it. Peak memory is about twice
	// this plus MaxFrameSize times (1 + decodeAmplification). 0 means
	// DefaultQueuedMaxRequestBytes; negative means unbounded.
	QueuedMaxRequestBytes int64
	// MaxConnections bounds the server's open connections (Kafka's
	// max.connections, unbounded there by default): at the limit the
	// server stops accepting, and new connections wait in the listen
	// backlog, as Kafka's acceptor waits for a slot. 0 means
	// DefaultMaxConnections; negative means unbounded.
	MaxConnections int
	// MaxConnectionsPerIP bounds the connections from one IP address
	// (Kafka's max.connections.per.ip, unbounded by default): a connection
	// over it is accepted and closed at once, as Kafka does. 0 or
	// negative means no limit beyond MaxConnections; every kraftlab node
	// and tool connects from 127.0.0.1.
	MaxConnectionsPerIP int
	// IdleTimeout closes a connection that has no request in flight and
	// has neither sent nor received for this long (Kafka's
	// connections.max.idle.ms, 10 minutes, for brokers and controllers
	// alike). 0 means DefaultIdleTimeout; negative means never.
	IdleTimeout time.Duration
	// FrameTimeout bounds the time from a frame's size to its last byte
	// (from when the pool grants the frame), so that a peer that sends
	// part of a frame and stalls cannot hold the memory it reserved
	// (Kafka has only the idle timeout for this). 0 means
	// DefaultFrameTimeout; negative means never.
	FrameTimeout time.Duration
	// Secret, if set, is the playground's member secret: the server
	// answers SaslHandshake and SaslAuthenticate (SCRAM-SHA-256 as
	// MemberUser with this password), a connection that authenticates
	// is a member, and APIs marked MembersOnly are refused to every other
	// connection with CLUSTER_AUTHORIZATION_FAILED. SASL is optional per
	// connection: one that does not start with SaslHandshake is
	// anonymous. Empty means no SASL and every connection counts as a
	// member, as on a Kafka PLAINTEXT listener without an authorizer.
	Secret string
	// Counters, if set, counts the requests this node receives and the
	// responses it sends, and the authentications and requests it
	// refuses.
	Counters *Counters
	// Logger receives connection errors, each with the peer's address;
	// nil discards them.
	Logger *slog.Logger
}

// Handler serves Kafka requests.
type Handler interface {
	// ServeKafka handles a decoded request for a served API and version.
	// It runs on the connection's reader goroutine and must not block:
	// it calls req.Respond now, or later from any goroutine (a parked
	// long-poll Fetch). Responses still leave each connection in
	// request order, so a parked request holds back the responses to
	// the requests behind it on that connection, as in Kafka. A request
	// keeps its charge in the server's memory pool until it is answered,
	// so parked requests must be answered within a bounded time.
	ServeKafka(req *Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(req *Request)

// ServeKafka calls f(req).
func (f HandlerFunc) ServeKafka(req *Request) { f(req) }

// Defaults for ServerConfig.
const (
	// ControllerMaxFrameSize is the default request frame cap, sized for
	// controller listeners: KRaft's requests are a few hundred bytes
	// (Fetch, Vote, BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum,
	// FetchSnapshot), and a controller's broker-facing requests
	// (registration, heartbeats, topic creation) fit easily.
	ControllerMaxFrameSize = 1 << 20
	// BrokerMaxFrameSize is the request frame cap for broker listeners:
	// room for a Produce of about 1 MiB of records (Kafka's
	// message.max.bytes and the producer's max.request.size) several times
	// over.
	BrokerMaxFrameSize = 4 << 20
	// DefaultQueuedMaxRequestBytes is the default request memory pool of
	// a server.
	DefaultQueuedMaxRequestBytes = 32 << 20
	// DefaultMaxConnections is the default bound on a server's
	// connections; an idle connection costs one goroutine and a 4 KiB
	// read buffer.
	DefaultMaxConnections = 1024
	// DefaultIdleTimeout is Kafka's connections.max.idle.ms.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultFrameTimeout is Kafka's request.timeout.ms default: by then
	// the client has given the request up.
	DefaultFrameTimeout = 30 * time.Second
)

// maxInFlight bounds the requests a connection may have unanswered; beyond
// it the server stops reading from that connection until responses go out.
const maxInFlight = 256

// Server accepts Kafka protocol connections and serves them with a Handler.
type Server struct {
	cfg      ServerConfig
	apis     *apiTable
	cred     *scramCredential // nil: no SASL, everyone is a member
	ln       net.Listener
	log      *slog.Logger
	counters *nodeCounters
	frames   memPool       // request frames being read or not yet answered
	decoded  memPool       // what decoding those frames may allocate
	slots    chan struct{} // one per open connection; nil: unbounded
	done     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	conns    map[*serverConn]struct{}
	perIP    map[string]int
	nextConn uint64
	closed   bool
}

// Listen validates cfg, listens on cfg.Addr and starts serving.
func Listen(cfg ServerConfig) (*Server, error) {
	if cfg.Handler == nil {
		return nil, errors.New("wire: server needs a handler")
	}
	apis, err := newAPITable(cfg.APIs, cfg.Secret != "")
	if err != nil {
		return nil, fmt.Errorf("wire: server APIs: %w", err)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = ControllerMaxFrameSize
	}
	if cfg.QueuedMaxRequestBytes == 0 {
		cfg.QueuedMaxRequestBytes = DefaultQueuedMaxRequestBytes
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.FrameTimeout == 0 {
		cfg.FrameTimeout = DefaultFrameTimeout
	}
	if cfg.Counters == nil {
		cfg.Counters = NewCounters()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var cred *scramCredential
	if cfg.Secret != "" {
		if cred, err = newScramCredential(cfg.Secret); err != nil {
			return nil, fmt.Errorf("wire: server: %w", err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("wire: listen on %s: %w", cfg.Addr, err)
	}
	s := &Server{
		cfg:      cfg,
		apis:     apis,
		cred:     cred,
		ln:       ln,
		log:      log.With("node", cfg.NodeID, "listener", ln.Addr().String()),
		counters: cfg.Counters.node(cfg.NodeID),
		frames:   memPool{limit: cfg.QueuedMaxRequestBytes},
		decoded:  memPool{limit: cfg.QueuedMaxRequestBytes},
		done:     make(chan struct{}),
		conns:    make(map[*serverConn]struct{}),
		perIP:    make(map[string]int),
	}
	if cfg.MaxConnections > 0 {
		s.slots = make(chan struct{}, cfg.MaxConnections)
	}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening and closes every connection at once, without
// waiting for unanswered requests; responses the handler gives later are
// discarded. It returns when the server's goroutines have exited.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	close(s.done)
	err := s.ln.Close()
	for _, c := range conns {
		c.close()
	}
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("wire: close listener %s: %w", s.ln.Addr(), err)
	}
	return nil
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		// At MaxConnections, wait for a slot before accepting, as
		// Kafka's ConnectionQuotas.waitForConnectionSlot does.
		if s.slots != nil {
			select {
			case s.slots <- struct{}{}:
			case <-s.done:
				return
			}
		}
		nc, err := s.ln.Accept()
		if err != nil {
			s.freeSlot()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off as
			// net/http does rather than spin.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Error("accept failed", "err", err, "retry_in", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.done:
				t.Stop()
				return
			}
			continue
		}
		backoff = 0
		s.serve(nc)
	}
}

func (s *Server) freeSlot() {
	if s.slots != nil {
		<-s.slots
	}
}

func (s *Server) serve(nc net.Conn) {
	ip := nc.RemoteAddr().String()
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		ip = a.IP.String()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		s.freeSlot()
		return
	}
	// Over max.connections.per.ip: accepted and closed at once, as
	// Kafka's acceptor does on TooManyConnectionsException.
	if max := s.cfg.MaxConnectionsPerIP; max > 0 && s.perIP[ip] >= max {
		s.mu.Unlock()
		nc.Close()
		s.freeSlot()
		s.log.Info("rejected connection: address already has the maximum of connections", "peer", nc.RemoteAddr().String(), "max", max)
		return
	}
	s.perIP[ip]++
	s.nextConn++
	c := newServerConn(s, s.nextConn, nc, ip)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go c.readLoop()
}

func (s *Server) forget(c *serverConn) {
	s.mu.Lock()
	delete(s.conns, c)
	if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
		delete(s.perIP, c.ip)
	}
	s.mu.Unlock()
	s.freeSlot()
}
