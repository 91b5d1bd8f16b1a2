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
	s      *Server
	id     uint64
	nc     net.Conn
	peer   string
	ip     string
	closed chan struct{}
	once   sync.Once
	// clientID is the last client id seen, reused while it stays the
	// same to save an allocation per request. Reader only.
	clientID string
	// auth is where the connection is in authenticating, scram the
	// exchange under way. Reader only.
	auth  authState
	scram *scramServer
	// lastWrite is when responses last went out, in UnixNano, for the
	// idle timeout.
	lastWrite atomic.Int64

	mu sync.Mutex
	// queue holds the requests not yet written, in arrival order,
	// answered or not.
	queue   []*Request
	writing bool          // a writer goroutine runs
	dead    bool          // closed: no writer may start
	room    chan struct{} // queue has room again
	// wbuf is the writer's buffer, kept between bursts while small.
	wbuf []byte
}

// connReadBuffer is the read buffer of a server connection: small frames
// that arrive together are read with one system call, larger ones are read
// straight into the frame.
const connReadBuffer = 4 << 10

func newServerConn(s *Server, id uint64, nc net.Conn, ip string) *serverConn {
	c := &serverConn{
		s:      s,
		id:     id,
		nc:     nc,
		peer:   nc.RemoteAddr().String(),
		ip:     ip,
		closed: make(chan struct{}),
		room:   make(chan struct{}, 1),
	}
	c.lastWrite.Store(time.Now().UnixNano())
	return c
}

