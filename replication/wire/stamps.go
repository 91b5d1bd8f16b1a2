package wire

import (
	"net"
	"sync/atomic"
	"time"
)

// Stamps time each message at both ends of its connection, for a bench
// that splits a commit into its legs: when a client frames a request and
// reads its response, when a server reads a request and frames its
// response. The four stamps of one exchange share the connection (its two
// ports) and the correlation id. Nothing is stamped unless a Stamper is
// set on the Counters the nodes share, and then a stamp costs a clock
// read and the Stamper's call.

// StampKind is where along an exchange a stamp was taken.
type StampKind uint8

// The stamp kinds, in the order an exchange passes them.
const (
	// ClientSent: the client framed the request for its socket.
	ClientSent StampKind = iota + 1
	// ServerRead: the server read the request off its socket.
	ServerRead
	// ServerSent: the server framed the response for its socket.
	ServerSent
	// ClientRead: the client read the response off its socket (before a
	// link's verdict: one the link then drops or delays is stamped too).
	ClientRead
)

// Stamp is one message passing one end of its connection.
type Stamp struct {
	Kind StampKind
	// Node is the node at this end: the client's for ClientSent and
	// ClientRead, the server's otherwise.
	Node int32
	Key  int16
	Corr int32
	// Conn names the connection: the client's port, then the server's.
	Conn uint32
	// Bytes is the message's frame, its size field included.
	Bytes int
	At    time.Time
}

// Stamper receives stamps; it is called on the connections' goroutines,
// concurrently, and must not block.
type Stamper func(Stamp)

// SetStamper starts (f non-nil) or stops stamping the messages of every
// node counted here.
func (c *Counters) SetStamper(f Stamper) {
	if f == nil {
		c.stamper.p.Store(nil)
		return
	}
	c.stamper.p.Store(&f)
}

// stamperRef holds the counters' Stamper, nil when none is set.
type stamperRef struct{ p atomic.Pointer[Stamper] }

// stamp reports one stamp if a Stamper is set.
func (r *stamperRef) stamp(kind StampKind, node int32, key int16, corr int32, conn uint32, bytes int) {
	if f := r.p.Load(); f != nil {
		(*f)(Stamp{Kind: kind, Node: node, Key: key, Corr: corr, Conn: conn, Bytes: bytes, At: time.Now()})
	}
}

// connPorts names a connection by its client's and its server's ports.
func connPorts(client, server net.Addr) uint32 {
	return uint32(port(client))<<16 | uint32(port(server))
}

func port(a net.Addr) uint16 {
	if t, ok := a.(*net.TCPAddr); ok {
		return uint16(t.Port)
	}
	return 0
}
