package wire

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// call is one request sent by a Client. It ends by calling done (Send) or
// by sending on reply (Do).
type call struct {
	req   kmsg.Request
	corr  int32
	done  func(kmsg.Response, error)
	reply chan reply
	at    time.Time // when it was queued, where the link's delay starts
	// deadline, if set, ends the call with context.DeadlineExceeded
	// (SendWithin).
	deadline time.Time

	// Guarded by the connection's mu.
	finished bool
	stop     func() bool // stops the ctx watch
}

type reply struct {
	resp kmsg.Response
	err  error
}

// heldResponse is a response a delayed link holds back until release.
type heldResponse struct {
	k       *call
	resp    kmsg.Response
	n       int
	release time.Time
	m       *heldMsg
	seq     uint64 // its place in the links' trace
}

// clientConn is one connection of a Client: a goroutine that dials and then
// writes, one that reads, and, behind Links, one that releases delayed
// responses. Once dead it stays dead; the Client makes a new one.
type clientConn struct {
	cl     *Client
	id     uint64        // its number among the Links' connections
	closed chan struct{} // closed when the connection dies
	ctx    context.Context
	cancel context.CancelFunc // aborts the dial
	wake   chan struct{}      // queue has calls
	heldc  chan struct{}      // held has responses

	mu      sync.Mutex
	nc      net.Conn
	err     error           // why the connection died; nil while alive
	queue   []*call         // waiting for the writer
	pending map[int32]*call // queued or sent, awaiting a response
	held    []heldResponse  // delayed responses, in release order
	// expiring are the calls with a deadline, in deadline order (finished
	// ones leave from the front); expiry fires at or before the first
	// one's deadline. One timer per connection, not one per call.
	expiring []*call
	expiry   *clock.Timer
	expiryAt time.Time

	// setupDeadline bounds authenticating, in cluster time (its messages
	// wait at the links while the clock is paused); set before run.
	setupDeadline time.Time

	// lastSent and lastRecv keep delayed traffic in order; each is used by
	// one goroutine only.
	lastSent, lastRecv time.Time
	// ports names the connection in stamps (stamps.go); set with nc.
	ports uint32
}

func newClientConn(cl *Client) *clientConn {
	ctx, cancel := context.WithCancel(context.Background())
	var id uint64
	if cl.cfg.Links != nil {
		id = cl.cfg.Links.newConn()
	}
	return &clientConn{
		cl:      cl,
		id:      id,
		closed:  make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
		wake:    make(chan struct{}, 1),
		heldc:   make(chan struct{}, 1),
		pending: make(map[int32]*call),
	}
}

// enqueue queues k for the writer, or reports false if the connection died.
func (cc *clientConn) enqueue(k *call) bool {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return false
	}
	cc.pending[k.corr] = k
	cc.queue = append(cc.queue, k)
	if !k.deadline.IsZero() {
		cc.addExpiring(k)
	}
	cc.mu.Unlock()
	signal(cc.wake)
	return true
}

// addExpiring files k by its deadline: calls sent with one timeout come in
// deadline order, so this is almost always an append. Called with mu held.
func (cc *clientConn) addExpiring(k *call) {
	i := len(cc.expiring)
	for i > 0 && k.deadline.Before(cc.expiring[i-1].deadline) {
		i--
	}
	cc.expiring = slices.Insert(cc.expiring, i, k)
	if i == 0 && (cc.expiryAt.IsZero() || k.deadline.Before(cc.expiryAt)) {
		cc.armExpiry(k.deadline)
	}
}

// armExpiry sets the connection's timer for at. Called with mu held.
func (cc *clientConn) armExpiry(at time.Time) {
	cc.expiryAt = at
	d := cc.cl.cfg.Clock.Until(at)
	if cc.expiry == nil {
		cc.expiry = cc.cl.cfg.Clock.AfterFunc(d, cc.expire)
		return
	}
	cc.expiry.Reset(d)
}

