package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// serverConn is one accepted connection: a reader goroutine that reads,
// decodes and hands requests to the handler, and a writer goroutine, started
// only while answers are waiting to go out, that sends them in request
// order. An idle connection costs one goroutine and its read buffer.
type serverConn struct {
	s    *Server
	id   uint64
	nc   net.Conn
	peer string
	ip   string
	// ports names the connection in stamps (stamps.go).
	ports  uint32
	closed chan struct{}
	once   sync.Once
	// clientID is the last client id seen, reused while it stays the
	// same to save an allocation per request. Reader only.
	clientID string
	// auth is where the connection is in authenticating, scram the
	// exchange under way, authDeadline when it must be done by (zero:
	// no bound), probationR the reader's copy of probation (set at
	// accept, cleared once a slot is the connection's). Reader only,
	// but authDeadline and probationR are set before the reader starts.
	auth         authState
	scram        *scramServer
	authDeadline time.Time
	probationR   bool
	// lastActive is when a frame was last read or responses last
	// written, in UnixNano: for the idle timeout, and to choose the
	// least recently used connection to close when room is needed.
	lastActive atomic.Int64

	// Guarded by s.mu.
	member    bool          // authenticated as a member
	probation bool          // accepted over a limit; see conns.go
	overIP    bool          // the limit was max.connections.per.ip
	countsIP  bool          // counted in s.perIP
	granted   chan struct{} // closed when a waiting probation ends

	mu sync.Mutex
	// queue holds the requests not yet written, in arrival order,
	// answered or not.
	queue   []*Request
	writing bool          // a writer goroutine runs
	dead    bool          // closed: no writer may start
	room    chan struct{} // the writer made progress
	// peeking: the reader waits for the peer's next byte (or its close)
	// while a request is in flight; the writer wakes it when the turn
	// comes.
	peeking bool
	// wbuf is the writer's buffer, kept between bursts while small.
	wbuf []byte
}

// connReadBuffer is the read buffer of a server connection: small frames
// that arrive together are read with one system call, larger ones are read
// straight into the frame.
const connReadBuffer = 4 << 10

// peerCheckInterval is how often a connection whose peer pipelined bytes
// behind a request in flight asks the system whether the peer is gone.
const peerCheckInterval = time.Second

// aLongTimeAgo is a read deadline that wakes a blocked read at once.
var aLongTimeAgo = time.Unix(1, 0)

func newServerConn(s *Server, id uint64, nc net.Conn, ip string) *serverConn {
	c := &serverConn{
		s:       s,
		id:      id,
		nc:      nc,
		peer:    nc.RemoteAddr().String(),
		ports:   connPorts(nc.RemoteAddr(), nc.LocalAddr()),
		ip:      ip,
		closed:  make(chan struct{}),
		room:    make(chan struct{}, 1),
		granted: make(chan struct{}),
	}
	c.lastActive.Store(c.s.cfg.Clock.Now().UnixNano())
	return c
}

// close closes the connection. Answered requests give their charges
// back; one still with the handler keeps what it holds charged until the
// handler answers it (Respond on a closed connection releases it), so
// that a handler cannot hold memory the pools no longer see.
func (c *serverConn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.nc.Close()
		c.mu.Lock()
		c.dead = true
		for _, r := range c.queue {
			if r.answered {
				c.releaseLocked(r)
			}
		}
		c.queue = nil
		c.mu.Unlock()
		c.s.forget(c)
	})
}

