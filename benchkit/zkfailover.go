package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/zookeeper"
	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/metadata/zkcontroller"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
)

// ZkFailoverSample is one kill of the ZooKeeper-era controller's broker.
type ZkFailoverSample struct {
	OldController int32 `json:"oldController"`
	NewController int32 `json:"newController"`
	NewEpoch      int32 `json:"newEpoch"`
	// KillToElected runs from the kill to another broker winning
	// /controller: ZooKeeper must first expire the dead broker's session.
	KillToElected time.Duration `json:"killToElectedNs"`
	// ElectedToManaged runs from the election to the new controller
	// having read ZooKeeper and queued its pushes.
	ElectedToManaged time.Duration `json:"electedToManagedNs"`
	// Read is the part of it spent reading ZooKeeper; Reads the znodes.
	Read  time.Duration `json:"readNs"`
	Reads int           `json:"reads"`
	// ElectedToCreate runs from the election to the new controller's
	// broker answering CreateTopics, the first change it manages.
	ElectedToCreate time.Duration `json:"electedToCreateTopicsNs"`
	// Pushed are the bytes of the requests the new controller sent the
	// brokers until the CreateTopics answer.
	Pushed int64 `json:"pushedBytes"`
}

// zkBench is a ZooKeeper-era cluster in this process for the failover
// benchmark: a real ZooKeeper and brokers 101..103 that elect Kafka
// 3.9's controller through it.
type zkBench struct {
	zk       *zookeeper.Server
	group    *server.Group
	brokers  []int32
	settings server.Settings
	states   *brokerStates

	mu     sync.Mutex
	events []zkEvent
	wake   chan struct{}
}

type zkEvent struct {
	node int32
	ev   zkcontroller.Event
	at   time.Time
}

