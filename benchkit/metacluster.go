package benchkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
)

// benchMaxPartitions is the controllers' max.broker.partitions in the
// metadata benchmark: above any size it fills.
const benchMaxPartitions = 10_000_000

// createTopicsVersion is the CreateTopics version the benchmark sends:
// the newest the quorum controller serves.
const createTopicsVersion = 7

// metaCluster is a whole KRaft cluster in this process for the metadata
// benchmark: controllers 1..3 and brokers 101..100+N, each built by
// server.Settings.NewServer as the playground builds them and talking over
// loopback TCP. Every node's loader has an arrivals publisher, so the
// benchmark learns when each node applied the topic it waits for.
type metaCluster struct {
	settings server.Settings
	dir      string
	voters   []int32
	brokers  []int32
	group    *server.Group
	arrivals *arrivals
	// elections keeps the voters' elections (failover's events).
	elections *events
	// states keeps when the brokers entered their lifecycle states.
	states *brokerStates
	// activations receives the quorum controllers' EventActivated.
	activations chan controller.Event
	// deactivations keeps why controllers stopped being active, to
	// explain a NOT_CONTROLLER the benchmark did not cause.
	deactMu       sync.Mutex
	deactivations []string
}

// newMetaCluster builds (unstarted) three controllers and brokers brokers.
func newMetaCluster(t server.Settings, dir string, brokers int) (*metaCluster, error) {
	c := &metaCluster{
		settings: t, dir: dir, voters: []int32{1, 2, 3},
		group:    server.NewGroup(),
		arrivals: newArrivals(), elections: newEvents(), states: newBrokerStates(),
		activations: make(chan controller.Event, 64),
	}
	for i := range brokers {
		c.brokers = append(c.brokers, int32(101+i))
	}
	for _, id := range append(append([]int32{}, c.voters...), c.brokers...) {
		cfg, err := t.NodeConfig(id, c.voters, benchClusterID, dir)
		if err == nil {
			if slices.Contains(c.voters, id) {
				// The benchmark sizes the controllers' metadata: they
				// admit every partition, while each broker still opens
				// no more replicas than its max.broker.partitions.
				cfg.Settings.MaxBrokerPartitions = benchMaxPartitions
			}
			cfg.Raft.OnEvent = c.elections.add
			cfg.OnLifecycleEvent = c.states.hook(id)
			cfg.OnControllerEvent = c.onControllerEvent
			cfg.Publishers = func() []loader.Publisher {
				return []loader.Publisher{c.arrivals.publisher(id)}
			}
			_, err = c.group.Add(cfg)
		}
		if err != nil {
			c.close()
			return nil, fmt.Errorf("node %d: %w", id, err)
		}
	}
	return c, nil
}

func (c *metaCluster) onControllerEvent(ev controller.Event) {
	if ev.Kind == controller.EventDeactivated {
		c.deactMu.Lock()
		c.deactivations = append(c.deactivations, fmt.Sprintf("epoch %d: %s", ev.Epoch, ev.Reason))
		c.deactMu.Unlock()
	}
	if ev.Kind != controller.EventActivated {
		return
	}
	select {
	case c.activations <- ev:
	default: // nobody reads old activations; never block the controller
	}
}

// start starts every node and waits until a controller is active and
// every broker is RUNNING (registered, caught up and unfenced).
func (c *metaCluster) start(ctx context.Context) error {
	if err := c.group.StartAll(ctx); err != nil {
		return err
	}
	return c.waitHealthy(ctx)
}

// waitHealthy waits for an active controller and every broker RUNNING.
func (c *metaCluster) waitHealthy(ctx context.Context) error {
	return waitUntil(ctx, "an active controller and every broker RUNNING", func() bool {
		if c.active() == nil {
			return false
		}
		for _, id := range c.brokers {
			lm := c.group.Server(id).Lifecycle()
			if lm == nil || lm.State() != server.BrokerRunning {
				return false
			}
		}
		return true
	})
}

// active returns the controller node whose quorum controller is active.
func (c *metaCluster) active() *server.Server {
	for _, id := range c.voters {
		n := c.group.Server(id)
		if !n.Running() {
			continue
		}
		if qc := n.Controller(); qc != nil {
			if _, ok := qc.Active(); ok {
				return n
			}
		}
	}
	return nil
}

// errNotController says the node asked is not the active controller.
var errNotController = errors.New("not the active controller")

