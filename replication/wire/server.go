package wire

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	// Features, if set, fills in what ApiVersions v3+ says of feature
	// levels (KIP-584): the ranges the node supports, the finalized
	// levels and their epoch, as Kafka's ApiVersionManager does. It is
	// called on the connection's goroutine for each answer.
	Features func(resp *kmsg.ApiVersionsResponse)
	// MaxFrameSize bounds a request frame: Kafka's
	// socket.request.max.bytes (DefaultMaxFrameSize, 100 MiB, on broker
	// listeners). 0 means ControllerMaxFrameSize. A larger frame closes
	// the connection before anything is allocated for it. Whatever the
	// cap, a request other than Produce is refused above 1 MiB, and a
	// Produce whose structure (not its records) would decode into more
	// than 100 MiB, before either is decoded: decoding may allocate up to
	// 100 times a frame.
	MaxFrameSize int32
	// QueuedMaxRequestBytes bounds the memory that requests hold, as
	// Kafka's queued.max.request.bytes does (unbounded there by default).
	// Members' connections and everyone else's draw on two separate sets
	// of pools of this size each, so strangers can never hold what the
	// playground's own nodes need. Each set is two pools: a request is
	// charged its frame in the first before it is read, and what decoding
	// it may allocate in the second before it is decoded (100 times the
	// frame; cut to what the decoded request really holds for frames of
	// 64 KiB and more; a Produce is charged what its structure costs),
	// until it is answered. A request the handler parks keeps charged
	// only what it really holds. A connection whose next frame finds a
	// pool exhausted stops reading until requests are answered; a frame
	// larger than the pool is still served once the pool drains. 0 means
	// DefaultQueuedMaxRequestBytes; negative means unbounded.
	QueuedMaxRequestBytes int64
	// MaxConnections bounds the server's open connections (Kafka's
	// max.connections, unbounded there by default). Members are always
	// let in, as Kafka always lets in its inter-broker listener: a
	// connection over the limit is accepted on probation; if it
	// authenticates as a member, the least recently used connection of
	// a non-member is closed to make room; if it makes any other request,
	// it waits for a slot, as Kafka's acceptor waits. At most
	// probationMax connections are on probation; a new one closes the
	// least recently used of them. 0 means DefaultMaxConnections;
	// negative means unbounded.
	MaxConnections int
	// MaxConnectionsPerIP bounds the non-member connections from one IP
	// address (Kafka's max.connections.per.ip, unbounded by default). A
	// connection over it is on probation: it may authenticate as a
	// member; any other request closes it, as Kafka closes it at once.
	// Every kraftlab node connects from 127.0.0.1, so members are exempt.
	// 0 or negative means no limit beyond MaxConnections.
	MaxConnectionsPerIP int
	// IdleTimeout closes a connection that has no request in flight and
	// has neither sent nor received for this long (Kafka's
	// connections.max.idle.ms, 10 minutes, for brokers and controllers
	// alike). 0 means DefaultIdleTimeout; negative means never.
	IdleTimeout time.Duration
	// FrameTimeout bounds the time from a frame's size to its last byte
	// (from when the pool grants the frame), so that a peer that sends
	// part of a frame and stalls cannot hold the memory it reserved, and
	// the time a batch of answers takes to be written, so that a peer
	// that reads none cannot hold them (Kafka has only the idle timeout
	// for both). 0 means DefaultFrameTimeout; negative means never.
	FrameTimeout time.Duration
	// FailedAuthenticationDelay delays the answer to a failed
	// authentication, after which the connection closes (Kafka's
	// connection.failed.authentication.delay.ms). 0 means
	// DefaultFailedAuthenticationDelay; negative means no delay.
	FailedAuthenticationDelay time.Duration
	// SaslMaxReceiveSize bounds SaslHandshake and SaslAuthenticate frames,
	// and any frame in the middle of a SASL exchange (Kafka's
	// sasl.server.max.receive.size); a larger one closes the connection.
	// 0 means DefaultSaslMaxReceiveSize.
	SaslMaxReceiveSize int32
	// AuthenticationTimeout bounds the time a connection may take to
	// authenticate: from its SaslHandshake, or from its accept when it
	// came over a connection limit (kraftlab's
	// kraftlab.sasl.authentication.timeout.ms; Kafka has none, only the
	// idle timeout). 0 means DefaultAuthenticationTimeout; negative
	// means never.
	AuthenticationTimeout time.Duration
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
	// Clock is the cluster clock the idle timeout is measured on, so that
	// a pause (which holds the peers' requests at the links) closes no
	// connection as idle; nil is the wall clock.
	Clock *clock.Clock
}

