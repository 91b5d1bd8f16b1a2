package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/dustin/go-humanize/english"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/zkcontroller"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// zkMode reports whether the playground runs the ZooKeeper era.
func (e *engine) zkMode() bool { return e.cfg.Mode == cluster.ModeZK }

// startZooKeeper starts the playground's ZooKeeper, a child process, in
// its own folder under the data folder.
func (e *engine) startZooKeeper(ctx context.Context) error {
	rt, err := zookeeper.Find()
	if err != nil {
		return err
	}
	maxSession := max(zookeeper.DefaultMaxSessionTimeout, e.cfg.Settings.ZooKeeperSessionTimeout)
	zs, err := zookeeper.Start(ctx, rt, zookeeper.Config{Dir: filepath.Join(e.dir, "zookeeper"), MaxSessionTimeout: maxSession, Logger: e.cfg.Logger})
	if err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	e.zk = zs
	e.zkLinks = newZkLinks()
	e.zkStop = make(chan struct{})
	e.zkWG.Add(1)
	go e.monitorZooKeeper()
	return nil
}

// zkSample is what ZooKeeper last said of itself, and the request rate
// since the sample before.
type zkSample struct {
	m    zookeeper.Monitor
	at   time.Time
	rate float64
	ok   bool
}

// monitorZooKeeper asks ZooKeeper mntr once a second, off the view's
// path: View never waits on ZooKeeper.
func (e *engine) monitorZooKeeper() {
	defer e.zkWG.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last zkSample
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		m, err := e.zk.Monitor(ctx)
		cancel()
		now := time.Now()
		s := zkSample{m: m, at: now, ok: err == nil}
		if s.ok && last.ok && m.PacketsReceived >= last.m.PacketsReceived {
			s.rate = float64(m.PacketsReceived-last.m.PacketsReceived) / now.Sub(last.at).Seconds()
		}
		last = s
		e.zkSample.Store(&s)
		select {
		case <-e.zkStop:
			return
		case <-tick.C:
		}
	}
}

// zkNodeConfig makes cfg a broker of the ZooKeeper era.
func (e *engine) zkNodeConfig(id int32, cfg *server.Config) {
	cfg.ZooKeeper = &server.ZooKeeperConfig{Addr: e.zk.Addr(), SessionTimeout: e.cfg.Settings.ZooKeeperSessionTimeout, Dial: e.zkLinks.dial(id)}
	cfg.OnZkControllerEvent = e.publishZkController(id)
}

// publishZkController narrates a broker's controller.
func (e *engine) publishZkController(id int32) func(zkcontroller.Event) {
	return func(ev zkcontroller.Event) {
		switch ev.Kind {
		case zkcontroller.Elected:
			e.events.Publish(cluster.Event{Kind: cluster.EventZkControllerElected, Node: id, Epoch: ev.Epoch,
				Message: fmt.Sprintf("won /controller in ZooKeeper (controller epoch %d); it knows nothing yet and reads every broker, topic and partition state before it can manage anything", ev.Epoch)})
		case zkcontroller.Managing:
			f := ev.Failover
			e.events.Publish(cluster.Event{Kind: cluster.EventZkControllerManaging, Node: id, Epoch: ev.Epoch,
				Message: fmt.Sprintf("manages the cluster %s after its election: read %s (%s, %s, %s) in %s, then queued UpdateMetadata and LeaderAndIsr to every broker",
					roundDuration(time.Duration(f.Total)), english.Plural(f.Reads, "znode", ""), english.Plural(f.Brokers, "broker", ""),
					english.Plural(f.Topics, "topic", ""), english.Plural(f.Partitions, "partition", ""), roundDuration(f.Read))})
		case zkcontroller.Resigned:
			e.events.Publish(cluster.Event{Kind: cluster.EventControllerDeactivated, Node: id, Epoch: ev.Epoch,
				Message: "is no longer the controller: /controller is another's, or its ZooKeeper session ended"})
		case zkcontroller.LeaderChanged:
			e.events.Publish(cluster.Event{Kind: cluster.EventPartitionChange, Node: id, Epoch: ev.Epoch,
				Message: fmt.Sprintf("controller %d wrote %s-%d's state: leader %d at leader epoch %d, then pushed it with LeaderAndIsr", id, ev.Partition.Topic, ev.Partition.Partition, ev.Leader, ev.LeaderEpoch)})
		}
	}
}

// zkNodeView is a ZooKeeper-era broker's view.Node: it has no raft
// client, so no quorum fields.
func (n *engineNode) zkNodeView(t wire.NodeTraffic) view.Node {
	nv := view.Node{
		ID: n.id, Kind: n.kind, Listener: n.srv.Addr(), State: n.down(),
		LeaderID: view.NoLeader, VotedID: view.NoLeader, LogEndOffset: -1, HighWatermark: -1, LogStartOffset: -1,
		FetchDeadlineTimestamp: -1,
		Strangers:              strangers(t),
		RPC:                    rpcStats(t.RequestsReceived, t.ResponsesSent),
		DiskDelayMs:            n.disk.Delay().Milliseconds(),
	}
	if nv.Live() {
		nv.Role = view.RoleBroker
		if b := n.srv.ZkBrokerServer(); b != nil && b.Controller() != nil && b.Controller().Status().Active {
			nv.Role = view.RoleZkController
		}
	}
	return nv
}

