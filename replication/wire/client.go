package wire

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// From is the node the client belongs to and To the node it talks
	// to, for Links and Counters.
	From, To int32
	// Addr is the TCP address of node To.
	Addr string
	// ClientID is sent in every request header; empty means
	// "kraftlab-node-<From>".
	ClientID string
	// Links, if set, routes every request through link From→To and every
	// response through link To→From.
	Links *Links
	// Counters, if set, counts the client's traffic on both links and
	// node From's requests sent and responses received.
	Counters *Counters
	// MaxFrameSize bounds a response frame; 0 means
	// DefaultClientMaxFrameSize. A caller that raises the quorum's fetch
	// max bytes beyond it must raise this too.
	MaxFrameSize int32
	// DialTimeout bounds connecting (and authenticating, with SASL); 0
	// means 10 s, Kafka's socket.connection.setup.timeout.ms.
	DialTimeout time.Duration
	// SASL, if set, authenticates every connection before its first
	// request (SaslHandshake, then SaslAuthenticate until the mechanism
	// is done), through Links and Counters like any request; see
	// MemberMechanism. A refusal fails the requests waiting on the
	// connection with an error that wraps the Kafka error
	// (kerr.SaslAuthenticationFailed for a wrong secret), and the next
	// request dials and authenticates again. DialTimeout bounds dialing
	// and authenticating together (Kafka's
	// socket.connection.setup.timeout.ms covers only the TCP connect), so
	// a message lost on a faulty link cannot stall the connection.
	SASL sasl.Mechanism
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Clock is the cluster clock that times the client's calls, dialing
	// and authenticating, and its links' delays; nil is the wall clock.
	// While it is paused the links hold every message (see Links).
	Clock *clock.Clock
}

// Client sends requests from one node to another over one lazily dialed
// TCP connection, pipelined with correlation ids. After the connection
// fails the next request dials again. A Client is safe for concurrent use.
type Client struct {
	cfg      ClientConfig
	name     string // for errors: "node 1→2 (127.0.0.1:9092)"
	log      *slog.Logger
	reqLink  *linkCounters
	respLink *linkCounters
	node     *nodeCounters
	wg       sync.WaitGroup // connection goroutines

	mu     sync.Mutex
	conn   *clientConn
	corr   int32
	closed bool
}

// NewClient returns a client for cfg; it dials on the first request.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.Addr == "" {
		return nil, fmt.Errorf("wire: client %d→%d: no address", cfg.From, cfg.To)
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "kraftlab-node-" + strconv.Itoa(int(cfg.From))
	}
	if len(cfg.ClientID) > math.MaxInt16 {
		return nil, fmt.Errorf("wire: client %d→%d: client id of %d bytes is too long", cfg.From, cfg.To, len(cfg.ClientID))
	}
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = DefaultClientMaxFrameSize
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Counters == nil {
		cfg.Counters = NewCounters()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := fmt.Sprintf("node %d→%d (%s)", cfg.From, cfg.To, cfg.Addr)
	return &Client{
		cfg:      cfg,
		name:     name,
		log:      log.With("client", name),
		reqLink:  cfg.Counters.link(LinkID{cfg.From, cfg.To}),
		respLink: cfg.Counters.link(LinkID{cfg.To, cfg.From}),
		node:     cfg.Counters.node(cfg.From),
	}, nil
}

// Send sends req at its version and returns at once. Unless Send returns an
// error, done is called exactly once, on a client goroutine, with the
// response or with the error that ended the request: ctx ended, the link is
// down, the connection failed, the response did not decode, or the client
// closed. done must not block. A request or response lost on a lossy link
// only ends with ctx, so give ctx a deadline. req must not change until done
// is called.
func (c *Client) Send(ctx context.Context, req kmsg.Request, done func(kmsg.Response, error)) error {
	if req == nil || done == nil {
		return fmt.Errorf("wire: client %s: Send needs a request and a done func", c.name)
	}
	return c.send(ctx, &call{req: req, done: done})
}

// SendWithin is Send with a timeout instead of a context: done gets
// context.DeadlineExceeded if no response came within timeout. The
// connection keeps one timer for all its calls, where a context per call
// costs a timer and a watch each (a raft client sends a few Fetches per
// commit).
func (c *Client) SendWithin(timeout time.Duration, req kmsg.Request, done func(kmsg.Response, error)) error {
	if req == nil || done == nil {
		return fmt.Errorf("wire: client %s: SendWithin needs a request and a done func", c.name)
	}
	return c.send(context.Background(), &call{req: req, done: done, deadline: c.cfg.Clock.Now().Add(timeout)})
}

// Do sends req and waits for its response until ctx ends.
func (c *Client) Do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if req == nil {
		return nil, fmt.Errorf("wire: client %s: Do needs a request", c.name)
	}
	k := &call{req: req, reply: replies.Get().(chan reply)}
	if err := c.send(ctx, k); err != nil {
		replies.Put(k.reply)
		return nil, err
	}
	r := <-k.reply
	replies.Put(k.reply)
	return r.resp, r.err
}

// replies recycles Do's channels: each carries exactly one reply and is
// empty again once Do has it.
var replies = sync.Pool{New: func() any { return make(chan reply, 1) }}

func (c *Client) send(ctx context.Context, k *call) error {
	if c.cfg.Links != nil {
		k.at = c.cfg.Clock.Now()
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("wire: client %s: %w", c.name, ErrClosed)
	}
	c.corr++
	k.corr = c.corr
	cc := c.conn
	if cc == nil || !cc.enqueue(k) {
		// The first call is queued before the connection's goroutine
		// starts, so it cannot find the connection dead.
		cc = newClientConn(c)
		cc.enqueue(k)
		c.conn = cc
		c.wg.Add(1)
		go cc.run()
	}
	c.mu.Unlock()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			cc.finish(k, nil, fmt.Errorf("%s request to %s: %w", apiName(k.req.Key()), c.name, ctx.Err()))
		})
		cc.mu.Lock()
		if k.finished {
			cc.mu.Unlock()
			stop()
		} else {
			k.stop = stop
			cc.mu.Unlock()
		}
	}
	return nil
}

// nextCorr returns the next correlation id.
func (c *Client) nextCorr() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corr++
	return c.corr
}

// Close closes the connection, fails every outstanding request with
// ErrClosed and waits for the client's goroutines to exit.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cc := c.conn
	c.conn = nil
	c.mu.Unlock()
	if cc != nil {
		cc.die(fmt.Errorf("client %s: %w", c.name, ErrClosed))
	}
	c.wg.Wait()
	return nil
}
