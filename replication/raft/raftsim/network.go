package raftsim

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// link is the state of the network from one node to another.
type link struct {
	down bool
	// dropRequests drops only requests, as Kafka's DropOutboundRequestsTo
	// filter: responses on the same link still pass.
	dropRequests bool
	drop         float64 // probability a message is lost
	minDelay     time.Duration
	maxDelay     time.Duration
	// dropped counts the messages the link's faults lost.
	dropped int64
}

type network struct {
	ids   []int32
	links map[[2]int32]*link
}

// Default one-way delay of a message: 0.1 to 2 ms.
const (
	defaultMinDelay = 100 * time.Microsecond
	defaultMaxDelay = 2 * time.Millisecond
)

var errUnreachable = errors.New("connection refused")

func newNetwork(ids []int32) network {
	n := network{ids: ids, links: make(map[[2]int32]*link)}
	for _, a := range ids {
		for _, b := range ids {
			if a != b {
				n.links[[2]int32{a, b}] = &link{minDelay: defaultMinDelay, maxDelay: defaultMaxDelay}
			}
		}
	}
	return n
}

func (n *network) link(from, to int32) *link { return n.links[[2]int32{from, to}] }

// send puts a message on the wire. Partitioned or lost messages vanish (the
// sender's request timeout notices); a request to a stopped node fails fast,
// as a refused connection would.
func (n *network) send(c *Cluster, m raft.Message) {
	l := n.link(m.From, m.To)
	if m.Request != nil && m.To >= 0 && l == nil {
		c.fail(fmt.Errorf("message to unknown node: %v", m))
		return
	}
	if l == nil {
		// A response to a client outside the cluster: nobody to deliver to.
		return
	}
	if l.down || (l.dropRequests && m.Request != nil) || (l.drop > 0 && c.rng.Float64() < l.drop) {
		l.dropped++
		c.recordFast('D', m.From, m.ID)
		return
	}
	if c.opts.WireCheck {
		var err error
		if m, err = roundTrip(m); err != nil {
			c.fail(err)
			return
		}
	}
	delay := l.minDelay
	if l.maxDelay > l.minDelay {
		delay += time.Duration(c.rng.Int64N(int64(l.maxDelay - l.minDelay)))
	}
	to := c.node(m.To)
	inc := to.incarnation
	c.after(delay, func() {
		if to.node == nil || to.incarnation != inc {
			if m.Request != nil {
				c.refused(m)
			}
			return
		}
		c.recordFast('M', m.To, m.ID)
		if c.opts.TraceLines > 0 {
			c.note("  %v", m)
		}
		c.nodeErr(to, to.node.Step(c.now, m))
	})
}

// refused tells the sender of a request to a stopped node that it failed.
func (c *Cluster) refused(m raft.Message) {
	from := c.node(m.From)
	inc := from.incarnation
	c.after(time.Millisecond, func() {
		if from.node == nil || from.incarnation != inc {
			return
		}
		c.recordFast('R', m.From, m.ID)
		c.nodeErr(from, from.node.Step(c.now, raft.Message{From: m.To, To: m.From, ID: m.ID, Err: errUnreachable}))
	})
}

// roundTrip encodes a message at its version and decodes it again, as the
// network layer will.
func roundTrip(m raft.Message) (raft.Message, error) {
	switch {
	case m.Request != nil:
		b := m.Request.AppendTo(nil)
		r := requestForKey(m.Request.Key())
		r.SetVersion(m.Request.GetVersion())
		if err := r.ReadFrom(b); err != nil {
			return m, fmt.Errorf("decode %v: %w", m, err)
		}
		m.Request = r
	case m.Response != nil:
		b := m.Response.AppendTo(nil)
		r := responseForKey(m.Response.Key())
		r.SetVersion(m.Response.GetVersion())
		if err := r.ReadFrom(b); err != nil {
			return m, fmt.Errorf("decode %v: %w", m, err)
		}
		m.Response = r
	}
	return m, nil
}

// requestForKey returns an empty request of a Kafka API or of push
// replication's.
func requestForKey(key int16) kmsg.Request {
	if r := pushrpc.RequestForKey(key); r != nil {
		return r
	}
	return kmsg.RequestForKey(key)
}

func responseForKey(key int16) kmsg.Response {
	if r := pushrpc.ResponseForKey(key); r != nil {
		return r
	}
	return kmsg.ResponseForKey(key)
}

// Isolate cuts every link to and from a node.
func (c *Cluster) Isolate(id int32) {
	c.record("isolate node %d", id)
	for k, l := range c.net.links {
		if k[0] == id || k[1] == id {
			l.down = true
		}
	}
}

// Partition cuts the links between two groups, both ways.
func (c *Cluster) Partition(a, b []int32) {
	c.record("partition %v | %v", a, b)
	for _, x := range a {
		for _, y := range b {
			if l := c.net.link(x, y); l != nil {
				l.down = true
			}
			if l := c.net.link(y, x); l != nil {
				l.down = true
			}
		}
	}
}

// CutOneWay drops every message from one node to another.
func (c *Cluster) CutOneWay(from, to int32) {
	c.record("cut %d -> %d", from, to)
	if l := c.net.link(from, to); l != nil {
		l.down = true
	}
}

// DropRequests drops every request from one node to the others named, and
// lets their responses through (Kafka's DropOutboundRequestsTo).
func (c *Cluster) DropRequests(from int32, to ...int32) {
	c.record("drop requests %d -> %v", from, to)
	for _, t := range to {
		if l := c.net.link(from, t); l != nil {
			l.dropRequests = true
		}
	}
}

// Heal restores every link to a clean, fast network.
func (c *Cluster) Heal() {
	c.record("heal")
	for _, l := range c.net.links {
		*l = link{minDelay: defaultMinDelay, maxDelay: defaultMaxDelay, dropped: l.dropped}
	}
}

// LinkFault is what SetLink makes of a directed link: cut, lossy, slow.
type LinkFault struct {
	Down bool
	// Loss is the probability that a message is lost.
	Loss float64
	// Delay is added to the network's own, plus a uniform extra of up to
	// Jitter, which may reorder messages.
	Delay, Jitter time.Duration
}

// SetLink replaces the faults of the link from one address to another.
func (c *Cluster) SetLink(from, to int32, f LinkFault) {
	l := c.net.link(from, to)
	if l == nil {
		return
	}
	c.record("link %d -> %d: down %v loss %.2f delay %v jitter %v", from, to, f.Down, f.Loss, f.Delay, f.Jitter)
	*l = link{down: f.Down, drop: f.Loss, minDelay: defaultMinDelay + f.Delay, maxDelay: defaultMaxDelay + f.Delay + f.Jitter, dropped: l.dropped}
}

// Link returns the faults SetLink last gave the link from one address to
// another, and how many messages its faults lost so far.
func (c *Cluster) Link(from, to int32) (f LinkFault, dropped int64) {
	l := c.net.link(from, to)
	if l == nil {
		return LinkFault{}, 0
	}
	return LinkFault{Down: l.down, Loss: l.drop, Delay: l.minDelay - defaultMinDelay, Jitter: max(0, l.maxDelay-l.minDelay-(defaultMaxDelay-defaultMinDelay))}, l.dropped
}

// Degrade makes every link lose messages with probability drop and delay
// them by up to maxDelay, which also reorders them.
func (c *Cluster) Degrade(drop float64, maxDelay time.Duration) {
	c.record("degrade drop=%.2f delay<=%v", drop, maxDelay)
	for _, l := range c.net.links {
		l.drop, l.maxDelay = drop, max(maxDelay, defaultMinDelay)
	}
}
