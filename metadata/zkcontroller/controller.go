package zkcontroller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config configures a KafkaController.
type Config struct {
	// NodeID is the broker the controller runs on.
	NodeID int32
	// ZK is the broker's ZooKeeper session, shared with its registration.
	ZK *kafkazk.Client
	// Send sends a request to a broker and waits for its answer.
	Send SendFunc
	// Clock times the senders' backoff and stamps events; nil is the
	// wall clock.
	Clock *clock.Clock
	// Logger receives the controller's log; nil discards it.
	Logger *slog.Logger
	// OnEvent, if set, hears what the controller did, from its event
	// loop; it must not block.
	OnEvent func(Event)
}

// EventKind says what an Event reports.
type EventKind int

// The controller's events.
const (
	// Elected: this broker won /controller; the failover begins.
	Elected EventKind = iota + 1
	// Managing: the failover read ZooKeeper and queued its pushes; the
	// cluster is managed again.
	Managing
	// Resigned: this broker is no longer the controller.
	Resigned
	// LeaderChanged: a partition has a new leader.
	LeaderChanged
)

func (k EventKind) String() string {
	switch k {
	case Elected:
		return "elected"
	case Managing:
		return "managing"
	case Resigned:
		return "resigned"
	case LeaderChanged:
		return "leader-changed"
	}
	return "unknown"
}

// Event is something the controller did.
type Event struct {
	Kind  EventKind
	At    time.Time
	Epoch int32
	// Partition, Leader and LeaderEpoch are a LeaderChanged's.
	Partition   TopicPartition
	Leader      int32
	LeaderEpoch int32
	// Failover is a Managing's: how the failover's time went.
	Failover Failover
}

// Failover is what one controller failover took: the window in which the
// cluster was unmanaged, from the election until every push was queued.
type Failover struct {
	Epoch int32
	// Brokers, Topics and Partitions are what it read from ZooKeeper.
	Brokers, Topics, Partitions int
	// Reads counts the znodes it read.
	Reads int
	// Read is the time reading ZooKeeper took, Total the whole failover
	// until the pushes were queued.
	Read, Total time.Duration
}

// Status is the controller as its broker sees it.
type Status struct {
	// Active says this broker is the controller.
	Active bool
	// ControllerID is the controller this broker last saw in
	// /controller, -1 if none.
	ControllerID int32
	// Epoch is the controller epoch this broker holds while active.
	Epoch int32
	// Channels are the senders to each broker while active.
	Channels []ChannelStats
	// LastFailover is this broker's last failover, if it ran one.
	LastFailover Failover
}

// KafkaController is the ZooKeeper-era controller every broker runs; the
// one that wins /controller is active. Its methods are safe for
// concurrent use.
type KafkaController struct {
	cfg    Config
	log    *slog.Logger
	events chan func()
	ch     *channelManager

	// ctx is the active controller's context, nil while not active; only
	// the event loop reads or writes it.
	ctx *controllerContext

	mu     sync.Mutex
	status Status

	started   atomic.Bool
	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// New makes a controller; Start runs it.
func New(cfg Config) *KafkaController {
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &KafkaController{
		cfg:    cfg,
		log:    cfg.Logger.With("part", "kafka-controller"),
		events: make(chan func(), 1024),
		ch:     newChannelManager(cfg.Send, cfg.Clock),
		status: Status{ControllerID: -1},
		stop:   make(chan struct{}),
	}
}

// Start runs the event loop and tries to become the controller (Kafka's
// Startup event).
func (c *KafkaController) Start() {
	c.started.Store(true)
	c.wg.Add(1)
	go c.loop()
	c.enqueue(c.elect)
}

// Close resigns, if active, and stops the loop; /controller goes with
// the session, or at once if resign is set (a clean stop).
func (c *KafkaController) Close(resign bool) {
	if !c.started.Load() {
		// Its broker never registered: nothing runs but the senders.
		c.closeOnce.Do(func() { close(c.stop) })
		c.ch.stopAll()
		return
	}
	done := make(chan struct{})
	if !c.enqueue(func() {
		if c.ctx != nil {
			c.forget()
			if resign {
				if err := c.cfg.ZK.Resign(); err != nil {
					c.log.Warn("cannot delete /controller", "err", err)
				}
			}
		}
		close(done)
	}) {
		return
	}
	<-done
	c.closeOnce.Do(func() { close(c.stop) })
	c.wg.Wait()
	c.ch.stopAll()
}

// Status is the controller's current status.
func (c *KafkaController) Status() Status {
	c.mu.Lock()
	st := c.status
	c.mu.Unlock()
	if st.Active {
		st.Channels = c.ch.stats()
	}
	return st
}

// SessionExpired says the ZooKeeper session expired: the controller
// resigns, its /controller is gone (Kafka's Expire event).
func (c *KafkaController) SessionExpired() {
	c.enqueue(func() {
		if c.ctx != nil {
			c.resign()
		}
	})
}

// SessionEstablished says a new session replaced an expired one: the
// controller stands again (RegisterBrokerAndReelect, the registration
// being the broker's).
func (c *KafkaController) SessionEstablished() { c.enqueue(c.elect) }

// enqueue hands f to the event loop; false once the loop stopped.
func (c *KafkaController) enqueue(f func()) bool {
	select {
	case <-c.stop:
		return false
	default:
	}
	select {
	case c.events <- f:
		return true
	case <-c.stop:
		return false
	}
}

func (c *KafkaController) loop() {
	defer c.wg.Done()
	for {
		select {
		case f := <-c.events:
			f()
		case <-c.stop:
			return
		}
	}
}

// call runs f on the event loop and waits for it, or for ctx.
func call[T any](ctx context.Context, c *KafkaController, f func() T) (T, error) {
	out := make(chan T, 1)
	var zero T
	if !c.enqueue(func() { out <- f() }) {
		return zero, errors.New("the controller stopped")
	}
	select {
	case v := <-out:
		return v, nil
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	}
}

// watch hands the one-shot watch w's firing to the loop as f.
func (c *KafkaController) watch(w <-chan zk.Event, f func()) {
	if w == nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-w:
			c.enqueue(f)
		case <-c.stop:
		}
	}()
}

