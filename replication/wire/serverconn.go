package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// serverConn is one accepted connection: a reader goroutine that decodes
// requests and hands them to the handler, and a writer goroutine that sends
// answers in request order.
type serverConn struct {
	s      *Server
	id     uint64
	nc     net.Conn
	peer   string
	closed chan struct{}
	once   sync.Once
	// clientID is the last client id seen, reused while it stays the
	// same to save an allocation per request. Reader only.
	clientID string

	mu sync.Mutex
	// queue holds the requests not yet written, in arrival order,
	// answered or not.
	queue []*Request
	wake  chan struct{} // the head of queue may be answered
	room  chan struct{} // queue has room again
}

func newServerConn(s *Server, id uint64, nc net.Conn) *serverConn {
	return &serverConn{
		s:      s,
		id:     id,
		nc:     nc,
		peer:   nc.RemoteAddr().String(),
		closed: make(chan struct{}),
		wake:   make(chan struct{}, 1),
		room:   make(chan struct{}, 1),
	}
}

func (c *serverConn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.nc.Close()
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

func (c *serverConn) readLoop() {
	defer c.s.wg.Done()
	defer c.close()
	br := bufio.NewReaderSize(c.nc, 32<<10)
	var size [4]byte
	for c.waitRoom() {
		frame, err := readFrame(br, &size, c.s.cfg.MaxFrameSize)
		if err == nil {
			err = c.handle(frame)
		}
		switch {
		case err == nil:
			continue
		case c.isClosed():
		case errors.Is(err, io.EOF):
			c.s.log.Debug("connection closed by peer", "peer", c.peer)
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

// handle decodes one request frame and answers it or passes it to the
// handler. An error closes the connection.
func (c *serverConn) handle(frame []byte) error {
	h, body, rest, err := parseRequest(frame)
	if err != nil {
		return err
	}
	c.s.counters.requestsReceived.add(h.key, 4+len(frame))
	if string(h.clientID) != c.clientID {
		c.clientID = string(h.clientID)
	}
	req := &Request{Body: body, CorrelationID: h.correlationID, ClientID: c.clientID, Peer: c.nc.RemoteAddr(), ConnID: c.id, conn: c}
	if !c.s.apis.serves(h.key, h.version) {
		resp := c.s.apis.unsupported(h)
		if resp == nil {
			return fmt.Errorf("%s v%d (correlation id %d) is not served and its response cannot carry UNSUPPORTED_VERSION",
				kmsg.NameForKey(h.key), h.version, h.correlationID)
		}
		c.s.log.Debug("answered UNSUPPORTED_VERSION", "peer", c.peer, "api", kmsg.NameForKey(h.key), "version", h.version)
		c.push(req, resp)
		return nil
	}
	if err := decodeBody(body, rest); err != nil {
		return fmt.Errorf("decode %s v%d request (correlation id %d): %w", kmsg.NameForKey(h.key), h.version, h.correlationID, err)
	}
	if h.key == apiVersionsKey {
		c.push(req, c.s.apis.apiVersions(body.(*kmsg.ApiVersionsRequest), c.s.cfg.ClusterID, c.s.cfg.NodeID))
		return nil
	}
	c.push(req, nil)
	c.s.cfg.Handler.ServeKafka(req)
	return nil
}

// push queues req for the writer, already answered with resp if resp is
// not nil.
func (c *serverConn) push(req *Request, resp kmsg.Response) {
	c.mu.Lock()
	if resp != nil {
		req.answered, req.resp = true, resp
	}
	c.queue = append(c.queue, req)
	c.mu.Unlock()
	if resp != nil {
		signal(c.wake)
	}
}

func (c *serverConn) writeLoop() {
	defer c.s.wg.Done()
	defer c.close()
	var ready []*Request
	var buf []byte
	for {
		select {
		case <-c.wake:
		case <-c.closed:
			return
		}
		c.mu.Lock()
		n := 0
		for n < len(c.queue) && c.queue[n].answered {
			n++
		}
		ready = append(ready[:0], c.queue[:n]...)
		left := copy(c.queue, c.queue[n:])
		clear(c.queue[left:])
		c.queue = c.queue[:left]
		c.mu.Unlock()
		if n == 0 {
			continue
		}
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
				return
			}
		}
		if cap(buf) > allocStep {
			buf = nil // do not pin one huge response's buffer
		}
	}
}
