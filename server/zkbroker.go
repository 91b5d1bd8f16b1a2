package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kraftlab/kraftlab/metadata/cache"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/zkcontroller"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ZooKeeperConfig makes a broker one of the ZooKeeper era.
type ZooKeeperConfig struct {
	// Addr is the ZooKeeper server, host:port.
	Addr string
	// SessionTimeout is zookeeper.session.timeout.ms: how long ZooKeeper
	// keeps a silent broker's session, and so its registration; 0 is
	// Kafka's 18 s.
	SessionTimeout time.Duration
	// Dial, if set, opens the broker's connections to ZooKeeper: the
	// playground's cuts them to partition a broker from ZooKeeper.
	Dial kafkazk.Dial
}

// DefaultZooKeeperSessionTimeout is zookeeper.session.timeout.ms's
// default.
const DefaultZooKeeperSessionTimeout = 18 * time.Second

// controllerSocketTimeout is controller.socket.timeout.ms: how long a
// request to or from the controller may wait for its answer, which may
// wait for the controller's writes to ZooKeeper.
const controllerSocketTimeout = 30 * time.Second

// Kafka's controlled shutdown: controlled.shutdown.max.retries and
// controlled.shutdown.retry.backoff.ms.
const (
	controlledShutdownTries   = 3
	controlledShutdownBackoff = 5 * time.Second
)

