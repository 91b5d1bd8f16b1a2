package attach

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// jmxOnly is what Kafka shows only through JMX, never on the wire.
var jmxOnly = []string{
	"a broker's lifecycle state and broker epoch",
	"a node's applied metadata offset (observers' rows show what they fetched)",
	"replica fetcher threads",
	"ISR shrink and expand rates",
	"a follower's own epoch, vote, log end and log start (it answers DescribeQuorum with NOT_LEADER_OR_FOLLOWER alone)",
}

// The parts of a poll. A part a poll could not read is named in the
// view's Attached.Unread: no event is inferred from it, and the topics
// of the poll before stand in for it.
const (
	partBrokers = "brokers"
	partQuorum  = "quorum"
	partTopics  = "topics"
	partGroups  = "groups"
)

// poller reads the cluster: one franz-go client for the brokers, and one
// for each node it asks at its own address.
type poller struct {
	cfg     Config
	opts    []kgo.Opt
	brokers *kgo.Client

	mu     sync.Mutex
	nodes  map[string]*kgo.Client
	closed bool
}

func newPoller(cfg Config) (*poller, error) {
	opts, err := clientOptions(cfg.Properties, cfg.timeout())
	if err != nil {
		return nil, err
	}
	p := &poller{cfg: cfg, opts: opts, nodes: map[string]*kgo.Client{}}
	if len(cfg.Bootstrap) > 0 {
		p.brokers, err = kgo.NewClient(append(slices.Clone(opts), kgo.SeedBrokers(cfg.Bootstrap...))...)
		if err != nil {
			return nil, fmt.Errorf("bootstrap servers: %w", err)
		}
	}
	return p, nil
}

// close closes every client; a poll still running gets errors from
// then on, and makes no new client.
func (p *poller) close() {
	if p.brokers != nil {
		p.brokers.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.nodes {
		c.Close()
	}
	p.nodes = nil
}

var errClosed = errors.New("attach: closed")

// node is the client that talks to the node at addr alone.
func (p *poller) node(addr string) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	if c, ok := p.nodes[addr]; ok {
		return c, nil
	}
	c, err := kgo.NewClient(append(slices.Clone(p.opts), kgo.SeedBrokers(addr))...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	p.nodes[addr] = c
	return c, nil
}

// ask sends req to the node at addr alone, whatever node it is.
func (p *poller) ask(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	c, err := p.node(addr)
	if err != nil {
		return nil, err
	}
	seeds := c.SeedBrokers()
	if len(seeds) == 0 {
		return nil, errors.New("no seed broker")
	}
	return seeds[0].Request(ctx, req)
}

// reading gathers one poll's findings.
type reading struct {
	v       view.View
	errs    []string
	reached bool
	unread  map[string]bool

	// quorum is the leader's DescribeQuorum answer, at quorumAt.
	quorum   *kmsg.DescribeQuorumResponseTopicPartition
	quorumAt time.Time
	// direct are the controllers asked themselves and reached says
	// whether each answered, by id; addrs every node's address known.
	direct map[int32]bool
	addrs  map[int32]string
	// ctrls are the controllers DescribeCluster named (KIP-919).
	ctrls []int32
	// brokers are DescribeCluster's brokers; fencedListed says its
	// version lists fenced ones (v2, Kafka 4.0+).
	brokers      []kmsg.DescribeClusterResponseBroker
	fencedListed bool
	// answered are the nodes that answered a probe.
	answered map[int32]bool
	// shards are the coordinator shards of each broker, by id.
	shards map[int32][]view.CoordinatorShard
}

func (r *reading) fail(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// phase bounds one step of a poll by the request timeout, so that a
// node that does not answer cannot use up the whole poll.
func (p *poller) phase(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.cfg.timeout())
}

// poll reads the cluster once into a view.
func (p *poller) poll(ctx context.Context) (view.View, error) {
	start := p.cfg.now()
	r := &reading{unread: map[string]bool{partBrokers: true, partQuorum: true, partTopics: true, partGroups: true},
		direct: map[int32]bool{}, addrs: map[int32]string{}, answered: map[int32]bool{}}
	step := func(f func(context.Context, *reading)) {
		c, cancel := p.phase(ctx)
		defer cancel()
		f(c, r)
	}
	step(p.readBrokers)
	step(p.readControllers)
	if r.quorum == nil && p.brokers != nil {
		step(p.readQuorumThroughBrokers)
	}
	if !r.reached {
		return view.View{}, fmt.Errorf("could not read the cluster (tried %s): %s", p.tried(), strings.Join(r.errs, "; "))
	}
	step(p.readTopics)
	step(p.readGroups)
	step(p.probe)
	r.buildNodes()
	v := r.v
	for i := range v.Nodes {
		if b := v.Nodes[i].Broker; b != nil {
			b.Coordinating = r.shards[v.Nodes[i].ID]
		}
	}
	at := r.quorumAt
	if at.IsZero() {
		at = p.cfg.now()
	}
	v.Timestamp = at.UnixMilli()
	v.Derive(at, nil)
	v.Attached = &view.Attached{
		Bootstrap: slices.Clone(p.cfg.Bootstrap), BootstrapController: slices.Clone(p.cfg.BootstrapController),
		PollMs: p.cfg.now().Sub(start).Milliseconds(), Errors: r.errs, Unreachable: slices.Clone(jmxOnly),
		FencedListed: r.fencedListed,
	}
	for _, part := range []string{partBrokers, partQuorum, partTopics, partGroups} {
		if r.unread[part] {
			v.Attached.Unread = append(v.Attached.Unread, part)
		}
	}
	return v, nil
}

func (p *poller) tried() string {
	var s []string
	if len(p.cfg.Bootstrap) > 0 {
		s = append(s, "bootstrap servers "+strings.Join(p.cfg.Bootstrap, ","))
	}
	if len(p.cfg.BootstrapController) > 0 {
		s = append(s, "bootstrap controllers "+strings.Join(p.cfg.BootstrapController, ","))
	}
	return strings.Join(s, " and ")
}

// uuidString is a topic id as Kafka prints it: URL-safe base64 without
// padding.
func uuidString(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// timeout is the request timeout, DefaultTimeout unless the config says
// otherwise.
func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}
