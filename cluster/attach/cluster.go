package attach

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Defaults.
const (
	// DefaultInterval is how often a Cluster polls: often enough to see
	// an election as it happens, seldom enough to cost a real cluster
	// little (about ten small requests a poll).
	DefaultInterval = time.Second
	// DefaultTimeout bounds each request of a poll.
	DefaultTimeout = 5 * time.Second
)

// ErrReadOnly is the answer to an action: kraftlab only reads a real
// cluster.
var ErrReadOnly = errors.New("kraftlab is attached read-only to a real Kafka cluster")

// Config says which real cluster to read and how.
type Config struct {
	// Bootstrap are brokers, host:port (--bootstrap-server).
	Bootstrap []string
	// BootstrapController are controllers, host:port
	// (--bootstrap-controller): each is asked DescribeQuorum itself, so
	// that one that does not answer shows unreachable.
	BootstrapController []string
	// Properties are Kafka client properties (--command-config):
	// security.protocol, sasl.*, ssl.*.
	Properties map[string]string
	// Interval is how often Dial's Cluster polls; 0 means
	// DefaultInterval.
	Interval time.Duration
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock views are stamped with; nil means time.Now.
	Now func() time.Time
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Cluster is a real Kafka cluster seen through polls, as a
// cluster.Operator: Status is the latest poll, Events what changed
// between polls, and every action is refused.
type Cluster struct {
	p      *poller
	events *cluster.Events
	// ctx ends with Close, and with it any poll under way.
	ctx    context.Context
	cancel context.CancelFunc

	// polling serialises polls, so that events follow them in order.
	polling sync.Mutex
	// seen is the last leadership a poll saw, for the next election's
	// "epoch 7 → 8".
	seen leadership

	mu   sync.Mutex
	last view.View
	err  error

	once sync.Once
	done chan struct{}
}

var _ cluster.Operator = (*Cluster)(nil)

// Dial polls the cluster once, failing if nothing answers, then keeps
// polling every cfg.Interval until Close.
func Dial(ctx context.Context, cfg Config) (*Cluster, error) {
	if len(cfg.Bootstrap) == 0 && len(cfg.BootstrapController) == 0 {
		return nil, errors.New("no address to attach to: give --bootstrap-server or --bootstrap-controller")
	}
	for _, a := range append(append([]string{}, cfg.Bootstrap...), cfg.BootstrapController...) {
		if !strings.Contains(a, ":") {
			return nil, fmt.Errorf("address %q: want HOST:PORT", a)
		}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	p, err := newPoller(cfg)
	if err != nil {
		return nil, err
	}
	v, err := p.poll(ctx)
	if err != nil {
		p.close()
		return nil, err
	}
	c := &Cluster{p: p, events: cluster.NewEvents(cluster.DefaultEventCapacity), last: v,
		seen: leadership{v.LeaderID, v.LeaderEpoch}, done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	return c, nil
}

func (c *Cluster) run() {
	defer close(c.done)
	t := time.NewTicker(c.p.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		_, _ = c.Refresh(c.ctx) // Status reports a failed poll
	}
}

// Refresh polls the cluster now, publishes what changed since the last
// poll, and returns the new view. Close ends a poll under way.
func (c *Cluster) Refresh(ctx context.Context) (view.View, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	c.polling.Lock()
	defer c.polling.Unlock()
	v, err := c.p.poll(ctx)
	c.mu.Lock()
	prev := c.last
	c.err = err
	if err == nil {
		if !read(&v, partTopics) {
			v.Topics = prev.Topics // the last ones read, as Unread says
		}
		if !read(&v, partGroups) {
			v.Groups = prev.Groups
		}
		c.last = v
	}
	c.mu.Unlock()
	if err != nil {
		return v, err
	}
	for _, ev := range infer(&prev, &v, &c.seen) {
		c.events.Publish(ev)
	}
	return v, nil
}

// Status is the latest poll's view; once polls fail, the error of the
// last one.
func (c *Cluster) Status(ctx context.Context) (view.View, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.last, fmt.Errorf("poll: %w", c.err)
	}
	return c.last, ctx.Err()
}

// Do refuses every action: a real cluster is only read.
func (c *Cluster) Do(_ context.Context, a cluster.Action) (cluster.Result, error) {
	return cluster.Result{}, fmt.Errorf("%s: %w (%s); actions need a playground: kraftlab up", a.Kind, ErrReadOnly, c.p.tried())
}

// Events yields the inferred events after sequence number after; with
// follow it waits for new ones until ctx ends or the Cluster closes.
func (c *Cluster) Events(ctx context.Context, after uint64, follow bool) iter.Seq2[cluster.Event, error] {
	return func(yield func(cluster.Event, error) bool) {
		if !follow {
			for _, ev := range c.events.Since(after) {
				if !yield(ev, nil) {
					return
				}
			}
			return
		}
		sub := c.events.Subscribe(after)
		for {
			ev, err := sub.Next(ctx)
			if errors.Is(err, cluster.ErrEventsClosed) {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Down stops reading the cluster; the cluster itself runs on.
func (c *Cluster) Down(context.Context) error {
	c.Close()
	return nil
}

// Close stops the polls, ending one under way, and closes the
// connections. It may be called more than once.
func (c *Cluster) Close() {
	c.once.Do(func() {
		c.cancel()
		<-c.done
		c.polling.Lock() // an outside Refresh ends first
		c.p.close()
		c.polling.Unlock()
		c.events.Close()
	})
}