// expire ends the calls whose deadline has passed and sets the timer for
// the next one. The timer is not moved when a call finishes, so it may
// fire for one already answered: then it only re-arms.
func (cc *clientConn) expire() {
	now := cc.cl.cfg.Clock.Now()
	var due []*call
	cc.mu.Lock()
	cc.expiryAt = time.Time{}
	for len(cc.expiring) > 0 {
		k := cc.expiring[0]
		if !k.finished && k.deadline.After(now) {
			if cc.err == nil {
				cc.armExpiry(k.deadline)
			}
			break
		}
		if !k.finished {
			due = append(due, k)
		}
		cc.expiring[0] = nil
		cc.expiring = cc.expiring[1:]
	}
	cc.mu.Unlock()
	for _, k := range due {
		cc.finish(k, nil, fmt.Errorf("%s request to %s: %w", apiName(k.req.Key()), cc.cl.name, context.DeadlineExceeded))
	}
}

// finish ends k with resp or err unless it already ended.
func (cc *clientConn) finish(k *call, resp kmsg.Response, err error) {
	cc.mu.Lock()
	if k.finished {
		cc.mu.Unlock()
		return
	}
	k.finished = true
	delete(cc.pending, k.corr)
	for len(cc.expiring) > 0 && cc.expiring[0].finished {
		cc.expiring[0] = nil
		cc.expiring = cc.expiring[1:]
	}
	stop := k.stop
	cc.mu.Unlock()
	if stop != nil {
		stop()
	}
	if k.reply != nil {
		k.reply <- reply{resp, err}
		return
	}
	k.done(resp, err)
}

// die marks the connection dead with err and closes its socket. It does not
// wait: the connection's goroutines notice, exit, and the last one fails
// the outstanding calls, so die is safe to call from a Links callback.
func (cc *clientConn) die(err error) {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.err = err
	nc := cc.nc
	cc.mu.Unlock()
	close(cc.closed)
	cc.cancel()
	if nc != nil {
		nc.Close()
	}
	cc.cl.log.Debug("connection closed", "err", err)
}

func (cc *clientConn) run() {
	defer cc.cl.wg.Done()
	defer cc.failPending()
	cl := cc.cl
	if links := cl.cfg.Links; links != nil {
		out := LinkID{cl.cfg.From, cl.cfg.To}
		down := fmt.Errorf("%s: %w", cl.name, ErrLinkDown)
		defer links.watchDown(out, func() { cc.die(down) })()
		if links.Get(out).Down {
			cc.die(down)
			return
		}
	}
	// The dial itself sends no message through the links: it stays on
	// the wall clock.
	cc.setupDeadline = cl.cfg.Clock.Now().Add(cl.cfg.DialTimeout)
	d := net.Dialer{Timeout: cl.cfg.DialTimeout}
	nc, err := d.DialContext(cc.ctx, "tcp", cl.cfg.Addr)
	if err != nil {
		cc.die(fmt.Errorf("dial %s: %w", cl.name, err))
		return
	}
	cc.mu.Lock()
	alive := cc.err == nil
	if alive {
		cc.nc, cc.ports = nc, connPorts(nc.LocalAddr(), nc.RemoteAddr())
	}
	cc.mu.Unlock()
	if !alive {
		nc.Close()
		return
	}
	var wg sync.WaitGroup
	wg.Go(cc.readLoop)
	if cl.cfg.Links != nil {
		wg.Go(cc.releaseLoop)
	}
	cc.writeLoop()
	wg.Wait()
	// The responses still held will never be delivered.
	for _, h := range cc.held {
		cl.cfg.Links.pass(h.m)
		cc.traceEnd(h.seq, h.m, FateCut)
	}
}

// failPending ends every outstanding call with the connection's error, in
// the order they were sent.
func (cc *clientConn) failPending() {
	cc.mu.Lock()
	if cc.expiry != nil {
		cc.expiry.Stop()
	}
	err := cc.err
	calls := make([]*call, 0, len(cc.pending))
	for _, k := range cc.pending {
		calls = append(calls, k)
	}
	cc.mu.Unlock()
	slices.SortFunc(calls, func(a, b *call) int { return cmp.Compare(a.corr, b.corr) })
	for _, k := range calls {
		cc.finish(k, nil, err)
	}
}