// Handler serves Kafka requests.
type Handler interface {
	// ServeKafka handles a decoded request for a served API and version.
	// It runs on the connection's reader goroutine and must not block:
	// it calls req.Respond now, or later from any goroutine (a parked
	// long-poll Fetch), and must not change req.Body once it returned.
	// Responses still leave each connection in request order, so a
	// parked request holds back the responses to the requests behind it
	// on that connection, as in Kafka. A request keeps what it really
	// holds charged to the server's memory pool until it is answered,
	// even after its connection closed, so every request must be
	// answered, and parked ones within a bounded time.
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
	// DefaultQueuedMaxRequestBytes is the default request memory pool of
	// a server, for members and for everyone else.
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
	// DefaultFailedAuthenticationDelay is Kafka's
	// connection.failed.authentication.delay.ms.
	DefaultFailedAuthenticationDelay = 100 * time.Millisecond
	// DefaultSaslMaxReceiveSize is Kafka's sasl.server.max.receive.size.
	DefaultSaslMaxReceiveSize = 512 << 10
	// DefaultAuthenticationTimeout is a client's whole connection setup
	// (Kafka's socket.connection.setup.timeout.ms, 10 s, and our
	// Client's DialTimeout): a member's login takes milliseconds.
	DefaultAuthenticationTimeout = 10 * time.Second
)

// maxInFlight bounds the requests a member's connection may have
// unanswered; beyond it the server stops reading from that connection
// until responses go out. Anyone else's connection has one at a time.
const maxInFlight = 256

// handshakeFrameMax is the largest ApiVersions, SaslHandshake or
// SaslAuthenticate frame of a connection not yet authenticated that is
// charged to the members' pools: a member's login (about 200 bytes a
// message) must not wait for what strangers hold, and one such frame per
// connection is all a stranger can make them hold.
const handshakeFrameMax = 1 << 10

// Server accepts Kafka protocol connections and serves them with a Handler.
type Server struct {
	cfg      ServerConfig
	apis     *apiTable
	cred     *scramCredential // nil: no SASL, everyone is a member
	ln       net.Listener
	log      *slog.Logger
	plog     *peerLog // what peers cause, at a bounded rate
	counters *nodeCounters
	members  *pools // members' requests, and their logins' first frames
	others   *pools // everyone else's
	done     chan struct{}
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns map[*serverConn]struct{}
	// perIP counts the non-member connections from each address.
	perIP map[string]int
	// slots counts the connections that hold a slot of MaxConnections:
	// every connection but those on probation, members included.
	slots int
	// onProbation counts the connections accepted over a limit that
	// have neither authenticated as members nor got a slot; waiting are
	// those of them that asked for a slot, oldest first.
	onProbation int
	waiting     []*serverConn
	nextConn    uint64
	closed      bool
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
	if cfg.FailedAuthenticationDelay == 0 {
		cfg.FailedAuthenticationDelay = DefaultFailedAuthenticationDelay
	}
	if cfg.SaslMaxReceiveSize <= 0 {
		cfg.SaslMaxReceiveSize = DefaultSaslMaxReceiveSize
	}
	if cfg.AuthenticationTimeout == 0 {
		cfg.AuthenticationTimeout = DefaultAuthenticationTimeout
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
	log = log.With("node", cfg.NodeID, "listener", ln.Addr().String())
	s := &Server{
		cfg:      cfg,
		apis:     apis,
		cred:     cred,
		ln:       ln,
		log:      log,
		plog:     newPeerLog(log),
		counters: cfg.Counters.node(cfg.NodeID),
		members:  newPools(cfg.QueuedMaxRequestBytes),
		others:   newPools(cfg.QueuedMaxRequestBytes),
		done:     make(chan struct{}),
		conns:    make(map[*serverConn]struct{}),
		perIP:    make(map[string]int),
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
	s.plog.close()
	if err != nil {
		return fmt.Errorf("wire: close listener %s: %w", s.ln.Addr(), err)
	}
	return nil
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
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