// ZkBrokerServer is what a broker of the ZooKeeper era runs for one
// incarnation (Kafka 3.9's KafkaServer): the same ReplicaManager,
// producer ids and Metadata answers as a KRaft broker, fed by what the
// controller pushes (zkMetadata) instead of the metadata log; its
// registration in ZooKeeper; and the KafkaController, which acts if this
// broker wins /controller.
type ZkBrokerServer struct {
	s        *Server
	ch       *controllerChannel
	pushes   *controllerChannel
	meta     *zkMetadata
	gate     *pushGate
	addrs    *zkAddresses
	replicas *ReplicaManager
	pids     *producerIDManager

	// epoch is the broker epoch: its registration's czxid, -1 before it
	// registered.
	epoch atomic.Int64
	// zk and controller are set once the broker has a session.
	zk         atomic.Pointer[kafkazk.Client]
	controller atomic.Pointer[zkcontroller.KafkaController]

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// newZkBrokerServer makes a ZooKeeper-era broker's parts for a new
// incarnation and registers their APIs on mux.
func newZkBrokerServer(s *Server, mux *wire.Mux) (*ZkBrokerServer, error) {
	b := &ZkBrokerServer{s: s, ch: newControllerChannel(s), pushes: newControllerChannel(s)}
	b.epoch.Store(-1)
	b.gate = newPushGate(b.applyPush)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	deps := brokerDeps{
		ch:          b.ch,
		brokerEpoch: b.epoch.Load,
		// The leader checks a follower's fetches against the epoch its
		// metadata holds; UpdateMetadata carries none, so neither do
		// the fetches.
		fetchEpoch: func() int64 { return -1 },
		// A broker of inter.broker.protocol.version 3.9 fetches with
		// its versions (MetadataVersion.fetchRequestVersion and
		// listOffsetRequestVersion), which a Kafka 3.9 leader serves.
		fetchVersion:       17,
		listOffsetsVersion: 9,
	}
	var pub loader.Publisher
	b.meta = newZkMetadata(s.id, func(d *image.MetadataDelta, img *image.MetadataImage) {
		pub.OnMetadataUpdate(d, img, loader.Manifest{})
	})
	b.addrs = newZkAddresses(s.cfg.Raft.Peers, b.meta)
	b.ch.address, b.pushes.address = b.addrs.address, b.addrs.address
	deps.controller = b.meta.controller
	var err error
	if b.replicas, err = s.newReplicaManager(mux, deps); err != nil {
		b.closeChannels()
		return nil, err
	}
	pub = b.replicas.publisher()
	if b.pids, err = s.newProducerIDManager(mux, deps); err != nil {
		b.replicas.Close()
		b.closeChannels()
		return nil, err
	}
	err = cache.RegisterWithController(mux, s.servedImage, b.meta.controller, s.cfg.Raft.Raft.ClusterID, s.id, listenerName)
	if err == nil {
		err = b.register(mux)
	}
	if err != nil {
		b.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	return b, nil
}

// ReplicaManager is the incarnation's ReplicaManager.
func (b *ZkBrokerServer) ReplicaManager() *ReplicaManager { return b.replicas }

// Controller is the incarnation's KafkaController, nil before the broker
// has a ZooKeeper session.
func (b *ZkBrokerServer) Controller() *zkcontroller.KafkaController { return b.controller.Load() }

// BrokerEpoch is the broker's epoch, its registration's czxid; -1 before
// it registered.
func (b *ZkBrokerServer) BrokerEpoch() int64 { return b.epoch.Load() }

// ControllerID is the controller the broker's metadata names, -1 if none.
func (b *ZkBrokerServer) ControllerID() int32 { return b.meta.controller() }

// ControllerEpoch is the newest controller epoch the broker heard.
func (b *ZkBrokerServer) ControllerEpoch() int32 { return b.meta.epoch() }

// Image is the metadata the controller's pushes gave the broker.
func (b *ZkBrokerServer) Image() *image.MetadataImage { return b.meta.image() }

// listening connects to ZooKeeper and starts the broker's session: its
// registration once the listener has its port, then the controller.
func (b *ZkBrokerServer) listening() error {
	zc := b.s.cfg.ZooKeeper
	timeout := zc.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultZooKeeperSessionTimeout
	}
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	c, err := kafkazk.ConnectThrough(ctx, zc.Addr, timeout, b.s.log, zc.Dial)
	if err != nil {
		return fmt.Errorf("node %d: %w", b.s.id, err)
	}
	if err := c.EnsurePaths(); err != nil {
		c.Close()
		return fmt.Errorf("node %d: %w", b.s.id, err)
	}
	want := b.s.cfg.Raft.Raft.ClusterID
	if got, err := c.ClusterID(want); err != nil || got != want {
		c.Close()
		if err == nil {
			err = fmt.Errorf("ZooKeeper holds cluster %s, this broker belongs to %s", got, want)
		}
		return fmt.Errorf("node %d: %w", b.s.id, err)
	}
	b.zk.Store(c)
	ctl := zkcontroller.New(zkcontroller.Config{
		NodeID: b.s.id, ZK: c, Clock: b.s.cfg.Clock, Logger: b.s.log,
		Send: func(ctx context.Context, to kafkazk.Broker, req kmsg.Request) (kmsg.Response, error) {
			if ep, ok := to.Endpoint(listenerName); ok {
				b.addrs.register(to.ID, ep.Host, ep.Port)
			}
			return b.pushes.send(ctx, to.ID, req)
		},
		OnEvent: b.s.cfg.OnZkControllerEvent,
	})
	b.controller.Store(ctl)
	b.wg.Add(1)
	go b.run(c, ctl)
	return nil
}

// run registers the broker, then stands for controller, and does both
// again whenever the session expired and a new one began.
func (b *ZkBrokerServer) run(c *kafkazk.Client, ctl *zkcontroller.KafkaController) {
	defer b.wg.Done()
	if !b.registerBroker(c) {
		return
	}
	ctl.Start()
	for {
		select {
		case <-b.ctx.Done():
			return
		case ev := <-c.Events():
			switch ev.State {
			case zk.StateExpired:
				b.s.log.Info("ZooKeeper session expired")
				b.epoch.Store(-1)
				ctl.SessionExpired()
			case zk.StateHasSession:
				if b.epoch.Load() == -1 {
					if !b.registerBroker(c) {
						return
					}
					ctl.SessionEstablished()
				}
			}
		}
	}
}

// registerBroker writes the broker's registration, trying again while a
// registration of the broker's previous session is still there (after a
// crash, until ZooKeeper expires that session). False if the broker
// stopped first.
func (b *ZkBrokerServer) registerBroker(c *kafkazk.Client) bool {
	host, port, _ := net.SplitHostPort(b.s.Addr())
	p, _ := strconv.ParseUint(port, 10, 16)
	reg := kafkazk.Broker{ID: b.s.id, Timestamp: b.s.cfg.Clock.Now(),
		Endpoints: []kafkazk.Endpoint{{Listener: listenerName, Host: host, Port: int32(p)}}}
	for {
		epoch, err := c.RegisterBroker(reg)
		if err == nil {
			b.meta.setBrokerEpoch(epoch)
			b.epoch.Store(epoch)
			b.s.log.Info("registered in ZooKeeper", "broker_epoch", epoch)
			// The pushes that came before are fenced by this epoch now.
			b.gate.openGate()
			return true
		}
		b.s.log.Info("cannot register yet", "err", err)
		select {
		case <-b.ctx.Done():
			return false
		case <-b.s.cfg.Clock.After(500 * time.Millisecond):
		}
	}
}

// shutdown is Kafka's controlled shutdown of a ZooKeeper-era broker: it
// asks the controller, named by its metadata, to move its leaderships
// away, up to three times, and goes anyway after that.
func (b *ZkBrokerServer) shutdown(ctx context.Context) error {
	// Kafka 3.9's KafkaServer shows the same states as a KRaft broker's
	// controlled shutdown, so both modes' are timed alike.
	b.setState(BrokerPendingControlledShutdown, b.meta.controller())
	var last error
	for try := range controlledShutdownTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				b.setState(BrokerShuttingDown, -1)
				return fmt.Errorf("controlled shutdown: %w", context.Cause(ctx))
			case <-b.s.cfg.Clock.After(controlledShutdownBackoff):
			}
		}
		req := kmsg.NewPtrControlledShutdownRequest()
		req.Version, req.BrokerID, req.BrokerEpoch = 3, b.s.id, b.epoch.Load()
		tryCtx, cancel := b.s.cfg.Clock.WithTimeout(ctx, controllerSocketTimeout)
		resp, err := b.ch.send(tryCtx, b.meta.controller(), req)
		cancel()
		if err != nil {
			last = err
			continue
		}
		r := resp.(*kmsg.ControlledShutdownResponse)
		if r.ErrorCode == 0 && len(r.PartitionsRemaining) == 0 {
			b.setState(BrokerShuttingDown, b.meta.controller())
			return nil
		}
		last = fmt.Errorf("error %d, %d partitions still led here", r.ErrorCode, len(r.PartitionsRemaining))
	}
	b.s.log.Info("controlled shutdown did not finish; stopping anyway", "err", last)
	b.setState(BrokerShuttingDown, -1)
	return nil
}

