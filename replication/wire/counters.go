package wire

import (
	"sync"
	"sync/atomic"
	"time"
)

// Counters counts requests and responses, and their bytes, by API key per
// link (one direction between two nodes) and per node. Counting is a pair of
// atomic adds; Snapshot copies everything for the UI, which derives rates
// from two snapshots and their At times.
type Counters struct {
	mu    sync.RWMutex
	links map[LinkID]*linkCounters
	nodes map[int32]*nodeCounters
	// stamper, when set, times every message at both ends (stamps.go).
	stamper stamperRef
}

// NewCounters returns empty counters.
func NewCounters() *Counters {
	return &Counters{links: make(map[LinkID]*linkCounters), nodes: make(map[int32]*nodeCounters)}
}

// flow counts messages and bytes by API key.
type flow struct {
	msgs  [keySlots]atomic.Uint64
	bytes [keySlots]atomic.Uint64
}

func (f *flow) add(key int16, n int) {
	if slot := keySlot(key); slot >= 0 {
		f.msgs[slot].Add(1)
		f.bytes[slot].Add(uint64(n))
	}
}

func (f *flow) snapshot() Flow {
	var out Flow
	for k := range f.msgs {
		if m := f.msgs[k].Load(); m > 0 {
			if out == nil {
				out = make(Flow)
			}
			out[slotKey(k)] = Count{Messages: m, Bytes: f.bytes[k].Load()}
		}
	}
	return out
}

// linkCounters counts what travels one direction of a link; see LinkTraffic.
type linkCounters struct {
	requests, responses, droppedRequests, droppedResponses flow
}

type nodeCounters struct {
	id                                                               int32
	stamper                                                          *stamperRef
	requestsSent, requestsReceived, responsesSent, responsesReceived flow
	// unauthorized counts members-only requests refused (in its msgs;
	// its bytes count requests too, 1 each).
	unauthorized              flow
	authenticated, authFailed atomic.Uint64
}

func (c *Counters) link(id LinkID) *linkCounters {
	c.mu.RLock()
	l := c.links[id]
	c.mu.RUnlock()
	if l != nil {
		return l
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l = c.links[id]; l == nil {
		l = new(linkCounters)
		c.links[id] = l
	}
	return l
}

func (c *Counters) node(id int32) *nodeCounters {
	c.mu.RLock()
	n := c.nodes[id]
	c.mu.RUnlock()
	if n != nil {
		return n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n = c.nodes[id]; n == nil {
		n = &nodeCounters{id: id, stamper: &c.stamper}
		c.nodes[id] = n
	}
	return n
}

// Count is a number of messages and their bytes on the wire, size prefix
// and header included.
type Count struct {
	Messages uint64
	Bytes    uint64
}

// Flow is a snapshot of counts by API key; keys never seen are absent.
type Flow map[int16]Count

// Total sums a flow over all API keys.
func (f Flow) Total() Count {
	var t Count
	for _, c := range f {
		t.Messages += c.Messages
		t.Bytes += c.Bytes
	}
	return t
}

// LinkTraffic is what went over one direction of a link. On link A→B,
// Requests are A's requests to B and Responses are responses from A back
// to B's requests; Dropped counts what the link lost (loss, or down).
type LinkTraffic struct {
	Requests         Flow
	Responses        Flow
	DroppedRequests  Flow
	DroppedResponses Flow
}

// NodeTraffic is what one node sent and received: as a client (requests
// sent, responses received) and as a server (requests received, responses
// sent), users' own Kafka clients included.
type NodeTraffic struct {
	RequestsSent      Flow
	ResponsesReceived Flow
	RequestsReceived  Flow
	ResponsesSent     Flow
	// Authenticated counts the connections to this node that
	// authenticated as members.
	Authenticated uint64
	// AuthFailures counts the SASL authentications this node refused:
	// a wrong secret or user (SASL_AUTHENTICATION_FAILED), an unknown
	// mechanism, a SASL message out of order (ILLEGAL_SASL_STATE), a
	// login not done in time.
	AuthFailures uint64
	// Unauthorized counts, by API key, the requests this node refused
	// because only members may make them (CLUSTER_AUTHORIZATION_FAILED).
	// Only Messages is meaningful.
	Unauthorized Flow
}

// Refusals is what one node's server refused to strangers.
type Refusals struct {
	// AuthFailures is NodeTraffic.AuthFailures.
	AuthFailures uint64
	// Unauthorized is the total of NodeTraffic.Unauthorized.
	Unauthorized uint64
}

// Refusals returns node id's refused authentications and unauthorized
// requests so far, without a full Snapshot.
func (c *Counters) Refusals(id int32) Refusals {
	c.mu.RLock()
	n := c.nodes[id]
	c.mu.RUnlock()
	if n == nil {
		return Refusals{}
	}
	var r Refusals
	r.AuthFailures = n.authFailed.Load()
	for k := range n.unauthorized.msgs {
		r.Unauthorized += n.unauthorized.msgs[k].Load()
	}
	return r
}

// Traffic is a snapshot of Counters.
type Traffic struct {
	At    time.Time
	Links map[LinkID]LinkTraffic
	Nodes map[int32]NodeTraffic
}

// Snapshot copies the counters. Each count is read atomically; the
// snapshot as a whole is not one instant, which a rate display tolerates.
func (c *Counters) Snapshot() Traffic {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := Traffic{At: time.Now(), Links: make(map[LinkID]LinkTraffic, len(c.links)), Nodes: make(map[int32]NodeTraffic, len(c.nodes))}
	for id, l := range c.links {
		t.Links[id] = LinkTraffic{
			Requests:         l.requests.snapshot(),
			Responses:        l.responses.snapshot(),
			DroppedRequests:  l.droppedRequests.snapshot(),
			DroppedResponses: l.droppedResponses.snapshot(),
		}
	}
	for id, n := range c.nodes {
		t.Nodes[id] = NodeTraffic{
			RequestsSent:      n.requestsSent.snapshot(),
			ResponsesReceived: n.responsesReceived.snapshot(),
			RequestsReceived:  n.requestsReceived.snapshot(),
			ResponsesSent:     n.responsesSent.snapshot(),
			Authenticated:     n.authenticated.Load(),
			AuthFailures:      n.authFailed.Load(),
			Unauthorized:      n.unauthorized.snapshot(),
		}
	}
	return t
}
