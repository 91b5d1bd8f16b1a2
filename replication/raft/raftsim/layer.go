package raftsim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// What a layer above the quorum (package metasim) drives the simulation
// with: the same clock, event queue, trace and network as the quorum's, so
// that one seed still decides the whole run.

// After runs fn after d of virtual time.
func (c *Cluster) After(d time.Duration, fn func()) { c.after(d, fn) }

// Record adds a line to the trace and its hash.
func (c *Cluster) Record(format string, args ...any) { c.record(format, args...) }

// Note adds a line to the kept trace only, not to its hash.
func (c *Cluster) Note(format string, args ...any) { c.note(format, args...) }

// Fail stops the run with err, as a broken invariant does.
func (c *Cluster) Fail(err error) { c.fail(err) }

// Err is the error that stopped the run, nil while it goes on.
func (c *Cluster) Err() error { return c.err }

// Rand is the run's random source, for decisions the trace must replay.
func (c *Cluster) Rand() *rand.Rand { return c.rng }

// Node returns a running node's raft.Node, nil while it is down.
func (c *Cluster) Node(id int32) *raft.Node {
	if sn := c.node(id); sn != nil {
		return sn.node
	}
	return nil
}

// Incarnation counts a node's starts: it changes with every restart.
func (c *Cluster) Incarnation(id int32) int {
	if sn := c.node(id); sn != nil {
		return sn.incarnation
	}
	return 0
}

// Poke runs AfterStep on a running node and puts what it sent on the
// network, after the layer above appended to it outside a node call.
func (c *Cluster) Poke(id int32) {
	if sn := c.node(id); sn != nil && sn.node != nil {
		c.afterNode(sn)
	}
}

// Describe is a line of every node's quorum state, for error messages.
func (c *Cluster) Describe() string { return c.describe() }

// Send carries a message of the layer above from one address to another
// over the simulated network: a cut link or a lost message drops it
// silently (the sender's timeout notices; DropRequests, which cuts only
// the quorum's requests, does not apply), otherwise deliver runs after
// the link's delay. Whether the receiver is still up is deliver's to check.
func (c *Cluster) Send(from, to int32, id uint64, deliver func()) {
	l := c.net.link(from, to)
	if l == nil {
		c.fail(fmt.Errorf("send %d -> %d: no such link", from, to))
		return
	}
	if l.down || (l.drop > 0 && c.rng.Float64() < l.drop) {
		l.dropped++
		c.recordFast('d', from, id)
		return
	}
	delay := l.minDelay
	if l.maxDelay > l.minDelay {
		delay += time.Duration(c.rng.Int64N(int64(l.maxDelay - l.minDelay)))
	}
	c.after(delay, func() {
		c.recordFast('m', to, id)
		deliver()
	})
}