// setState tells the server's lifecycle listener the broker's state, and
// which controller's answer brought it there (-1: none did).
func (b *ZkBrokerServer) setState(st BrokerState, controller int32) {
	if on := b.s.cfg.OnLifecycleEvent; on != nil {
		on(LifecycleEvent{Kind: EventStateChanged, At: b.s.cfg.Clock.Now(), State: st, BrokerEpoch: b.epoch.Load(), Controller: controller})
	}
}

// stopped ends the session cleanly once the listener closed: the
// controller resigns and gives up /controller, and the registration goes
// at once, so the others need not wait for a session timeout.
func (b *ZkBrokerServer) stopped() {
	b.replicas.closedCleanly()
	b.endSession(false)
}

// kill stops the broker as a crash: the logs lose what they had not
// flushed, and the session is dropped, not ended, so ZooKeeper keeps the
// registration (and /controller) until the session times out.
func (b *ZkBrokerServer) kill() {
	// A dead process's connections die with it: ZooKeeper's session
	// timeout runs from now, not from when the parts are stopped.
	if c := b.zk.Load(); c != nil {
		c.Cut()
	}
	b.replicas.kill()
	b.endSession(true)
}

func (b *ZkBrokerServer) endSession(crash bool) {
	b.once.Do(func() {
		b.cancel()
		c, ctl := b.zk.Load(), b.controller.Load()
		if c != nil && !c.Connected() {
			// ZooKeeper is away: nothing can be said to it, and a call
			// would wait for it.
			crash = true
		}
		if crash && c != nil {
			// First, so that a ZooKeeper call the controller or the
			// session loop is in fails instead of waiting for a
			// connection that will not come back.
			c.Abandon()
		}
		b.wg.Wait()
		if ctl != nil {
			ctl.Close(!crash)
		}
		if !crash && c != nil {
			c.Close()
		}
	})
}

func (b *ZkBrokerServer) close() {
	b.endSession(true)
	b.replicas.Close()
	b.pids.close()
	b.closeChannels()
}

func (b *ZkBrokerServer) closeChannels() {
	b.cancel()
	b.ch.close()
	b.pushes.close()
}