func (cc *clientConn) writeLoop() {
	timer := cc.cl.cfg.Clock.NewTimer(0)
	defer timer.Stop()
	var batch []*call
	var buf []byte
	if cc.cl.cfg.SASL != nil {
		var ok bool
		if buf, ok = cc.authenticate(timer); !ok {
			return
		}
	}
	for {
		select {
		case <-cc.wake:
		case <-cc.closed:
			return
		}
		batch = cc.takeQueue(batch)
		var ok bool
		buf, ok = cc.writeBatch(batch, buf, timer, true)
		clear(batch)
		batch = batch[:0]
		if !ok {
			return
		}
	}
}

// heldRequest is a request encoded in the writer's buffer, at
// [start, end), that a link holds.
type heldRequest struct {
	start, end int
	key        int16
	release    time.Time
	m          *heldMsg
	seq        uint64 // its place in the links' trace
}

// takeQueue appends the queued calls to batch and empties the queue.
func (cc *clientConn) takeQueue(batch []*call) []*call {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, k := range cc.queue {
		if !k.finished { // ended by ctx before it could be sent
			batch = append(batch, k)
		}
	}
	clear(cc.queue)
	cc.queue = cc.queue[:0]
	return batch
}

// writeBatch writes the calls of batch through the link, in order, and
// reports false once the connection is dead. It returns buf for reuse.
// With pull, the calls queued while a link holds a request join the
// batch, so that every held request is visible (Links.HeldMessages);
// authenticating does not pull, the queued calls wait for it.
func (cc *clientConn) writeBatch(batch []*call, buf []byte, timer *clock.Timer, pull bool) ([]byte, bool) {
	var held []heldRequest
	defer func() {
		for _, h := range held {
			cc.cl.cfg.Links.pass(h.m)
			cc.traceEnd(h.seq, h.m, FateCut)
		}
	}()
	buf, held, ok := cc.encode(batch, buf[:0], held)
	if !ok {
		return buf, false
	}
	var wake <-chan struct{}
	if pull {
		wake = cc.wake
	}
	written := 0
	for len(held) > 0 {
		h := held[0]
		if !cc.write(buf[written:h.start]) {
			return buf, false
		}
		written = h.start
		switch cc.await(h.release, h.m, timer, wake) {
		case awaitDead:
			return buf, false
		case awaitWake:
			if buf, held, ok = cc.encode(cc.takeQueue(nil), buf, held); !ok {
				return buf, false
			}
			continue
		case awaitDropped:
			cc.traceEnd(h.seq, h.m, FateDropped)
			cc.cl.reqLink.droppedRequests.add(h.key, h.end-h.start)
			written = h.end // never written
		case awaitPass:
			cc.traceEnd(h.seq, h.m, FateDelivered)
			cc.cl.reqLink.requests.add(h.key, h.end-h.start)
			cc.cl.node.requestsSent.add(h.key, h.end-h.start)
		}
		held = held[1:]
	}
	if !cc.write(buf[written:]) {
		return buf, false
	}
	if cap(buf) > allocStep {
		buf = nil // do not pin one huge request's buffer
	}
	return buf, true
}

// encode appends the calls of batch to buf through the link: a lost one
// is left out, one the link holds is registered and added to held. It
// reports false once the connection is dead.
func (cc *clientConn) encode(batch []*call, buf []byte, held []heldRequest) ([]byte, []heldRequest, bool) {
	cl := cc.cl
	links := cl.cfg.Links
	out := LinkID{cl.cfg.From, cl.cfg.To}
	for _, k := range batch {
		start := len(buf)
		buf = appendRequest(buf, k.req, k.corr, cl.cfg.ClientID)
		n, key := len(buf)-start, k.req.Key()
		cl.node.stamper.stamp(ClientSent, cl.cfg.From, key, k.corr, cc.ports, n)
		if links == nil {
			cl.reqLink.requests.add(key, n)
			cl.node.requestsSent.add(key, n)
			continue
		}
		v := links.transit(out, n, k.at)
		t := cc.traced(out, DirRequest, k, n, k.at, buf[start+4:], k.req)
		switch {
		case v.down:
			cc.traceSent(t, FateLost, nil)
			cl.reqLink.droppedRequests.add(key, n)
			cc.die(fmt.Errorf("%s: %w", cl.name, ErrLinkDown))
			return buf, held, false
		case v.lost:
			cc.traceSent(t, FateLost, nil)
			cl.reqLink.droppedRequests.add(key, n)
			buf = buf[:start]
			continue
		}
		release := later(v.release, cc.lastSent)
		cc.lastSent = release
		if len(held) > 0 || cl.cfg.Clock.Until(release) > 0 || cl.cfg.Clock.Paused() {
			m := links.hold(Held{Link: out, Conn: cc.id, Dir: DirRequest, Key: key, Version: k.req.GetVersion(),
				Corr: k.corr, Bytes: n, Since: cl.cfg.Clock.Now()}, buf[start+4:], &t)
			held = append(held, heldRequest{start: start, end: len(buf), key: key, release: release, m: m, seq: cc.traceSent(t, FateInFlight, m)})
			continue
		}
		cc.traceSent(t, FateDelivered, nil)
		cl.reqLink.requests.add(key, n)
		cl.node.requestsSent.add(key, n)
	}
	return buf, held, true
}