func (c *serverConn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.nc.Close()
		c.mu.Lock()
		c.dead = true
		c.releaseLocked(c.queue)
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

var errIdle = errors.New("idle")

func (c *serverConn) readLoop() {
	defer c.s.wg.Done()
	defer c.close()
	br := bufio.NewReaderSize(c.nc, connReadBuffer)
	for c.waitRoom() {
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
		default:
			c.s.log.Error("closing connection", "peer", c.peer, "err", err)
		}
		return
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

// readSize reads the next frame's size, closing the connection with errIdle
// once it has had no request in flight and no traffic for IdleTimeout.
func (c *serverConn) readSize(br *bufio.Reader) (int32, error) {
	var size [4]byte
	idle := c.s.cfg.IdleTimeout
	got := 0
	for {
		if idle > 0 {
			c.nc.SetReadDeadline(time.Now().Add(idle))
		}
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
		c.mu.Lock()
		busy := len(c.queue) > 0
		c.mu.Unlock()
		if !busy && time.Since(time.Unix(0, c.lastWrite.Load())) >= idle {
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

// readRequest reads, decodes and dispatches one request. Its memory is
// charged to the server's pool before it is read and decoded, and released
// when its answer leaves (or the connection closes). An error closes the
// connection.
func (c *serverConn) readRequest(br *bufio.Reader) (err error) {
	n, err := c.readSize(br)
	if err != nil {
		return err
	}
	held, charge := int64(n), int64(0)
	if !c.s.frames.acquire(held, c.closed) {
		return nil
	}
	defer func() { // whatever is not handed to a Request
		c.s.frames.release(held)
		c.s.decoded.release(charge)
	}()
	if d := c.s.cfg.FrameTimeout; d > 0 {
		c.nc.SetReadDeadline(time.Now().Add(d))
	} else {
		c.nc.SetReadDeadline(time.Time{})
	}
	frame, err := readFrameBody(br, n)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("frame of %d bytes not complete within %v: %w", n, c.s.cfg.FrameTimeout, err)
	}
	if err != nil {
		return err
	}

	h, body, rest, err := parseRequest(frame)
	if err != nil {
		return err
	}
	c.s.counters.requestsReceived.add(h.key, 4+len(frame))
	if string(h.clientID) != c.clientID {
		c.clientID = string(h.clientID)
	}
	req := &Request{Body: body, CorrelationID: h.correlationID, ClientID: c.clientID, Peer: c.nc.RemoteAddr(), ConnID: c.id, conn: c}
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
				kmsg.NameForKey(h.key), h.version, h.correlationID)
		}
		c.s.log.Debug("answered UNSUPPORTED_VERSION", "peer", c.peer, "api", kmsg.NameForKey(h.key), "version", h.version)
		c.push(req, c.s.apis.unsupportedApiVersions())
		return nil
	}

	// Charge the worst the decoder may allocate before it runs.
	worst := int64(len(frame)) * decodeAmplification
	if !c.s.decoded.acquire(worst, c.closed) {
		return nil
	}
	charge = worst
	if len(frame) >= largeFrame {
		largeDecode.Lock()
		err = decodeBody(body, rest)
		largeDecode.Unlock()
		if err == nil {
			// What the request really holds from now on.
			if real := heldBytes(body); real < charge {
				c.s.decoded.release(charge - real)
				charge = real
			}
		}
	} else {
		err = decodeBody(body, rest)
	}
	if err != nil {
		return fmt.Errorf("decode %s v%d request (correlation id %d): %w", kmsg.NameForKey(h.key), h.version, h.correlationID, err)
	}
	req.held, req.charge, held, charge = held, charge, 0, 0
	if h.key == apiVersionsKey {
		c.push(req, c.s.apis.apiVersions(body.(*kmsg.ApiVersionsRequest), c.s.cfg.ClusterID, c.s.cfg.NodeID))
		return nil
	}
	if c.s.cred != nil {
		if h.key == saslHandshakeKey || h.key == saslAuthenticateKey {
			return c.serveSASL(req)
		}
		switch c.auth {
		case authNone:
			c.auth = authAnonymous
		case authHandshaking:
			// Kafka's SaslServerAuthenticator.handleSaslToken:
			// only SaslAuthenticate may follow a handshake.
			c.s.counters.authFailed.Add(1)
			c.s.log.Info("refused authentication: request during the SASL exchange", "peer", c.peer, "api", kmsg.NameForKey(h.key))
			if resp, ok := errorResponse(body, kerr.IllegalSaslState.Code); ok {
				c.pushLast(req, resp)
				return errCloseAfter
			}
			return fmt.Errorf("%s during the SASL exchange (ILLEGAL_SASL_STATE): closing as Kafka does", kmsg.NameForKey(h.key))
		}
		if !req.Member && c.s.apis.membersOnly(h.key) {
			c.s.counters.unauthorized.add(h.key, 1)
			c.s.log.Debug("refused request: members only (CLUSTER_AUTHORIZATION_FAILED)", "peer", c.peer, "api", kmsg.NameForKey(h.key))
			resp, _ := errorResponse(body, kerr.ClusterAuthorizationFailed.Code) // refusable: checked by newAPITable
			c.push(req, resp)
			return nil
		}
	}
	c.push(req, nil)
	c.s.cfg.Handler.ServeKafka(req)
	return nil
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
		c.releaseLocked([]*Request{req})
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

// releaseLocked returns what reqs hold to the server's pools. The caller
// holds c.mu.
func (c *serverConn) releaseLocked(reqs []*Request) {
	var held, charge int64
	for _, r := range reqs {
		held, charge = held+r.held, charge+r.charge
		r.held, r.charge = 0, 0
	}
	c.s.frames.release(held)
	c.s.decoded.release(charge)
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

// writeLoop writes answered requests at the head of the queue until there
// are none, then exits.
func (c *serverConn) writeLoop() {
	defer c.s.wg.Done()
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
			c.writing = false
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
		c.releaseLocked(ready)
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
		}
		clear(ready)
		if len(buf) > 0 {
			if _, err := c.nc.Write(buf); err != nil {
				if !c.isClosed() {
					c.s.log.Error("closing connection", "peer", c.peer, "err", fmt.Errorf("write responses: %w", err))
				}
				c.mu.Lock()
				c.writing = false
				c.mu.Unlock()
				c.close()
				return
			}
			c.lastWrite.Store(time.Now().UnixNano())
		}
		if last {
			c.mu.Lock()
			c.writing = false
			c.mu.Unlock()
			c.close()
			return
		}
		if cap(buf) > allocStep {
			buf = nil // do not pin one huge response's buffer
		}
	}
}
