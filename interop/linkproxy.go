package interop

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Kafka 4.4 voter does not keep to controller.quorum.voters for its
// connections: BeginQuorumEpoch, Vote and Fetch answers carry the leader's
// advertised endpoints (KIP-853) and the raft client connects to those. So
// a proxy per directed link cannot be placed; instead every controller
// advertises a NodeProxy in front of its listener, and the proxy learns
// who connects from the client id of the connection's first request: a
// raft client names itself raft-client-<node id> (KafkaRaftManager).

// LinkRules says which nodes are cut off; the NodeProxies of one cluster
// share them.
type LinkRules struct {
	mu       sync.Mutex
	isolated map[int32]bool
}

// cut reports whether a connection from node from (-1 unknown) to node to
// must not pass.
func (r *LinkRules) cut(from, to int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isolated[to] || (from >= 0 && r.isolated[from])
}

// SetIsolated cuts (or restores) every link to and from node id; the
// proxies act on it at their next Enforce and at every new connection.
func (r *LinkRules) SetIsolated(id int32, isolated bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.isolated == nil {
		r.isolated = map[int32]bool{}
	}
	r.isolated[id] = isolated
}

// HealAll restores every link.
func (r *LinkRules) HealAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.isolated)
}

// NodeProxy forwards every connection to one node's listener and drops
// those its rules cut: each connection is closed at once when its link is
// cut, and a new one after its first request (the peer sees its
// connection drop, then every reconnect fail), until the link is healed.
type NodeProxy struct {
	To int32
	// Addr is the proxy's listener, the address the node advertises.
	Addr   string
	target string
	rules  *LinkRules
	ln     net.Listener

	mu    sync.Mutex
	conns map[net.Conn]int32 // the client side of each connection, by sender (-1 unknown)
	wg    sync.WaitGroup
}

// NewNodeProxy listens on a free port of 127.0.0.1 for node to, whose
// listener is target.
func NewNodeProxy(to int32, target string, rules *LinkRules) (*NodeProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &NodeProxy{To: to, Addr: ln.Addr().String(), target: target, rules: rules, ln: ln, conns: map[net.Conn]int32{}}
	p.wg.Go(func() { p.accept(ln) })
	return p, nil
}

// Pause closes the proxy's listener and connections while its node is
// down, so that peers find the port refusing connections as they would
// the node's own.
func (p *NodeProxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Resume listens on the proxy's address again.
func (p *NodeProxy) Resume() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		return fmt.Errorf("proxy of node %d: %w", p.To, err)
	}
	p.ln = ln
	p.wg.Go(func() { p.accept(ln) })
	return nil
}

func (p *NodeProxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// sender reads the node id from a request's client id: raft-client-<id>.
func sender(frame []byte) int32 {
	// api key, version, correlation id, then the client id (int16 length).
	if len(frame) < 10 {
		return -1
	}
	n := int(int16(binary.BigEndian.Uint16(frame[8:10])))
	if n < 0 || len(frame) < 10+n {
		return -1
	}
	id, ok := strings.CutPrefix(string(frame[10:10+n]), "raft-client-")
	if !ok {
		return -1
	}
	v, err := strconv.ParseInt(id, 10, 32)
	if err != nil || v < 0 {
		return -1
	}
	return int32(v)
}

func (p *NodeProxy) forward(c net.Conn) {
	defer c.Close()
	// A client speaks first (ApiVersions); one that does not within 10 s
	// is dropped, so that Close never waits on it.
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	first, err := readFrame(c)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	from := sender(first)
	if !p.track(c, from) {
		return
	}
	defer p.untrack(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	if err := writeFrame(up, first); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	// One side ended: closing both ends the other copy.
	up.Close()
	c.Close()
	<-done
}

// track adds c from node from to the live connections unless its link is
// cut.
func (p *NodeProxy) track(c net.Conn, from int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rules.cut(from, p.To) {
		return false
	}
	p.conns[c] = from
	return true
}

func (p *NodeProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// Enforce closes every connection the rules now cut.
func (p *NodeProxy) Enforce() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, from := range p.conns {
		if p.rules.cut(from, p.To) {
			c.Close()
		}
	}
}

// Close stops the listener and ends every connection.
func (p *NodeProxy) Close() {
	p.Pause()
	p.wg.Wait()
}