func (b *zkBench) onEvent(id int32) func(zkcontroller.Event) {
	return func(ev zkcontroller.Event) {
		b.mu.Lock()
		b.events = append(b.events, zkEvent{id, ev, time.Now()})
		b.mu.Unlock()
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// await waits for the first event of kind at or above epoch.
func (b *zkBench) await(ctx context.Context, kind zkcontroller.EventKind, epoch int32) (zkEvent, error) {
	for {
		b.mu.Lock()
		for _, e := range b.events {
			if e.ev.Kind == kind && e.ev.Epoch >= epoch {
				b.mu.Unlock()
				return e, nil
			}
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return zkEvent{}, fmt.Errorf("waiting for a controller %s at epoch %d: %w", kind, epoch, ctx.Err())
		case <-b.wake:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newZkBench starts ZooKeeper, seeds it with partitions partitions as a
// cluster that ran them would have left them, then starts the brokers.
func newZkBench(ctx context.Context, t server.Settings, dir string, partitions int) (*zkBench, error) {
	rt, err := zookeeper.Find()
	if err != nil {
		return nil, err
	}
	b := &zkBench{settings: t, group: server.NewGroup(), brokers: []int32{101, 102, 103}, wake: make(chan struct{}, 1), states: newBrokerStates()}
	b.zk, err = zookeeper.Start(ctx, rt, zookeeper.Config{Dir: filepath.Join(dir, "zookeeper"), MaxSessionTimeout: max(zookeeper.DefaultMaxSessionTimeout, t.ZooKeeperSessionTimeout)})
	if err != nil {
		return nil, err
	}
	seed, err := seedZooKeeper(ctx, b.zk.Addr(), b.brokers, partitions)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("seeding ZooKeeper: %w", err)
	}
	defer seed.Close()
	secret, err := server.LoadSecret(dir)
	if err != nil {
		b.close()
		return nil, err
	}
	for _, id := range b.brokers {
		cfg, err := t.NodeConfig(id, nil, benchClusterID, dir)
		if err == nil {
			cfg.Raft.Secret = secret
			cfg.ZooKeeper = &server.ZooKeeperConfig{Addr: b.zk.Addr(), SessionTimeout: t.ZooKeeperSessionTimeout}
			cfg.OnZkControllerEvent = b.onEvent(id)
			cfg.OnLifecycleEvent = b.states.hook(id)
			var s *server.Server
			if s, err = b.group.Add(cfg); err == nil {
				err = b.group.Start(ctx, s)
			}
		}
		if err != nil {
			b.close()
			return nil, fmt.Errorf("broker %d: %w", id, err)
		}
	}
	// The seed holds /controller until every broker registered, so that
	// the first controller finds them all live, as in a cluster that ran
	// these partitions, and has nothing to move.
	if err := waitUntil(ctx, "every broker registered", func() bool {
		ids, _, err := seed.BrokerIDs()
		return err == nil && len(ids) == len(b.brokers)
	}); err != nil {
		b.close()
		return nil, err
	}
	if err := seed.Resign(); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *zkBench) close() {
	b.group.KillAll()
	if b.zk != nil {
		b.zk.Stop()
	}
}

// seedTopicPartitions is how many partitions each seeded topic has.
const seedTopicPartitions = 1000

// seedZooKeeper writes n partitions over brokers, three replicas each,
// their leaders and ISRs, as the admin tools and an earlier controller
// would have: the topic assignments, then each partition's state, in
// multi-ops of a few hundred creates. It holds /controller (as broker 0,
// which does not exist) until the caller resigns it or closes the
// session it returns.
func seedZooKeeper(ctx context.Context, addr string, brokers []int32, n int) (*kafkazk.Client, error) {
	c, err := kafkazk.Connect(ctx, addr, 10*time.Second, nil)
	if err != nil {
		return nil, err
	}
	if err := seedPartitions(ctx, c, brokers, n); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Elect(0, time.Now()); err != nil {
		c.Close()
		return nil, fmt.Errorf("hold /controller: %w", err)
	}
	return c, nil
}

func seedPartitions(ctx context.Context, c *kafkazk.Client, brokers []int32, n int) error {
	if err := c.EnsurePaths(); err != nil {
		return err
	}
	if _, err := c.ClusterID(benchClusterID); err != nil {
		return err
	}
	acl := zk.WorldACL(zk.PermAll)
	var ops []any
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		_, err := c.Conn().Multi(ops...)
		ops = ops[:0]
		return err
	}
	for t, left := 0, n; left > 0; t++ {
		size := min(left, seedTopicPartitions)
		left -= size
		a := kafkazk.Assignment{Topic: fmt.Sprintf("seed-%05d", t), Replicas: map[int32][]int32{}}
		a.ID = record.NewUuid(uint64(t)+1, uint64(n))
		for p := range int32(size) {
			first := (int(p) + t) % len(brokers)
			a.Replicas[p] = []int32{brokers[first], brokers[(first+1)%len(brokers)], brokers[(first+2)%len(brokers)]}
		}
		ops = append(ops,
			&zk.CreateRequest{Path: kafkazk.TopicPath(a.Topic), Data: kafkazk.EncodeAssignment(a), Acl: acl},
			&zk.CreateRequest{Path: kafkazk.PartitionsPath(a.Topic), Acl: acl})
		for p := range int32(size) {
			s := kafkazk.LeaderAndIsr{Leader: a.Replicas[p][0], ISR: a.Replicas[p]}
			ops = append(ops,
				&zk.CreateRequest{Path: kafkazk.PartitionPath(a.Topic, p), Acl: acl},
				&zk.CreateRequest{Path: kafkazk.PartitionStatePath(a.Topic, p), Data: kafkazk.EncodeLeaderAndIsr(s), Acl: acl})
			if len(ops) >= 500 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// runZkFailover kills the controller's broker rounds times at partitions
// partitions, then stops the broker that leads the most of the others.
func runZkFailover(ctx context.Context, t server.Settings, dir string, partitions, rounds int, progress io.Writer) ([]ZkFailoverSample, ControlledShutdownSample, error) {
	var sh ControlledShutdownSample
	d, err := subDir(dir, fmt.Sprintf("zk-failover-%d", partitions))
	if err != nil {
		return nil, sh, err
	}
	defer os.RemoveAll(d)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute+time.Duration(partitions)*time.Millisecond)
	b, err := newZkBench(sctx, t, d, partitions)
	cancel()
	if err != nil {
		return nil, sh, err
	}
	defer b.close()
	// A large cluster's first controller writes and pushes a lot before
	// the kill can start: the bound grows with the size.
	roundTimeout := 3*t.ZooKeeperSessionTimeout + 2*time.Minute + time.Duration(partitions)*5*time.Millisecond
	var out []ZkFailoverSample
	epoch := int32(1)
	for i := range rounds {
		rctx, cancel := context.WithTimeout(ctx, roundTimeout)
		s, err := b.killController(rctx, epoch, partitions)
		cancel()
		if err != nil {
			return out, sh, fmt.Errorf("round %d: %w", i+1, err)
		}
		epoch = s.NewEpoch
		out = append(out, s)
		fmt.Fprintf(progress, "failover zk %d partitions %d/%d: controller %d -> %d (epoch %d): elected %v after the kill, read %d znodes in %v, managing %v and CreateTopics answered %v after its election, %s pushed\n",
			partitions, i+1, rounds, s.OldController, s.NewController, s.NewEpoch, fmtDur(s.KillToElected), s.Reads, fmtDur(s.Read),
			fmtDur(s.ElectedToManaged), fmtDur(s.ElectedToCreate), fmtBytes(uint64(s.Pushed)))
	}
	rctx, cancel := context.WithTimeout(ctx, roundTimeout)
	defer cancel()
	sh, err = b.controlledShutdown(rctx, epoch, partitions)
	if err != nil {
		return out, sh, fmt.Errorf("controlled shutdown: %w", err)
	}
	fmt.Fprintf(progress, "controlled shutdown zk %d partitions: broker %d, leading %d and in %d ISRs, let go after %v\n",
		partitions, sh.Broker, sh.Led, sh.InISR, fmtDur(sh.Took))
	return out, sh, nil
}

// killController waits until the controller of epoch manages partitions
// partitions and its pushes are answered, kills its broker, and times the
// next controller until it answers CreateTopics; then it restarts the
// killed broker.
func (b *zkBench) killController(ctx context.Context, epoch int32, partitions int) (ZkFailoverSample, error) {
	var s ZkFailoverSample
	managing, err := b.await(ctx, zkcontroller.Managing, epoch)
	if err != nil {
		return s, err
	}
	old := b.group.Server(managing.node)
	if err := b.waitIdle(ctx, old, partitions); err != nil {
		return s, err
	}
	s.OldController = old.ID()
	tKill := time.Now()
	if err := old.Kill(); err != nil {
		return s, err
	}
	elected, err := b.await(ctx, zkcontroller.Elected, managing.ev.Epoch+1)
	if err != nil {
		return s, err
	}
	s.NewController, s.NewEpoch, s.KillToElected = elected.node, elected.ev.Epoch, elected.at.Sub(tKill)
	managed, err := b.await(ctx, zkcontroller.Managing, s.NewEpoch)
	if err != nil {
		return s, err
	}
	s.ElectedToManaged, s.Read, s.Reads = managed.at.Sub(elected.at), managed.ev.Failover.Read, managed.ev.Failover.Reads
	srv := b.group.Server(s.NewController)
	cl, err := wire.NewClient(wire.ClientConfig{From: 0, To: srv.ID(), Addr: srv.Addr(), ClientID: "kraftlab-bench-failover"})
	if err != nil {
		return s, err
	}
	defer cl.Close()
	for {
		err := zkCreateTopic(ctx, cl, fmt.Sprintf("after-failover-%d", s.NewEpoch))
		if err == nil {
			s.ElectedToCreate = time.Since(elected.at)
			break
		}
		if !errors.Is(err, errNotController) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	for _, c := range srv.ZkBrokerServer().Controller().Status().Channels {
		s.Pushed += c.Bytes
	}
	if err := b.group.Start(ctx, old); err != nil {
		return s, err
	}
	return s, nil
}

// waitIdle waits until ctl's controller manages partitions partitions
// and every push it sent was answered.
func (b *zkBench) waitIdle(ctx context.Context, ctl *server.Server, partitions int) error {
	c := ctl.ZkBrokerServer().Controller()
	return waitUntil(ctx, "the controller's pushes answered", func() bool {
		st := c.Status()
		if !st.Active || st.LastFailover.Partitions < partitions {
			return false
		}
		for _, ch := range st.Channels {
			if ch.Queued > 0 || ch.InFlight >= 0 {
				return false
			}
		}
		return len(st.Channels) == len(b.brokers)
	})
}

// controlledShutdown stops the broker, other than the controller of
// epoch, that leads the most partitions, once the controller is idle.
func (b *zkBench) controlledShutdown(ctx context.Context, epoch int32, partitions int) (ControlledShutdownSample, error) {
	managing, err := b.await(ctx, zkcontroller.Managing, epoch)
	if err != nil {
		return ControlledShutdownSample{}, err
	}
	ctl := b.group.Server(managing.node)
	if err := b.waitIdle(ctx, ctl, partitions); err != nil {
		return ControlledShutdownSample{}, err
	}
	s := busiestLeader(ctl.ZkBrokerServer().Image(), b.brokers, ctl.ID())
	return s, stopTimed(ctx, b.group.Server(s.Broker), b.states, &s)
}

// zkCreateTopic creates a one-partition topic through the controller's
// broker.
func zkCreateTopic(ctx context.Context, cl *wire.Client, name string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = createTopicsVersion
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Do(ctx, req)
	if err != nil {
		return err
	}
	for _, t := range resp.(*kmsg.CreateTopicsResponse).Topics {
		switch {
		case t.ErrorCode == kerr.NotController.Code:
			return errNotController
		case t.ErrorCode == kerr.InvalidReplicationFactor.Code:
			// The new controller's own broker has not yet been pushed
			// the live brokers: not managing yet.
			return errNotController
		case t.ErrorCode != 0:
			return fmt.Errorf("CreateTopics %s: %w", name, kerr.ErrorForCode(t.ErrorCode))
		}
	}
	return nil
}
