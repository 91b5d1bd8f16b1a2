package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const (
	// maxFrame bounds one message on the wire. Appends are capped at 1 MiB
	// (MaxSizePerMsg) plus one entry, so a larger frame means a broken peer.
	maxFrame = 64 << 20
	// maxQueued bounds the encoded bytes waiting for one peer's writer.
	// Beyond it new messages are dropped, as etcd's own transport drops
	// them when its buffer is full: raft resends.
	maxQueued = 64 << 20
)

// transport carries etcd raft messages between the voters of one process
// over loopback TCP: one listener per voter, one outbound connection and
// writer goroutine per peer. A frame is a 4-byte big-endian length and the
// message's protobuf encoding. Messages are encoded by the caller, in the
// raft loop as etcd raft's README asks, into the peer's pending bytes; the
// writer takes all of them at once and sends them with one write, so a busy
// leader sends batches.
type transport struct {
	id          uint64
	ln          net.Listener
	deliver     func(context.Context, *pb.Message)
	unreachable func(uint64)
	ctx         context.Context
	cancel      context.CancelFunc
	peers       map[uint64]*peerWriter
	wg          sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{} // accepted, closed by close
}

// peerWriter owns the connection to one peer.
type peerWriter struct {
	t    *transport
	to   uint64
	addr string
	wake chan struct{}

	mu      sync.Mutex
	pending []byte // encoded frames not yet taken by the writer
}

// newTransport listens on 127.0.0.1:0 for voter id. deliver is called for
// each message received; unreachable when a peer cannot be dialled or
// written to.
func newTransport(id uint64, deliver func(context.Context, *pb.Message), unreachable func(uint64)) (*transport, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &transport{
		id:          id,
		ln:          ln,
		deliver:     deliver,
		unreachable: unreachable,
		ctx:         ctx,
		cancel:      cancel,
		peers:       map[uint64]*peerWriter{},
		conns:       map[net.Conn]struct{}{},
	}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

func (t *transport) addr() string { return t.ln.Addr().String() }

// connect starts a writer for every peer in addrs other than this voter.
// It must be called once, before the first send.
func (t *transport) connect(addrs map[uint64]string) {
	for id, a := range addrs {
		if id == t.id {
			continue
		}
		p := &peerWriter{t: t, to: id, addr: a, wake: make(chan struct{}, 1)}
		t.peers[id] = p
		t.wg.Add(1)
		go p.run()
	}
}

// send encodes m onto its destination's pending bytes without blocking on
// the network. A message that cannot be encoded or does not fit is dropped.
func (t *transport) send(m *pb.Message) {
	p, ok := t.peers[m.GetTo()]
	if !ok {
		return
	}
	p.mu.Lock()
	n := len(p.pending)
	if n < maxQueued {
		b, err := proto.MarshalOptions{}.MarshalAppend(append(p.pending, 0, 0, 0, 0), m)
		if err == nil && len(b)-n-4 <= maxFrame {
			binary.BigEndian.PutUint32(b[n:], uint32(len(b)-n-4))
			p.pending = b
		} else {
			p.pending = b[:n]
		}
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// close stops the listener, every connection and every goroutine.
func (t *transport) close() error {
	t.cancel()
	err := t.ln.Close()
	t.mu.Lock()
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (t *transport) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.mu.Lock()
		if t.ctx.Err() != nil {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.conns[c] = struct{}{}
		t.mu.Unlock()
		t.wg.Add(1)
		go t.read(c)
	}
}

// read decodes frames from one inbound connection until it fails.
func (t *transport) read(c net.Conn) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	var hdr [4]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxFrame {
			return
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		// Unmarshal copies bytes fields, so buf can be reused.
		m := &pb.Message{}
		if err := proto.Unmarshal(buf, m); err != nil {
			return
		}
		t.deliver(t.ctx, m)
	}
}

// run writes this peer's pending bytes until the transport closes,
// redialling after a failure. Bytes that could not be written are dropped:
// raft notices through ReportUnreachable and resends.
func (p *peerWriter) run() {
	defer p.t.wg.Done()
	var conn net.Conn
	var out []byte
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		select {
		case <-p.wake:
		case <-p.t.ctx.Done():
			return
		}
		p.mu.Lock()
		out, p.pending = p.pending, out[:0]
		p.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		if conn == nil {
			d := net.Dialer{Timeout: time.Second}
			c, err := d.DialContext(p.t.ctx, "tcp", p.addr)
			if err != nil {
				p.t.unreachable(p.to)
				continue
			}
			conn = c
		}
		if _, err := conn.Write(out); err != nil {
			conn.Close()
			conn = nil
			p.t.unreachable(p.to)
		}
	}
}