// write writes b, killing the connection on failure.
func (cc *clientConn) write(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if _, err := cc.nc.Write(b); err != nil {
		cc.die(fmt.Errorf("write to %s: %w", cc.cl.name, err))
		return false
	}
	return true
}

func (cc *clientConn) readLoop() {
	cl := cc.cl
	links := cl.cfg.Links
	in := LinkID{cl.cfg.To, cl.cfg.From}
	br := bufio.NewReaderSize(cc.nc, 32<<10)
	var size [4]byte
	for {
		frame, err := readFrame(br, &size, cl.cfg.MaxFrameSize)
		if err != nil {
			cc.die(fmt.Errorf("read response from %s: %w", cl.name, err))
			return
		}
		if len(frame) < 4 {
			cc.die(fmt.Errorf("read response from %s: %d-byte frame has no correlation id", cl.name, len(frame)))
			return
		}
		corr := int32(be.Uint32(frame))
		cc.mu.Lock()
		k := cc.pending[corr]
		cc.mu.Unlock()
		if k != nil {
			cl.node.stamper.stamp(ClientRead, cl.cfg.From, k.req.Key(), corr, cc.ports, 4+len(frame))
		}
		if k == nil {
			cl.log.Debug("discarding response to a request that already ended", "correlation_id", corr)
			continue
		}
		resp, err := decodeResponse(frame[4:], k.req)
		if err != nil {
			err = fmt.Errorf("response from %s (correlation id %d): %w", cl.name, corr, err)
			// Dead first: a caller told of the error may send again at once,
			// and that call must go to a new connection, not fail with this one.
			cc.die(err)
			cc.finish(k, nil, err)
			return
		}
		n := 4 + len(frame)
		if links != nil {
			now := cl.cfg.Clock.Now()
			v := links.transit(in, n, now)
			t := cc.traced(in, DirResponse, k, n, now, frame, resp)
			if v.down || v.lost {
				cc.traceSent(t, FateLost, nil)
				cl.respLink.droppedResponses.add(resp.Key(), n)
				continue
			}
			release := later(v.release, cc.lastRecv)
			cc.lastRecv = release
			cc.mu.Lock()
			hold := len(cc.held) > 0 || cl.cfg.Clock.Until(release) > 0 || cl.cfg.Clock.Paused()
			if hold {
				m := links.hold(Held{Link: in, Conn: cc.id, Dir: DirResponse, Key: k.req.Key(), Version: k.req.GetVersion(),
					Corr: corr, Bytes: n, Since: now}, frame, &t)
				cc.held = append(cc.held, heldResponse{k, resp, n, release, m, cc.traceSent(t, FateInFlight, m)})
			}
			cc.mu.Unlock()
			if hold {
				signal(cc.heldc)
				continue
			}
			cc.traceSent(t, FateDelivered, nil)
		}
		cc.deliver(k, resp, n)
	}
}