// down is a stopped node's state as its last action left it.
func (n *engineNode) down() view.State {
	if n.srv.Running() {
		return view.StateRunning
	}
	if n.killed.Load() {
		return view.StateKilled
	}
	return view.StateStopped
}

// zkCommitted is the ZooKeeper era's "committed metadata": the image the
// active controller's broker holds, pushed to it by itself.
func (e *engine) zkCommitted() *image.MetadataImage {
	img := image.Empty
	for _, n := range e.all() {
		b := n.srv.ZkBrokerServer()
		if b == nil || !n.srv.Running() || b.Controller() == nil || !b.Controller().Status().Active {
			continue
		}
		img = b.Image()
	}
	return img
}

// zkBrokerView is a ZooKeeper-era broker's place in the metadata: its
// registration's epoch, and whether the controller's metadata lists it
// as live.
func zkBrokerView(n *engineNode, nv *view.Node, committed *image.MetadataImage) *view.Broker {
	b := &view.Broker{BrokerEpoch: -1, MetadataLag: -1, LastHeartbeatTimestamp: -1}
	if reg := committed.Cluster().Broker(n.id); reg != nil {
		b.Registered = true
	}
	if !nv.Live() {
		return b
	}
	if zb := n.srv.ZkBrokerServer(); zb != nil {
		b.BrokerEpoch = zb.BrokerEpoch()
		if b.BrokerEpoch >= 0 {
			b.State = view.BrokerRunning
		}
	}
	return b
}

// zooKeeperView is the ZooKeeper and the controller as the brokers see
// them.
func (e *engine) zooKeeperView() *view.ZooKeeper {
	zv := &view.ZooKeeper{Addr: e.zk.Addr(), State: view.StateStopped, ControllerID: view.NoLeader, Channels: []view.ZkChannel{},
		Sessions: -1, Znodes: -1, Ephemerals: -1, Watches: -1, CutOff: e.zkLinks.cutOff()}
	if s := e.zkSample.Load(); s != nil && s.ok && e.zk.Running() {
		zv.Sessions, zv.Znodes, zv.Ephemerals, zv.Watches = s.m.Connections, s.m.Znodes, s.m.Ephemerals, s.m.Watches
		zv.RequestsPerSec = s.rate
	}
	if e.zk.Running() {
		zv.State = view.StateRunning
	} else if e.zkKilled.Load() {
		zv.State = view.StateKilled
	}
	for _, n := range e.all() {
		b := n.srv.ZkBrokerServer()
		if b == nil || !n.srv.Running() {
			continue
		}
		if epoch := b.ControllerEpoch(); epoch >= zv.ControllerEpoch && b.ControllerID() >= 0 {
			zv.ControllerID, zv.ControllerEpoch = b.ControllerID(), epoch
		}
		ctl := b.Controller()
		if ctl == nil {
			continue
		}
		st := ctl.Status()
		if !st.Active {
			continue
		}
		if f := st.LastFailover; f.Epoch > 0 {
			zv.LastFailover = &view.ZkFailover{Epoch: f.Epoch, Brokers: f.Brokers, Topics: f.Topics, Partitions: f.Partitions, Reads: f.Reads,
				ReadMs: ms(f.Read), TotalMs: ms(f.Total)}
		}
		for _, c := range st.Channels {
			ch := view.ZkChannel{Broker: c.Broker, Queued: c.Queued, Bytes: c.Bytes, Retries: c.Retries,
				LeaderAndIsr: c.Sent[kmsg.LeaderAndISR.Int16()], UpdateMetadata: c.Sent[kmsg.UpdateMetadata.Int16()], StopReplica: c.Sent[kmsg.StopReplica.Int16()]}
			if c.InFlight >= 0 {
				ch.InFlight = kmsg.NameForKey(c.InFlight)
			}
			zv.Channels = append(zv.Channels, ch)
		}
	}
	slices.SortFunc(zv.Channels, func(a, b view.ZkChannel) int { return int(a.Broker - b.Broker) })
	return zv
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ZooKeeperAction implements cluster.ZooKeeperEngine.
func (e *engine) ZooKeeperAction(ctx context.Context, kind cluster.ActionKind) error {
	if e.zk == nil {
		return cluster.Errorf(cluster.ErrBadAction, "no ZooKeeper in this playground: up --mode zk runs one")
	}
	switch kind {
	case cluster.ActKill:
		if err := e.zk.Kill(); err != nil {
			return err
		}
		e.zkKilled.Store(true)
	case cluster.ActStop:
		if err := e.zk.Stop(); err != nil {
			return err
		}
		e.zkKilled.Store(false)
	case cluster.ActStart:
		if err := e.zk.Start(ctx); err != nil {
			return err
		}
		e.zkKilled.Store(false)
	default:
		return cluster.Errorf(cluster.ErrBadAction, "%s does not act on ZooKeeper", kind)
	}
	return nil
}

// SetZooKeeperLink implements cluster.ZooKeeperEngine.
func (e *engine) SetZooKeeperLink(id int32, down bool) error {
	if e.zk == nil {
		return cluster.Errorf(cluster.ErrBadAction, "no ZooKeeper in this playground: up --mode zk runs one")
	}
	if n, err := e.node(id); err != nil {
		return err
	} else if n.kind != view.KindBroker {
		return cluster.Errorf(cluster.ErrBadAction, "node %d is no broker: only brokers talk to ZooKeeper", id)
	}
	e.zkLinks.set(id, down)
	return nil
}
