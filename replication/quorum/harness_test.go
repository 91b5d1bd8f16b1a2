package quorum

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testClusterID = "kraftlab-quorum-test"

// testRaftConfig is a fast quorum timing that stays clear of spurious
// elections on a loaded 2-core machine under the race detector.
// testSecret is the test clusters' member secret: the nodes authenticate
// to each other as a playground's do.
const testSecret = "quorum-test-secret-0123456789abcdef"

func testRaftConfig() raft.Config {
	c := raft.DefaultConfig()
	c.ClusterID = testClusterID
	c.ElectionTimeout = 150 * time.Millisecond
	c.ElectionBackoffMax = 150 * time.Millisecond
	c.FetchTimeout = 600 * time.Millisecond
	c.RequestTimeout = 600 * time.Millisecond
	c.RetryBackoff = 10 * time.Millisecond
	c.AppendLinger = time.Millisecond
	c.FetchMaxWait = 100 * time.Millisecond
	return c
}

// testCluster runs nodes of one quorum on loopback, in one process.
type testCluster struct {
	t        *testing.T
	voters   []int32
	nodes    map[int32]*testNode
	links    *wire.Links
	counters *wire.Counters

	mu      sync.Mutex
	addrs   map[int32]string
	events  []Event
	tallies map[int32]*tallyListener // each node's current incarnation's
}

type clusterOpts struct {
	voters, observers int
	flush             storage.FlushPolicy
	tweak             func(*Config)
}

func newTestCluster(t *testing.T, o clusterOpts) *testCluster {
	t.Helper()
	c := &testCluster{
		t:        t,
		nodes:    make(map[int32]*testNode),
		links:    wire.NewLinks(1),
		counters: wire.NewCounters(),
		addrs:    make(map[int32]string),
		tallies:  make(map[int32]*tallyListener),
	}
	for i := 1; i <= o.voters; i++ {
		c.voters = append(c.voters, int32(i))
	}
	ids := append([]int32(nil), c.voters...)
	for i := 1; i <= o.observers; i++ {
		ids = append(ids, int32(100+i))
	}
	if o.flush == 0 {
		o.flush = storage.FlushNever
	}
	dir := t.TempDir()
	for _, id := range ids {
		rc := testRaftConfig()
		rc.NodeID, rc.Voters = id, c.voters
		cfg := Config{
			Raft:     rc,
			Dir:      fmt.Sprintf("%s/node-%d", dir, id),
			Peers:    c.addr,
			Flush:    o.flush,
			Links:    c.links,
			Counters: c.counters,
			Secret:   testSecret,
			OnEvent:  c.record,
		}
		cfg.NewListener = func() Listener {
			l := &tallyListener{}
			c.mu.Lock()
			c.tallies[id] = l
			c.mu.Unlock()
			return l
		}
		if o.tweak != nil {
			o.tweak(&cfg)
		}
		n, err := NewNode(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.nodes[id] = &testNode{Node: n, counters: c.counters}
	}
	t.Cleanup(c.close)
	for _, id := range ids {
		c.start(id)
	}
	return c
}

// testNode is a quorum node on a listener of its own, as a node's server
// runs it: the listener opens after the node starts, closes before a kill
// and after a stop, and keeps its address across restarts.
type testNode struct {
	*Node
	counters *wire.Counters
	srv      *wire.Server
	addr     string
}

func (n *testNode) Start(ctx context.Context) error {
	if err := n.Node.Start(ctx); err != nil {
		return err
	}
	mux := wire.NewMux()
	if err := n.Register(mux); err != nil {
		return err
	}
	addr := n.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	srv, err := wire.Listen(wire.ServerConfig{Addr: addr, NodeID: n.ID(), ClusterID: testClusterID, APIs: mux.APIs(), Handler: mux, Counters: n.counters, Secret: n.cfg.Secret})
	if err != nil {
		n.Node.Kill()
		return err
	}
	n.srv, n.addr = srv, srv.Addr()
	return nil
}

func (n *testNode) Kill() error {
	if n.srv != nil {
		n.srv.Close()
	}
	return n.Node.Kill()
}

func (n *testNode) Stop(ctx context.Context) error {
	err := n.Node.Stop(ctx)
	if n.srv != nil {
		n.srv.Close()
	}
	return err
}

func (n *testNode) Addr() string { return n.addr }

// appendNow appends records for the leadership the node last published.
func (n *testNode) appendNow(records ...[]byte) *Commit {
	return n.Append(n.Status().Epoch, records)
}

func (c *testCluster) addr(id int32) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.addrs[id]
	return a, ok
}