// elect reads /controller, setting a watch on it, and stands if it is
// empty (Kafka's elect).
func (c *KafkaController) elect() {
	id, ok, w, err := c.cfg.ZK.Controller()
	if err != nil {
		c.log.Warn("cannot read the controller", "err", err)
		c.retryLater(c.elect)
		return
	}
	c.watch(w, c.controllerChanged)
	if ok {
		c.setControllerID(id)
		return
	}
	seat, err := c.cfg.ZK.Elect(c.cfg.NodeID, c.cfg.Clock.Now())
	switch {
	case errors.Is(err, kafkazk.ErrNotElected), errors.Is(err, kafkazk.ErrControllerMoved):
		// Another broker won; the watch set above tells of it.
		return
	case err != nil:
		c.log.Warn("cannot stand for controller", "err", err)
		c.retryLater(c.elect)
		return
	}
	c.failover(seat)
}

// controllerChanged is the watch on /controller firing: a controller
// that lost it resigns, and an empty seat is stood for.
func (c *KafkaController) controllerChanged() {
	id, ok, w, err := c.cfg.ZK.Controller()
	if err != nil {
		c.log.Warn("cannot read the controller", "err", err)
		c.retryLater(c.controllerChanged)
		return
	}
	if ok {
		c.watch(w, c.controllerChanged)
		if c.ctx != nil && id != c.cfg.NodeID {
			c.resign()
		}
		c.setControllerID(id)
		return
	}
	if c.ctx != nil {
		c.resign()
	}
	c.setControllerID(-1)
	c.watch(w, c.controllerChanged)
	c.elect()
}

// retryLater runs f on the loop again after a pause, for a ZooKeeper
// read that failed (the session reconnecting).
func (c *KafkaController) retryLater(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-c.cfg.Clock.After(time.Second):
			c.enqueue(f)
		case <-c.stop:
		}
	}()
}

func (c *KafkaController) setControllerID(id int32) {
	c.mu.Lock()
	c.status.ControllerID = id
	c.mu.Unlock()
}

// resign forgets the context and stops the senders (Kafka's
// onControllerResignation), and says so.
func (c *KafkaController) resign() {
	epoch := c.forget()
	c.log.Info("resigned as controller", "epoch", epoch)
	c.emit(Event{Kind: Resigned, Epoch: epoch})
}

// forget drops the active controller's state, as its broker stops; it
// returns the epoch it held.
func (c *KafkaController) forget() int32 {
	epoch := c.ctx.seat.Epoch
	c.ctx = nil
	c.ch.stopAll()
	c.mu.Lock()
	c.status.Active, c.status.Epoch = false, 0
	c.mu.Unlock()
	return epoch
}

// moved handles a write that found a newer controller epoch: resign,
// and read /controller again.
func (c *KafkaController) moved(err error) bool {
	if !errors.Is(err, kafkazk.ErrControllerMoved) {
		return false
	}
	if c.ctx != nil {
		c.resign()
	}
	c.controllerChanged()
	return true
}

func (c *KafkaController) emit(ev Event) {
	ev.At = c.cfg.Clock.Now()
	if c.cfg.OnEvent != nil {
		c.cfg.OnEvent(ev)
	}
}

// logResponse logs a broker's refusal of a pushed request.
func (c *KafkaController) logResponse(to int32, resp kmsg.Response) {
	var code int16
	switch r := resp.(type) {
	case *kmsg.LeaderAndISRResponse:
		code = r.ErrorCode
	case *kmsg.UpdateMetadataResponse:
		code = r.ErrorCode
	case *kmsg.StopReplicaResponse:
		code = r.ErrorCode
	}
	if code != 0 {
		c.log.Info("broker refused a request", "broker", to, "api", fmt.Sprintf("%T", resp), "code", code)
	}
}