func (c *serverConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// trusted reports whether the connection may pipeline and draws on the
// members' pools: it authenticated as a member, or the server has no
// secret and everyone is one. Reader only.
func (c *serverConn) trusted() bool { return c.auth == authMember || c.s.cred == nil }

var (
	errIdle        = errors.New("idle")
	errAuthTimeout = errors.New("not authenticated in time")
)

func (c *serverConn) readLoop() {
	defer c.s.wg.Done()
	defer c.close()
	br := bufio.NewReaderSize(c.nc, connReadBuffer)
	for c.waitTurn(br) {
		err := c.readRequest(br)
		switch {
		case err == nil:
			continue
		case c.isClosed():
		case errors.Is(err, io.EOF):
			c.s.log.Debug("connection closed by peer", "peer", c.peer)
		case errors.Is(err, errCloseAfter):
			// The writer closes the connection once the refusal is
			// out; read nothing more meanwhile.
			t := time.NewTimer(closeAfterTimeout)
			select {
			case <-c.closed:
			case <-t.C:
			}
			t.Stop()
		case errors.Is(err, errIdle):
			c.s.log.Debug("closing idle connection", "peer", c.peer, "idle_timeout", c.s.cfg.IdleTimeout)
		case errors.Is(err, errAuthTimeout):
			c.s.counters.authFailed.Add(1)
			c.s.plog.info("closing connection: not authenticated in time", "peer", c.peer,
				"authentication_timeout", c.s.cfg.AuthenticationTimeout)
		default:
			c.s.plog.error("closing connection", "peer", c.peer, "err", err)
		}
		return
	}
}

// waitTurn waits until the connection may read its next request, and
// reports false once it is closed. A member pipelines up to maxInFlight
// requests. Anyone else has one request in the server at a time, as Kafka
// mutes a channel from a request's arrival until its response is sent:
// what a stranger pipelines waits in its socket, and a stranger that
// reads no answers makes the server read no more. Meanwhile the reader
// watches for the peer's close, so that a closed connection is let go at
// once, not when its parked request ends.
func (c *serverConn) waitTurn(br *bufio.Reader) bool {
	if c.trusted() {
		return c.waitRoom()
	}
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		// Cleared before peeking is set: the writer's wake-up deadline
		// must not be overwritten.
		c.nc.SetReadDeadline(time.Time{})
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			return false
		}
		if len(c.queue) == 0 && !c.writing {
			c.mu.Unlock()
			return true
		}
		pending := br.Buffered() > 0
		c.peeking = !pending
		c.mu.Unlock()
		if pending {
			// The peer pipelined its next request: no read can see
			// its close before that is read, so ask the system.
			if tick == nil {
				tick = time.NewTicker(peerCheckInterval)
			}
			select {
			case <-c.room:
			case <-c.closed:
				return false
			case <-tick.C:
				if peerGone(c.nc) {
					c.s.log.Debug("connection closed by peer with a request in flight", "peer", c.peer)
					return false
				}
			}
			continue
		}
		_, err := br.Peek(1)
		c.mu.Lock()
		c.peeking = false
		c.mu.Unlock()
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			continue // pipelined bytes, or woken by the writer
		}
		if !c.isClosed() {
			c.s.log.Debug("connection closed by peer with a request in flight", "peer", c.peer, "err", err)
		}
		return false
	}
}

// waitRoom blocks while the connection has maxInFlight unanswered requests,
// and reports false once the connection is closed.
func (c *serverConn) waitRoom() bool {
	for {
		c.mu.Lock()
		full := len(c.queue) >= maxInFlight
		c.mu.Unlock()
		if !full {
			return !c.isClosed()
		}
		select {
		case <-c.room:
		case <-c.closed:
			return false
		}
	}
}

// readDeadline returns the earlier of now+d (d > 0) and the login
// deadline; zero means none.
func (c *serverConn) readDeadline(d time.Duration) time.Time {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	if a := c.authDeadline; !a.IsZero() && (t.IsZero() || a.Before(t)) {
		t = a
	}
	return t
}

// authExpired reports whether the connection's login deadline passed.
func (c *serverConn) authExpired() bool {
	return !c.authDeadline.IsZero() && !time.Now().Before(c.authDeadline)
}

// readSize reads the next frame's size, closing the connection with errIdle
// once it has had no request in flight and no traffic for IdleTimeout.
func (c *serverConn) readSize(br *bufio.Reader) (int32, error) {
	var size [4]byte
	idle := c.s.cfg.IdleTimeout
	got := 0
	for {
		c.nc.SetReadDeadline(c.readDeadline(idle))
		n, err := io.ReadFull(br, size[got:])
		got += n
		if err == nil {
			break
		}
		if got == 0 && errors.Is(err, io.EOF) {
			return 0, io.EOF
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, truncated("frame size", got, len(size), err)
		}
		if c.authExpired() {
			return 0, errAuthTimeout
		}
		c.mu.Lock()
		busy := len(c.queue) > 0 || c.writing
		c.mu.Unlock()
		if idle > 0 && !busy && c.s.cfg.Clock.Since(time.Unix(0, c.lastActive.Load())) >= idle {
			if got > 0 {
				return 0, fmt.Errorf("stalled in a frame size (%d of 4 bytes) for %v", got, idle)
			}
			return 0, errIdle
		}
	}
	n := int32(be.Uint32(size[:]))
	switch {
	case n < 0:
		return 0, fmt.Errorf("invalid frame size %d", n)
	case n > c.s.cfg.MaxFrameSize:
		return 0, fmt.Errorf("%w: %d bytes, max %d", ErrFrameTooLarge, n, c.s.cfg.MaxFrameSize)
	}
	return n, nil
}

