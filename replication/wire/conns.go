package wire

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Connection slots. Kafka blocks its acceptor at max.connections, except
// on the inter-broker listener, whose connections are always accepted and
// make room by closing the least recently used connection of another
// listener (SocketServer's closeExcessConnections); it closes a connection
// over max.connections.per.ip at once. A kraftlab node has one listener
// for members and strangers alike, and cannot tell them apart at accept:
// so a connection over either limit is accepted on probation. A member
// (SASL with the playground's secret) leaves probation at once, closing
// the least recently used stranger's connection if the server is over
// max.connections; a stranger's first request other than ApiVersions or
// SASL waits for a slot when the server was full (as Kafka's acceptor
// waits) and closes the connection when its address was (as Kafka
// closes it).

// probationMax bounds the connections on probation; a new one over it
// closes the least recently used of them. Room for members' logins while
// strangers hold every slot: a login takes a few milliseconds.
const probationMax = 64

// errOverIPLimit closes a stranger's connection over max.connections.per.ip.
var errOverIPLimit = errors.New("over max.connections.per.ip")

// serve admits a new connection and starts its reader.
func (s *Server) serve(nc net.Conn) {
	ip := nc.RemoteAddr().String()
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		ip = a.IP.String()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.nextConn++
	c := newServerConn(s, s.nextConn, nc, ip)
	overMax := s.cfg.MaxConnections > 0 && s.slots >= s.cfg.MaxConnections
	overIP := s.cfg.MaxConnectionsPerIP > 0 && s.perIP[ip] >= s.cfg.MaxConnectionsPerIP
	var victim *serverConn
	if overMax || overIP {
		if s.onProbation >= probationMax {
			victim = s.lruLocked(func(o *serverConn) bool { return o.probation })
		}
		c.probation, c.probationR, c.overIP = true, true, overIP
		if d := s.cfg.AuthenticationTimeout; d > 0 {
			c.authDeadline = time.Now().Add(d)
		}
		s.onProbation++
	} else {
		s.slots++
	}
	s.perIP[ip]++
	c.countsIP = true
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	if victim != nil {
		s.plog.info("closed the least recently used connection on probation to make room for a new one",
			"peer", victim.peer, "on_probation", probationMax)
		victim.close()
	}
	go c.readLoop()
}

// forget removes a closed connection and gives its slot to the oldest
// connection waiting for one.
func (s *Server) forget(c *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if c.countsIP {
		if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
			delete(s.perIP, c.ip)
		}
	}
	if !c.probation {
		s.slots--
		s.grantLocked()
		return
	}
	s.onProbation--
	for i, w := range s.waiting {
		if w == c {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
}

// grantLocked gives free slots to the connections waiting for one.
func (s *Server) grantLocked() {
	for len(s.waiting) > 0 && (s.cfg.MaxConnections <= 0 || s.slots < s.cfg.MaxConnections) {
		w := s.waiting[0]
		s.waiting = s.waiting[1:]
		w.probation = false
		s.onProbation--
		s.slots++
		close(w.granted)
	}
}

// takeSlot is called by the reader of a connection on probation before
// a request that makes it a stranger: it waits for a slot if the server
// was full, and refuses the connection if its address was. It reports
// false if the connection closed meanwhile.
func (c *serverConn) takeSlot() (bool, error) {
	s := c.s
	s.mu.Lock()
	if !c.probation {
		s.mu.Unlock()
		c.probationR = false
		return true, nil
	}
	if c.overIP {
		s.mu.Unlock()
		return false, fmt.Errorf("%w (%d): only members of the playground may connect past it; closing as Kafka does",
			errOverIPLimit, s.cfg.MaxConnectionsPerIP)
	}
	s.waiting = append(s.waiting, c)
	s.grantLocked()
	s.mu.Unlock()
	// Not authenticating: no login deadline while it waits.
	c.authDeadline = time.Time{}
	select {
	case <-c.granted:
		c.probationR = false
		return true, nil
	case <-c.closed:
		return false, nil
	}
}

// promote makes c, which just authenticated, a member: exempt from the
// per-address limit, and holding a slot even over max.connections, in
// which case the least recently used stranger's connection makes room.
func (c *serverConn) promote() {
	s := c.s
	s.mu.Lock()
	c.member = true
	if c.countsIP {
		c.countsIP = false
		if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
			delete(s.perIP, c.ip)
		}
	}
	var victim *serverConn
	if c.probation {
		c.probation = false
		s.onProbation--
		s.slots++
		if s.cfg.MaxConnections > 0 && s.slots > s.cfg.MaxConnections {
			victim = s.lruLocked(func(o *serverConn) bool { return !o.member && !o.probation })
		}
	}
	s.mu.Unlock()
	c.probationR = false
	if victim != nil {
		s.plog.info("closed the least recently used connection to make room for a member, as Kafka does for its inter-broker listener",
			"peer", victim.peer, "max_connections", s.cfg.MaxConnections)
		victim.close()
	}
}

// lruLocked returns the least recently active connection that pick
// accepts, or nil.
func (s *Server) lruLocked(pick func(*serverConn) bool) *serverConn {
	var lru *serverConn
	var at int64
	for o := range s.conns {
		if !pick(o) || o.isClosed() {
			continue
		}
		if t := o.lastActive.Load(); lru == nil || t < at {
			lru, at = o, t
		}
	}
	return lru
}
