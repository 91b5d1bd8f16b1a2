package engine

import (
	"net"
	"slices"
	"strconv"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/server"
)

// metadataViews fills what the views say of the cluster's metadata: each
// broker's Broker (its lifecycle manager's state, the committed metadata's
// word on its fencing, the active controller's last heartbeat from it, its
// lag behind the committed log) and the topics of the committed metadata.
// The committed metadata is the newest image any running controller's
// loader holds: every loader applies only committed records, so the newest
// is the furthest along the one committed log.
func (e *engine) metadataViews(v *view.View) {
	if e.zkMode() {
		e.zkMetadataViews(v)
		return
	}
	committed := image.Empty
	var active []controller.BrokerHeartbeatState
	for _, n := range e.all() {
		if n.kind != view.KindController || !n.srv.Running() {
			continue
		}
		if l := n.srv.Loader(); l != nil {
			if img := l.Image(); img.Provenance().LastContainedOffset > committed.Provenance().LastContainedOffset {
				committed = img
			}
		}
		if c := n.srv.Controller(); c != nil {
			if _, ok := c.Active(); ok {
				active = c.Brokers()
			}
		}
	}
	// The highest high watermark any running node knows: a high watermark
	// only moves once a majority has the records, so none is past the
	// committed log's end.
	hwm := int64(-1)
	for i := range v.Nodes {
		if v.Nodes[i].Live() {
			hwm = max(hwm, v.Nodes[i].HighWatermark)
		}
	}
	for i := range v.Nodes {
		nv := &v.Nodes[i]
		n := e.lookup(nv.ID)
		if nv.Metadata != nil {
			nv.Metadata.LastChange = n.changes.last.Load()
			if c := n.srv.Controller(); c != nil {
				cm := controllerMetricsView(c.Metrics())
				nv.ControllerMetrics = &cm
			}
		}
		if n.kind != view.KindBroker {
			continue
		}
		nv.Broker = brokerView(n, nv, hwm, committed, active)
	}
	v.ExternalBrokers = externalBrokers(committed, e.members.Load().byID, active)
	v.Topics = topicViews(committed, e.brokerImages())
	dataPlaneViews(v, e.brokerStats())
	groupViews(v, e.brokerGroups())
}

// zkMetadataViews is metadataViews in the ZooKeeper era: the committed
// metadata is what the active controller pushed to its own broker.
func (e *engine) zkMetadataViews(v *view.View) {
	committed := e.zkCommitted()
	for i := range v.Nodes {
		nv := &v.Nodes[i]
		nv.Broker = zkBrokerView(e.lookup(nv.ID), nv, committed)
	}
	v.Topics = topicViews(committed, e.brokerImages())
	dataPlaneViews(v, e.brokerStats())
}

// brokerView is broker n's place in the metadata.
func brokerView(n *engineNode, nv *view.Node, hwm int64, committed *image.MetadataImage, heartbeats []controller.BrokerHeartbeatState) *view.Broker {
	b := committedBroker(n.id, committed, heartbeats)
	if !nv.Live() {
		return b
	}
	if lm := n.srv.Lifecycle(); lm != nil {
		b.State = lifecycleState(lm.State())
		if epoch := lm.BrokerEpoch(); epoch >= 0 {
			b.BrokerEpoch = epoch
		}
	}
	b.MetadataLag = metadataLag(nv, hwm)
	return b
}

// committedBroker is what the committed metadata and the active
// controller's heartbeats say of broker id.
func committedBroker(id int32, committed *image.MetadataImage, heartbeats []controller.BrokerHeartbeatState) *view.Broker {
	b := &view.Broker{BrokerEpoch: -1, MetadataLag: -1, LastHeartbeatTimestamp: -1}
	if reg := committed.Cluster().Broker(id); reg != nil {
		b.Registered, b.Fenced, b.InControlledShutdown, b.BrokerEpoch = true, reg.Fenced, reg.InControlledShutdown, reg.Epoch
	}
	for _, h := range heartbeats {
		if h.ID == id && !h.LastHeartbeat.IsZero() {
			b.LastHeartbeatTimestamp = h.LastHeartbeat.UnixMilli()
		}
	}
	return b
}