// frameError explains a frame read that failed on its deadline.
func (c *serverConn) frameError(n int32, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if c.authExpired() {
		return errAuthTimeout
	}
	return fmt.Errorf("frame of %d bytes not complete within %v: %w", n, c.s.cfg.FrameTimeout, err)
}

// peekKey returns the API key of a frame of n bytes whose size was read,
// reading no further than its first two bytes; -1 if the frame is too
// short to have one (parseRequest refuses it).
func (c *serverConn) peekKey(br *bufio.Reader, n int32) (int16, error) {
	if n < 2 {
		return -1, nil
	}
	c.nc.SetReadDeadline(c.readDeadline(c.s.cfg.FrameTimeout))
	b, err := br.Peek(2)
	if err != nil {
		return 0, c.frameError(n, truncated("frame", len(b), int(n), err))
	}
	return int16(be.Uint16(b)), nil
}

// admit checks a frame of n bytes for API key against the limits that
// do not depend on its body, and returns the pools it is charged to
// (nil: the connection closed while it waited for a slot).
func (c *serverConn) admit(n int32, key int16) (*pools, error) {
	s := c.s
	sasl := key == saslHandshakeKey || key == saslAuthenticateKey
	if s.cred != nil && (sasl || c.auth == authHandshaking) && n > s.cfg.SaslMaxReceiveSize {
		return nil, fmt.Errorf("%s frame of %d bytes during authentication, more than sasl.server.max.receive.size %d",
			apiName(key), n, s.cfg.SaslMaxReceiveSize)
	}
	if key != produceKey && n > maxStructuredFrame {
		return nil, fmt.Errorf("%s request of %d bytes: requests other than Produce may have at most %d, as decoding one may allocate %d times its size",
			apiName(key), n, maxStructuredFrame, decodeAmplification)
	}
	login := key == apiVersionsKey || (sasl && s.cred != nil)
	if c.probationR && !login {
		ok, err := c.takeSlot()
		if !ok {
			return nil, err
		}
	}
	preAuth := s.cred != nil && (c.auth == authNone || c.auth == authHandshaking)
	if c.trusted() || (preAuth && login && n <= handshakeFrameMax) {
		return s.members, nil
	}
	return s.others, nil
}

