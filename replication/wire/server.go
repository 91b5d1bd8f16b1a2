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
	// MaxFrameSize bounds a request frame; 0 means DefaultMaxFrameSize.
	MaxFrameSize int32
	// Counters, if set, counts the requests this node receives and the
	// responses it sends.
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
	// the requests behind it on that connection, as in Kafka.
	ServeKafka(req *Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(req *Request)

// ServeKafka calls f(req).
func (f HandlerFunc) ServeKafka(req *Request) { f(req) }

// maxInFlight bounds the requests a connection may have unanswered; beyond
// it the server stops reading from that connection until responses go out.
const maxInFlight = 256

// Server accepts Kafka protocol connections and serves them with a Handler.
type Server struct {
	cfg      ServerConfig
	apis     *apiTable
	ln       net.Listener
	log      *slog.Logger
	counters *nodeCounters
	done     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	conns    map[*serverConn]struct{}
	nextConn uint64
	closed   bool
}

// Listen validates cfg, listens on cfg.Addr and starts serving.
func Listen(cfg ServerConfig) (*Server, error) {
	if cfg.Handler == nil {
		return nil, errors.New("wire: server needs a handler")
	}
	apis, err := newAPITable(cfg.APIs)
	if err != nil {
		return nil, fmt.Errorf("wire: server APIs: %w", err)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = DefaultMaxFrameSize
	}
	if cfg.Counters == nil {
		cfg.Counters = NewCounters()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("wire: listen on %s: %w", cfg.Addr, err)
	}
	s := &Server{
		cfg:      cfg,
		apis:     apis,
		ln:       ln,
		log:      log.With("node", cfg.NodeID, "listener", ln.Addr().String()),
		counters: cfg.Counters.node(cfg.NodeID),
		done:     make(chan struct{}),
		conns:    make(map[*serverConn]struct{}),
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

func (s *Server) serve(nc net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.nextConn++
	c := newServerConn(s, s.nextConn, nc)
	s.conns[c] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	go c.readLoop()
	go c.writeLoop()
}

func (s *Server) forget(c *serverConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}