// releaseLoop delivers held responses when their time comes, in order.
func (cc *clientConn) releaseLoop() {
	timer := cc.cl.cfg.Clock.NewTimer(0)
	defer timer.Stop()
	for {
		cc.mu.Lock()
		var h heldResponse
		if len(cc.held) > 0 {
			h = cc.held[0]
		}
		cc.mu.Unlock()
		if h.k == nil {
			select {
			case <-cc.heldc:
				continue
			case <-cc.closed:
				return
			}
		}
		switch cc.await(h.release, h.m, timer, nil) {
		case awaitDead:
			return
		case awaitDropped:
			cc.traceEnd(h.seq, h.m, FateDropped)
			cc.cl.respLink.droppedResponses.add(h.resp.Key(), h.n)
		default:
			// Deliver before popping, so the reader keeps holding later
			// responses until this one is out.
			cc.traceEnd(h.seq, h.m, FateDelivered)
			cc.deliver(h.k, h.resp, h.n)
		}
		cc.mu.Lock()
		cc.held[0] = heldResponse{}
		cc.held = cc.held[1:]
		cc.mu.Unlock()
	}
}

// awaitResult is how waiting at a link ended.
type awaitResult uint8

const (
	awaitPass    awaitResult = iota // the message goes on
	awaitDropped                    // the message was dropped (Links.Drop)
	awaitWake                       // the writer has new calls to take
	awaitDead                       // the connection died
)

// await waits until a link lets a message held until release go on: its
// delay has passed in cluster time and the clock runs, or it was
// stepped or dropped (m, which may be nil, is its registration). A
// signal on wake ends the wait early, to be resumed.
func (cc *clientConn) await(release time.Time, m *heldMsg, timer *clock.Timer, wake <-chan struct{}) awaitResult {
	clk := cc.cl.cfg.Clock
	var gate chan struct{}
	if m != nil {
		gate = m.gate
	}
	for {
		var running <-chan struct{}
		if wait := clk.Until(release); wait > 0 {
			timer.Reset(wait)
		} else {
			running = clk.Running()
		}
		select {
		case <-timer.C:
			continue
		case <-running:
		case <-gate:
		case <-wake:
			return awaitWake
		case <-cc.closed:
			return awaitDead
		}
		if cc.cl.cfg.Links.pass(m) {
			return awaitDropped
		}
		return awaitPass
	}
}

func (cc *clientConn) deliver(k *call, resp kmsg.Response, n int) {
	cc.cl.respLink.responses.add(resp.Key(), n)
	cc.cl.node.responsesReceived.add(resp.Key(), n)
	cc.finish(k, resp, nil)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// tracedMsg is a message about to enter the links' trace.
type tracedMsg struct {
	slot  traceSlot
	frame []byte // without its size field
}

// summary is t's fields, nil unless it was summarised.
func (t *tracedMsg) summary() ([]Field, bool) {
	if t.slot.sum == nil {
		return nil, false
	}
	return t.slot.sum.fields, true
}

// traced describes a message of k entering link id at sent; msg is the
// request or response decoded, summarised only while the clock is paused
// or slowed (the trace keeps a copy of a small frame to decode later).
func (cc *clientConn) traced(id LinkID, dir Direction, k *call, n int, sent time.Time, frame []byte, msg any) tracedMsg {
	t := tracedMsg{frame: frame, slot: traceSlot{
		link: id, conn: cc.id, dir: dir, key: k.req.Key(), version: k.req.GetVersion(),
		corr: k.corr, bytes: int32(n), sent: sent.UnixNano(),
	}}
	if !cc.cl.cfg.Clock.Normal() {
		t.slot.sum = &traceSummary{fields: summarize(msg)}
	}
	return t
}

// traceSent records t in the links' trace with its fate, m being its
// registration when a link holds it, and returns its Seq.
func (cc *clientConn) traceSent(t tracedMsg, fate Fate, m *heldMsg) uint64 {
	s := t.slot
	s.fate = fate
	var now time.Time
	if fate == FateDelivered {
		now = cc.cl.cfg.Clock.Now()
	}
	if m != nil {
		s.held = m.info.ID
	}
	return cc.cl.cfg.Links.trace.record(s, t.frame, now)
}

// traceEnd ends traced message seq, held by m, with fate. m has passed:
// its fields, if it was listed while held, are the holder's to read.
func (cc *clientConn) traceEnd(seq uint64, m *heldMsg, fate Fate) {
	var sum *traceSummary
	if m != nil && m.summarised {
		sum = &traceSummary{m.info.Fields, m.info.Err}
	}
	cc.cl.cfg.Links.trace.end(seq, fate, cc.cl.cfg.Clock.Now(), sum)
}