// readRequest reads, decodes and dispatches one request. Its memory is
// charged to the server's pools before it is read and decoded, and released
// when its answer leaves (or when its connection closes, if answered). An
// error closes the connection.
func (c *serverConn) readRequest(br *bufio.Reader) (err error) {
	n, err := c.readSize(br)
	if err != nil {
		return err
	}
	key, err := c.peekKey(br, n)
	if err != nil {
		return err
	}
	p, err := c.admit(n, key)
	if p == nil {
		return err
	}
	held, charge := int64(n), int64(0)
	if !p.frames.acquire(held, c.closed) {
		return nil
	}
	defer func() { // whatever is not handed to a Request
		p.frames.release(held)
		p.decoded.release(charge)
	}()
	c.nc.SetReadDeadline(c.readDeadline(c.s.cfg.FrameTimeout))
	frame, err := readFrameBody(br, n)
	if err != nil {
		return c.frameError(n, err)
	}
	c.lastActive.Store(c.s.cfg.Clock.Now().UnixNano())

	h, body, rest, err := parseRequest(frame)
	if err != nil {
		return err
	}
	c.s.counters.requestsReceived.add(h.key, 4+len(frame))
	c.s.counters.stamper.stamp(ServerRead, c.s.counters.id, h.key, h.correlationID, c.ports, 4+len(frame))
	if string(h.clientID) != c.clientID {
		c.clientID = string(h.clientID)
	}
	req := &Request{Body: body, CorrelationID: h.correlationID, ClientID: c.clientID, Peer: c.nc.RemoteAddr(), ConnID: c.id, conn: c, pools: p}
	req.Member, req.Principal = c.auth == authMember || c.s.cred == nil, AnonymousPrincipal
	if c.auth == authMember {
		req.Principal = MemberPrincipal
	}
	if !c.s.apis.serves(h.key, h.version) {
		if h.key != apiVersionsKey {
			// Kafka's Processor.parseRequestHeader refuses an API
			// the listener does not enable, or a version outside
			// its range, and the connection is closed unanswered.
			return fmt.Errorf("%s v%d (correlation id %d) is not served (UNSUPPORTED_VERSION): closing as Kafka does",
				apiName(h.key), h.version, h.correlationID)
		}
		c.s.log.Debug("answered UNSUPPORTED_VERSION", "peer", c.peer, "api", apiName(h.key), "version", h.version)
		req.held, held = held, 0
		c.push(req, c.s.apis.unsupportedApiVersions())
		return nil
	}

	// Charge the worst the decoder may allocate before it runs.
	worst := int64(len(frame)) * decodeAmplification
	if h.key == produceKey {
		if worst, err = produceDecodeBound(rest, h.version); err != nil {
			return fmt.Errorf("decode %s v%d request (correlation id %d): %w", apiName(h.key), h.version, h.correlationID, err)
		}
		if worst > maxDecodeCharge {
			return fmt.Errorf("a Produce v%d request (correlation id %d) of %d bytes would decode into %d bytes of topics and partitions, more than the %d a request may",
				h.version, h.correlationID, len(frame), worst, maxDecodeCharge)
		}
	}
	if !p.decoded.acquire(worst, c.closed) {
		return nil
	}
	charge = worst
	if h.key != produceKey && len(frame) >= largeFrame {
		largeDecode.Lock()
		err = decodeBody(body, rest)
		largeDecode.Unlock()
		if err == nil {
			// What the request really holds from now on.
			if real := heldBytes(body); real < charge {
				p.decoded.release(charge - real)
				charge = real
			}
		}
	} else {
		err = decodeBody(body, rest)
	}
	if err != nil {
		return fmt.Errorf("decode %s v%d request (correlation id %d): %w", apiName(h.key), h.version, h.correlationID, err)
	}
	req.held, req.charge, held, charge = held, charge, 0, 0
	if h.key == apiVersionsKey {
		c.push(req, c.s.apis.apiVersions(body.(*kmsg.ApiVersionsRequest), c.s.cfg.ClusterID, c.s.cfg.NodeID, c.s.cfg.Features))
		return nil
	}
	if c.s.cred != nil {
		if h.key == saslHandshakeKey || h.key == saslAuthenticateKey {
			return c.serveSASL(req)
		}
		switch c.auth {
		case authNone:
			c.auth, c.authDeadline = authAnonymous, time.Time{}
		case authHandshaking:
			// Kafka's SaslServerAuthenticator.handleSaslToken:
			// only SaslAuthenticate may follow a handshake.
			resp, ok := errorResponse(body, kerr.IllegalSaslState.Code)
			if !ok {
				c.s.counters.authFailed.Add(1)
				return fmt.Errorf("%s during the SASL exchange (ILLEGAL_SASL_STATE): closing as Kafka does", apiName(h.key))
			}
			return c.failAuth(req, resp, "refused authentication: request during the SASL exchange", "api", apiName(h.key))
		}
		if !req.Member && c.s.apis.membersOnly(h.key) {
			c.s.counters.unauthorized.add(h.key, 1)
			c.s.log.Debug("refused request: members only (CLUSTER_AUTHORIZATION_FAILED)", "peer", c.peer, "api", apiName(h.key))
			resp, _ := errorResponse(body, kerr.ClusterAuthorizationFailed.Code) // refusable: checked by newAPITable
			c.push(req, resp)
			return nil
		}
	}
	c.push(req, nil)
	c.s.cfg.Handler.ServeKafka(req)
	c.settle(req)
	return nil
}

