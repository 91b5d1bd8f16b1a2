package kafkazk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrControllerMoved says the controller epoch changed under a write: a
// newer controller holds the seat, and this one must resign (Kafka's
// ControllerMovedException).
var ErrControllerMoved = errors.New("the controller moved: the controller epoch changed")

// ErrBadVersion says a conditional write found the znode at another
// version than it named.
var ErrBadVersion = zk.ErrBadVersion

// Client is one ZooKeeper session reading and writing Kafka's znodes
// (Kafka's KafkaZkClient). Its Events report the session's state
// changes: a broker re-registers and a controller resigns when the
// session expires. Safe for concurrent use.
type Client struct {
	conn   *zk.Conn
	events <-chan zk.Event
	dialer *dialer
}

// dialer opens the session's connections and can cut them for good, so
// that a crash leaves the session to expire on the server, as a dead
// process's would.
type dialer struct {
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
	// through dials; nil is net.DialTimeout.
	through Dial
}

// Dial opens a connection to ZooKeeper, as net.DialTimeout does: the
// playground's goes through its faults between a broker and ZooKeeper.
type Dial func(network, address string, timeout time.Duration) (net.Conn, error)

func (d *dialer) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, errAbandoned
	}
	dial := d.through
	if dial == nil {
		dial = net.DialTimeout
	}
	c, err := dial(network, address, timeout)
	if err == nil {
		d.conns = append(d.conns[:0:0], c)
	}
	return c, err
}

func (d *dialer) cut() {
	d.mu.Lock()
	d.dead = true
	conns := d.conns
	d.conns = nil
	d.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

var errAbandoned = errors.New("the session was abandoned")

// Connect opens a session with the ZooKeeper at addr and waits, until ctx
// ends, for it to be established. sessionTimeout is
// zookeeper.session.timeout.ms: how long the ensemble keeps the session,
// and its ephemeral znodes, after it last heard from the client.
func Connect(ctx context.Context, addr string, sessionTimeout time.Duration, log *slog.Logger) (*Client, error) {
	return ConnectThrough(ctx, addr, sessionTimeout, log, nil)
}

// ConnectThrough is Connect with every connection opened by dial (nil:
// net.DialTimeout).
func ConnectThrough(ctx context.Context, addr string, sessionTimeout time.Duration, log *slog.Logger, dial Dial) (*Client, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &dialer{through: dial}
	conn, events, err := zk.Connect([]string{addr}, sessionTimeout, zk.WithLogger(zkLogger{log}), zk.WithLogInfo(false), zk.WithDialer(d.dial))
	if err != nil {
		return nil, fmt.Errorf("zookeeper %s: %w", addr, err)
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return &Client{conn: conn, events: events, dialer: d}, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("zookeeper %s: no session: %w", addr, context.Cause(ctx))
		}
	}
}

// Events are the session's state changes (zk.StateHasSession,
// zk.StateExpired, ...). Only one reader should take them.
func (c *Client) Events() <-chan zk.Event { return c.events }

// SessionID is the current session's id, 0 between an expiry and the
// next session.
func (c *Client) SessionID() int64 { return c.conn.SessionID() }

// Connected reports whether the session is connected to ZooKeeper now.
func (c *Client) Connected() bool { return c.conn.State() == zk.StateHasSession }

// Close ends the session: its ephemeral znodes go at once.
func (c *Client) Close() { c.conn.Close() }

// Abandon drops the connection without ending the session, as a process
// that crashed: ZooKeeper keeps the session, and its ephemeral znodes,
// until the session timeout passes without a word from it.
func (c *Client) Abandon() {
	c.Cut()
	c.conn.Close()
}

// Cut closes the session's connection and refuses new ones, at once;
// Abandon or Close still end the client.
func (c *Client) Cut() { c.dialer.cut() }

// Conn is the underlying connection, for reads this client has no
// method for.
func (c *Client) Conn() *zk.Conn { return c.conn }

// EnsurePaths creates the persistent znodes a broker needs that do not
// exist yet, parents first (KafkaZkClient.createTopLevelPaths).
func (c *Client) EnsurePaths() error {
	for _, p := range PersistentPaths {
		if err := c.ensure(p); err != nil {
			return err
		}
	}
	return nil
}

// ensure creates path and its missing parents, empty and persistent.
func (c *Client) ensure(path string) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := c.conn.Create(path[:i], nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", path[:i], err)
		}
	}
	return nil
}

// ClusterID is the cluster's id, created as id if there is none yet
// (KafkaZkClient.getOrCreateClusterId).
func (c *Client) ClusterID(id string) (string, error) {
	if err := c.ensure("/cluster"); err != nil {
		return "", err
	}
	_, err := c.conn.Create(ClusterIDPath, EncodeClusterID(id), 0, zk.WorldACL(zk.PermAll))
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return "", fmt.Errorf("create %s: %w", ClusterIDPath, err)
	}
	data, _, err := c.conn.Get(ClusterIDPath)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ClusterIDPath, err)
	}
	return DecodeClusterID(data)
}

// zkLogger sends go-zookeeper's log lines to slog at debug: reconnects
// are routine in a playground that kills ZooKeeper.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "part", "zookeeper-client")
}