// metadataLag is how far a running broker's loader is behind the
// highest high watermark, -1 when unknown.
func metadataLag(nv *view.Node, hwm int64) int64 {
	if nv.Metadata == nil || hwm < 0 {
		return -1
	}
	// The high watermark is the offset after the last committed one.
	return max(0, hwm-1-nv.Metadata.LastAppliedRecordOffset)
}

// externalBrokers are the brokers img registers that are not playground
// nodes.
func externalBrokers(img *image.MetadataImage, nodes map[int32]*engineNode, heartbeats []controller.BrokerHeartbeatState) []view.ExternalBroker {
	var out []view.ExternalBroker
	for _, id := range img.Cluster().BrokerIDs() {
		if _, ok := nodes[id]; ok {
			continue
		}
		reg := img.Cluster().Broker(id)
		eb := view.ExternalBroker{ID: id, Broker: view.Broker{
			BrokerEpoch: reg.Epoch, Registered: true, Fenced: reg.Fenced, InControlledShutdown: reg.InControlledShutdown,
			LastHeartbeatTimestamp: -1, MetadataLag: -1, Fetchers: []view.FetcherThread{},
		}}
		if len(reg.Listeners) > 0 {
			eb.Listener = net.JoinHostPort(reg.Listeners[0].Host, strconv.Itoa(int(reg.Listeners[0].Port)))
		}
		for _, h := range heartbeats {
			if h.ID == id && !h.LastHeartbeat.IsZero() {
				eb.LastHeartbeatTimestamp = h.LastHeartbeat.UnixMilli()
			}
		}
		out = append(out, eb)
	}
	return out
}

// lifecycleState names a lifecycle state as the view does; a manager that
// has stopped reports nothing.
func lifecycleState(s server.BrokerState) view.BrokerState {
	switch s {
	case server.BrokerStarting:
		return view.BrokerStarting
	case server.BrokerRecovery:
		return view.BrokerRecovery
	case server.BrokerRunning:
		return view.BrokerRunning
	case server.BrokerPendingControlledShutdown:
		return view.BrokerPendingControlledShutdown
	case server.BrokerShuttingDown:
		return view.BrokerShuttingDown
	}
	return ""
}

// brokerImages are the running brokers' current images, by broker.
func (e *engine) brokerImages() map[int32]*image.MetadataImage {
	out := make(map[int32]*image.MetadataImage)
	for _, n := range e.all() {
		if n.kind == view.KindBroker && n.srv.Running() {
			if b := n.srv.ZkBrokerServer(); b != nil {
				out[n.id] = b.Image()
			} else if l := n.srv.Loader(); l != nil {
				out[n.id] = l.Image()
			}
		}
	}
	return out
}

// nonNilIDs copies ids, empty rather than nil so that JSON says [].
func nonNilIDs(ids []int32) []int32 {
	return append([]int32{}, ids...)
}

// topicViews lists img's topics, and for each the running brokers whose
// own image has it (the same topic, by id).
func topicViews(img *image.MetadataImage, brokers map[int32]*image.MetadataImage) []view.Topic {
	var out []view.Topic
	for id, t := range img.Topics().Topics() {
		tv := view.Topic{Name: t.Name(), ID: t.ID().String(), OnBrokers: []int32{}}
		for _, p := range t.PartitionIDs() {
			reg := t.Partition(p)
			tv.Partitions = append(tv.Partitions, view.Partition{
				Partition: p, Leader: reg.Leader, LeaderEpoch: reg.LeaderEpoch, PartitionEpoch: reg.PartitionEpoch,
				Replicas: slices.Clone(reg.Replicas), Isr: slices.Clone(reg.Isr),
				Elr: nonNilIDs(reg.Elr), LastKnownElr: nonNilIDs(reg.LastKnownElr),
				AddingReplicas: slices.Clone(reg.AddingReplicas), RemovingReplicas: slices.Clone(reg.RemovingReplicas),
			})
		}
		for b, bimg := range brokers {
			if bimg.Topics().Topic(id) != nil {
				tv.OnBrokers = append(tv.OnBrokers, b)
			}
		}
		slices.Sort(tv.OnBrokers)
		out = append(out, tv)
	}
	return out
}