// settle cuts what a request the handler parked keeps charged to what it
// really holds: its decoded structure, and its frame only if a field
// still points into it. A parked long-poll Fetch then holds a few hundred
// bytes of the pools, not its frame and a hundred times that.
func (c *serverConn) settle(req *Request) {
	c.mu.Lock()
	parked := !req.answered && req.held+req.charge > 0
	c.mu.Unlock()
	if !parked {
		return
	}
	real, aliases := footprint(req.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.answered {
		return
	}
	if !aliases {
		req.pools.frames.release(req.held)
		req.held = 0
	}
	if real < req.charge {
		req.pools.decoded.release(req.charge - real)
		req.charge = real
	}
}

// pushLast queues req answered with resp, and closes the connection once
// resp is written.
func (c *serverConn) pushLast(req *Request, resp kmsg.Response) {
	req.closeAfter = true
	c.push(req, resp)
}

// push queues req for the writer, already answered with resp if resp is
// not nil.
func (c *serverConn) push(req *Request, resp kmsg.Response) {
	c.mu.Lock()
	if c.dead {
		if resp != nil {
			req.answered = true
			c.releaseLocked(req)
		}
		c.mu.Unlock()
		return
	}
	if resp != nil {
		req.answered, req.resp = true, resp
	}
	c.queue = append(c.queue, req)
	if resp != nil && len(c.queue) == 1 {
		c.startWriter()
	}
	c.mu.Unlock()
}

// releaseLocked returns what r holds to the server's pools. The caller
// holds c.mu.
func (c *serverConn) releaseLocked(r *Request) {
	if r.pools == nil {
		return
	}
	r.pools.frames.release(r.held)
	r.pools.decoded.release(r.charge)
	r.held, r.charge = 0, 0
}

// startWriter starts the writer unless it runs or the connection is closed.
// The caller holds c.mu and the head of the queue is answered.
func (c *serverConn) startWriter() {
	if c.writing || c.dead {
		return
	}
	c.writing = true
	// The reader still runs (close sets dead under mu before the
	// reader's Done), so the server's WaitGroup is not at zero.
	c.s.wg.Add(1)
	go c.writeLoop()
}

// stopWriting marks the writer gone and wakes a reader waiting for its
// turn. The caller holds c.mu.
func (c *serverConn) stopWriting() {
	c.writing = false
	if c.peeking {
		c.nc.SetReadDeadline(aLongTimeAgo)
	}
}

// writeLoop writes answered requests at the head of the queue until there
// are none, then exits.
func (c *serverConn) writeLoop() {
	defer c.s.wg.Done()
	defer signal(c.room)
	var ready []*Request
	c.mu.Lock()
	buf := c.wbuf
	c.wbuf = nil
	c.mu.Unlock()
	for {
		c.mu.Lock()
		n := 0
		for n < len(c.queue) && c.queue[n].answered {
			n++
		}
		if n == 0 || c.dead {
			c.stopWriting()
			if cap(buf) <= 64<<10 {
				c.wbuf = buf[:0] // keep a small buffer, never a huge one
			}
			c.mu.Unlock()
			return
		}
		last := false
		for _, r := range c.queue[:n] {
			last = last || r.closeAfter
		}
		ready = append(ready[:0], c.queue[:n]...)
		left := copy(c.queue, c.queue[n:])
		clear(c.queue[left:])
		c.queue = c.queue[:left]
		for _, r := range ready {
			c.releaseLocked(r)
		}
		c.mu.Unlock()
		signal(c.room)
		// One write for everything answered so far.
		buf = buf[:0]
		for _, r := range ready {
			if r.resp == nil {
				continue
			}
			start := len(buf)
			buf = appendResponse(buf, r.resp, r.CorrelationID)
			c.s.counters.responsesSent.add(r.resp.Key(), len(buf)-start)
			c.s.counters.stamper.stamp(ServerSent, c.s.counters.id, r.resp.Key(), r.CorrelationID, c.ports, len(buf)-start)
		}
		clear(ready)
		if len(buf) > 0 {
			// A peer that takes none of its answers for this long has
			// given them up (its request timeout), and holds them here.
			if d := c.s.cfg.FrameTimeout; d > 0 {
				c.nc.SetWriteDeadline(time.Now().Add(d))
			}
			// Active from before the write: the peer may act on the
			// answers at once, and the least recently used connection
			// must not be this one for a moment after it answered.
			c.lastActive.Store(c.s.cfg.Clock.Now().UnixNano())
			if _, err := c.nc.Write(buf); err != nil {
				if !c.isClosed() {
					c.s.plog.error("closing connection", "peer", c.peer, "err", fmt.Errorf("write responses: %w", err))
				}
				c.mu.Lock()
				c.stopWriting()
				c.mu.Unlock()
				c.close()
				return
			}
		}
		if last {
			c.mu.Lock()
			c.stopWriting()
			c.mu.Unlock()
			c.close()
			return
		}
		if cap(buf) > allocStep {
			buf = nil // do not pin one huge response's buffer
		}
	}
}