func (c *testCluster) record(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

// eventsOf returns the state machine's events of a kind so far, of one
// node or of all (0).
func (c *testCluster) eventsOf(kind raft.EventKind, node int32) []Event {
	return c.matching(func(e Event) bool { return e.Kind == EventRaft && e.Raft.Kind == kind && (node == 0 || e.Node == node) })
}

// recoveries returns node's recovery events so far.
func (c *testCluster) recoveries(node int32) []Event {
	return c.matching(func(e Event) bool { return e.Kind == EventRecovery && e.Node == node })
}

func (c *testCluster) matching(keep func(Event) bool) []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Event
	for _, e := range c.events {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func (c *testCluster) eventLog() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, e := range c.events[max(0, len(c.events)-60):] {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

func (c *testCluster) start(id int32) {
	c.t.Helper()
	n := c.nodes[id]
	if err := n.Start(context.Background()); err != nil {
		c.t.Fatalf("start node %d: %v", id, err)
	}
	c.mu.Lock()
	c.addrs[id] = n.Addr()
	c.mu.Unlock()
}

func (c *testCluster) close() {
	for _, n := range c.nodes {
		if n.current() != nil {
			n.Kill()
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func (c *testCluster) waitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	poll.Until(c.t, timeout, what, cond, c.describe, func() string { return "events:\n" + c.eventLog() })
}

func (c *testCluster) describe() string {
	var b strings.Builder
	for _, id := range c.ids() {
		s := c.nodes[id].Status()
		tally, terr := c.tallyErr(id)
		fmt.Fprintf(&b, "node %d: %s %v epoch %d leader %d hwm %d log [%d, %d) applied %d tally %+v (%v) %s\n",
			id, s.State, s.Role, s.Epoch, s.LeaderID, s.HighWatermark, s.LogStartOffset, s.LogEndOffset, s.AppliedOffset, tally, terr, s.Err)
	}
	return b.String()
}

// tally is the Tally of node id's current incarnation; zero if the node
// has none (a test that sets its own NewListener).
func (c *testCluster) tally(id int32) Tally {
	t, err := c.tallyErr(id)
	if err != nil {
		c.t.Errorf("node %d's tally: %v", id, err)
	}
	return t
}

func (c *testCluster) tallyErr(id int32) (Tally, error) {
	c.mu.Lock()
	l := c.tallies[id]
	c.mu.Unlock()
	if l == nil {
		return Tally{}, nil
	}
	return l.state()
}

func (c *testCluster) ids() []int32 {
	var ids []int32
	for id := int32(1); id < 200; id++ {
		if c.nodes[id] != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// leader waits for a running leader that may append (it has told its
// state machine) and that every running voter but except follows, and
// returns it.
func (c *testCluster) leader(timeout time.Duration, except ...int32) (int32, int32) {
	c.t.Helper()
	var id, epoch int32
	c.waitFor("a leader", timeout, func() bool {
		id, epoch = -1, -1
		for _, v := range c.voters {
			s := c.nodes[v].Status()
			if s.Running() && s.Role == raft.Leader && s.Epoch > epoch {
				id, epoch = v, s.Epoch
			}
		}
		if id < 0 {
			return false
		}
		for _, v := range c.voters {
			s := c.nodes[v].Status()
			if v == id || !s.Running() || contains(except, v) {
				continue
			}
			if s.Role != raft.Follower || s.LeaderID != id || s.Epoch != epoch {
				return false
			}
		}
		return c.nodes[id].Status().Writable
	})
	return id, epoch
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// partition cuts every link between a and the others, both ways.
func (c *testCluster) partition(a int32) {
	for _, id := range c.ids() {
		if id != a {
			c.setLink(a, id, wire.LinkState{Down: true})
			c.setLink(id, a, wire.LinkState{Down: true})
		}
	}
}

func (c *testCluster) setLink(from, to int32, s wire.LinkState) {
	c.t.Helper()
	if err := c.links.Set(wire.LinkID{From: from, To: to}, s); err != nil {
		c.t.Fatal(err)
	}
}

// appendN appends n records of size bytes to node id, window at a time,
// waits for all to commit and returns the last one's offset.
func (c *testCluster) appendN(id int32, n, size, window int, tag string) int64 {
	c.t.Helper()
	node := c.nodes[id]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inflight := make([]*Commit, 0, window)
	last := int64(-1)
	wait := func(cm *Commit) {
		off, err := cm.Wait(ctx)
		if err != nil {
			c.t.Fatalf("append to node %d: %v\n%s", id, err, c.describe())
		}
		last = max(last, off)
	}
	for i := range n {
		v := make([]byte, size)
		copy(v, fmt.Sprintf("%s-%d", tag, i))
		inflight = append(inflight, node.appendNow(v))
		if len(inflight) == window {
			for _, cm := range inflight {
				wait(cm)
			}
			inflight = inflight[:0]
		}
	}
	for _, cm := range inflight {
		wait(cm)
	}
	return last
}

// errorCode returns a quorum response's error: the top-level code, else
// its partition's.
func errorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.VoteResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.BeginQuorumEpochResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.EndQuorumEpochResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.DescribeQuorumResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.FetchSnapshotResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	}
	return 0
}