// createTopics asks node (a controller, or a broker that forwards) to
// create topics of partitions partitions and rf replicas each, and
// returns once every topic was created.
func (c *metaCluster) createTopics(ctx context.Context, cl *wire.Client, names []string, partitions int32, rf int16) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = createTopicsVersion
	req.TimeoutMillis = int32(c.settings.RequestTimeout / time.Millisecond)
	for _, name := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
		req.Topics = append(req.Topics, t)
	}
	resp, err := cl.Do(ctx, req)
	if err != nil {
		return fmt.Errorf("CreateTopics: %w", err)
	}
	r, ok := resp.(*kmsg.CreateTopicsResponse)
	if !ok {
		return fmt.Errorf("CreateTopics: answered with %T", resp)
	}
	for _, t := range r.Topics {
		if t.ErrorCode == kerr.NotController.Code {
			c.deactMu.Lock()
			defer c.deactMu.Unlock()
			if len(c.deactivations) > 0 {
				return fmt.Errorf("%w (deactivations: %s)", errNotController, strings.Join(c.deactivations, "; "))
			}
			return errNotController
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("CreateTopics %s: %w", t.Topic, err)
		}
	}
	if len(r.Topics) != len(names) {
		return fmt.Errorf("CreateTopics: %d topics answered of %d", len(r.Topics), len(names))
	}
	return nil
}

// createTopicsRetrying creates topics through whichever controller is
// active, as Kafka's admin client does: after NOT_CONTROLLER it asks the
// next active controller, and on a retry a topic that already exists was
// created by the attempt whose answer was lost.
func (c *metaCluster) createTopicsRetrying(ctx context.Context, names []string, partitions int32, rf int16) error {
	for attempt := 0; ; attempt++ {
		var active *server.Server
		if err := waitUntil(ctx, "an active controller", func() bool { active = c.active(); return active != nil }); err != nil {
			return err
		}
		cl, err := c.client(active)
		if err != nil {
			return err
		}
		err = c.createTopics(ctx, cl, names, partitions, rf)
		cl.Close()
		switch {
		case err == nil, attempt > 0 && errors.Is(err, kerr.TopicAlreadyExists):
			return nil
		case !errors.Is(err, errNotController):
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", err, ctx.Err())
		case <-time.After(c.settings.RetryBackoff):
		}
	}
}

// controllerChanges returns why controllers stopped being active so far.
func (c *metaCluster) controllerChanges() []string {
	c.deactMu.Lock()
	defer c.deactMu.Unlock()
	return slices.Clone(c.deactivations)
}

// client dials node n; CreateTopics is open to anonymous clients, as it
// is to users' tools.
func (c *metaCluster) client(n *server.Server) (*wire.Client, error) {
	return wire.NewClient(wire.ClientConfig{From: 0, To: n.ID(), Addr: n.Addr(), ClientID: "kraftlab-bench-metadata"})
}

// close kills every node.
func (c *metaCluster) close() error { return c.group.KillAll() }

// arrivals records when each node's loader first published an image
// holding the topic the benchmark waits for.
type arrivals struct {
	mu      sync.Mutex
	want    string
	at      map[int32]time.Time
	brokers map[int32]bool
	missing int
	done    chan struct{}
}

func newArrivals() *arrivals { return &arrivals{at: map[int32]time.Time{}} }

// expect starts waiting for topic on brokers; the channel closes once
// every one of them has applied it.
func (a *arrivals) expect(topic string, brokers []int32) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.want, a.at, a.done = topic, map[int32]time.Time{}, make(chan struct{})
	a.brokers, a.missing = map[int32]bool{}, len(brokers)
	for _, id := range brokers {
		a.brokers[id] = true
	}
	return a.done
}

// times returns when each node applied the awaited topic.
func (a *arrivals) times() map[int32]time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[int32]time.Time, len(a.at))
	for id, t := range a.at {
		out[id] = t
	}
	return out
}

// publisher is node id's loader publisher: it runs on that node's raft
// loop, so the time it takes is the moment the node's image holds the
// change.
func (a *arrivals) publisher(id int32) loader.Publisher {
	return loader.PublisherFuncs{Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
		now := time.Now()
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.want == "" {
			return
		}
		if _, seen := a.at[id]; seen || img.Topics().TopicByName(a.want) == nil {
			return
		}
		a.at[id] = now
		if a.brokers[id] {
			a.missing--
			if a.missing == 0 {
				close(a.done)
			}
		}
	}}
}

// waitUntil polls cond every millisecond until it holds or ctx ends.
func waitUntil(ctx context.Context, what string, cond func() bool) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
