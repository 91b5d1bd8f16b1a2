package engine

import (
	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/metasim"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
	"github.com/kraftlab/kraftlab/server"
)

// View implements cluster.Engine: the simulated cluster between two
// events, read as the real engine reads its servers.
func (e *simEngine) View() view.View {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.w
	now := w.clock()
	v := view.View{ClusterID: simClusterID, Timestamp: now.UnixMilli(), TopicLoads: []view.TopicLoad{}}
	v.Clock = view.Clock{Paused: !e.pacing.Load(), Slow: int(e.slow.Load())}
	if v.Clock.Paused {
		v.Clock.PausedSinceMs = now.UnixMilli()
	}
	v.Sim = e.hist.view(e.cfg.Seed, w.steps)
	ids := append(e.cfg.ControllerIDs(), e.cfg.BrokerIDs()...)
	for _, id := range ids {
		v.Nodes = append(v.Nodes, w.nodeView(id))
	}
	v.Links = w.linkViews(ids)
	w.metadataViews(&v)
	return v
}

// simClusterID is the simulated cluster's id, metasim's.
const simClusterID = "kraftlab-metasim"

// nodeView is one node as its raft status and loader show it.
func (w *simWorld) nodeView(id int32) view.Node {
	kind := view.KindController
	if id >= cluster.FirstBrokerID {
		kind = view.KindBroker
	}
	nv := view.Node{ID: id, Kind: kind, State: view.StateRunning, Truncations: w.truncations[id], SnapshotsLoaded: w.snapshotsLoaded[id]}
	if !w.running(id) {
		nv.State = view.StateStopped
		if s, ok := w.down[id]; ok {
			nv.State = s
		}
	}
	st, _ := w.quorum().Status(id)
	fillRaft(&nv, st, kind == view.KindController)
	if nv.Live() {
		nv.Metadata = metadataView(w.meta().Loader(id))
		if c := w.meta().Controller(id); c != nil {
			cm := controllerMetricsView(c.Metrics())
			nv.ControllerMetrics = &cm
		}
	}
	return nv
}

// linkViews reports every directed link between nodes that has a fault
// or lost messages.
func (w *simWorld) linkViews(ids []int32) []view.Link {
	var out []view.Link
	for _, from := range ids {
		for _, to := range ids {
			if from == to {
				continue
			}
			f, dropped := w.quorum().Link(from, to)
			if f == (raftsim.LinkFault{}) && dropped == 0 {
				continue
			}
			out = append(out, view.Link{From: from, To: to, Down: f.Down, DelayMs: f.Delay.Milliseconds(), JitterMs: f.Jitter.Milliseconds(), Loss: f.Loss, Dropped: dropped})
		}
	}
	return out
}

// metadataViews fills the brokers' places in the metadata and the
// topics, as the real engine's do: the committed metadata is the newest
// image a running controller's loader holds.
func (w *simWorld) metadataViews(v *view.View) {
	committed := image.Empty
	var heartbeats []controller.BrokerHeartbeatState
	brokers := map[int32]*image.MetadataImage{}
	for _, nv := range v.Nodes {
		if !nv.Live() {
			continue
		}
		img := w.meta().Image(nv.ID)
		if img == nil {
			continue
		}
		if nv.Kind == view.KindBroker {
			brokers[nv.ID] = img
			continue
		}
		if img.Provenance().LastContainedOffset > committed.Provenance().LastContainedOffset {
			committed = img
		}
		if c := w.meta().Controller(nv.ID); c != nil {
			if _, ok := c.Active(); ok {
				heartbeats = c.Brokers()
			}
		}
	}
	hwm := int64(-1)
	for _, nv := range v.Nodes {
		if nv.Live() {
			hwm = max(hwm, nv.HighWatermark)
		}
	}
	for i := range v.Nodes {
		nv := &v.Nodes[i]
		if nv.Kind == view.KindBroker {
			nv.Broker = w.brokerView(nv, hwm, committed, heartbeats)
		}
	}
	v.Topics = topicViews(committed, brokers)
	dataPlaneViews(v, w.replicaStats())
}

// replicaStats is what each running broker's replicas and fetchers
// hold, as the server's ReplicaManager reports it.
func (w *simWorld) replicaStats() map[int32]server.ReplicaManagerStats {
	out := map[int32]server.ReplicaManagerStats{}
	for _, id := range w.meta().BrokerIDs() {
		rs := w.s.Data().Replicas(id)
		if rs == nil {
			continue
		}
		st := server.ReplicaManagerStats{Fetchers: w.s.Data().Fetchers(id)}
		for _, r := range rs {
			ps := r.P.State()
			st.Partitions = append(st.Partitions, server.ReplicaStats{
				Topic: r.Topic, Partition: r.Partition, Role: ps.Role, LeaderID: ps.LeaderID,
				LeaderEpoch: ps.LeaderEpoch, PartitionEpoch: ps.PartitionEpoch, Replicas: ps.Replicas, ISR: ps.ISR,
				HighWatermark: ps.HighWatermark, LogStartOffset: ps.LogStartOffset, LogEndOffset: ps.LogEndOffset,
				Followers: ps.Followers,
			})
		}
		out[id] = st
	}
	return out
}

// brokerView is a broker's place in the metadata.
func (w *simWorld) brokerView(nv *view.Node, hwm int64, committed *image.MetadataImage, heartbeats []controller.BrokerHeartbeatState) *view.Broker {
	b := committedBroker(nv.ID, committed, heartbeats)
	if !nv.Live() {
		return b
	}
	if l, ok := w.meta().Lifecycle(nv.ID); ok {
		b.State = lifecycleOf(l)
		if l.Epoch >= 0 {
			b.BrokerEpoch = l.Epoch
		}
	}
	b.MetadataLag = metadataLag(nv, hwm)
	return b
}

// lifecycleOf names where a simulated broker's lifecycle stands as
// Kafka's BrokerLifecycleManager does.
func lifecycleOf(l metasim.BrokerLifecycle) view.BrokerState {
	switch {
	case l.ShuttingDown:
		return view.BrokerPendingControlledShutdown
	case l.Epoch < 0:
		return view.BrokerStarting
	case l.Fenced:
		return view.BrokerRecovery
	}
	return view.BrokerRunning
}
