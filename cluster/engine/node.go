package engine

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage"
)

// engineNode is one node of the engine, a controller or a broker: its
// server, and the server's raft client for status and quorum actions.
type engineNode struct {
	id   int32
	kind view.Kind
	srv  *server.Server
	q    *quorum.Node
	// changes keeps the last metadata change the node applied.
	changes *changeTracker
	// disk is the node's disk, slowed by SetDiskDelay; it outlives the
	// server's incarnations.
	disk *storage.SlowDisk
	// startLogEnd is the log end offset the node's last start found.
	startLogEnd atomic.Int64
	// killed says the node's last stop was a kill (for a node without a
	// raft client, whose status would say).
	killed atomic.Bool
}

// View implements Engine. It reads every node's published status and the
// link counters; it never waits for a node's loop.
func (e *engine) View() view.View {
	now := e.clock.Now()
	// The load first: the records it counts as committed are then below
	// the high watermarks the nodes publish next (at most publishInterval
	// late).
	load := e.load.snapshot()
	traffic := e.counters.Snapshot()
	v := view.View{ClusterID: e.clusterID, Timestamp: now.UnixMilli(), Load: load, TopicLoads: e.topicLoadViews()}
	v.Clock = clockView(e.clock.State())
	if held := e.HeldMessages(); len(held) > 0 {
		v.HeldMessages = len(held)
		v.Messages = held[:min(len(held), view.MaxViewMessages)]
	}
	v.Trace = e.Trace(view.MaxViewTrace).Messages
	for i := range v.Trace {
		v.Trace[i].Fields = nil
	}
	for _, n := range e.all() {
		if n.q == nil {
			v.Nodes = append(v.Nodes, n.zkNodeView(traffic.Nodes[n.id]))
			continue
		}
		nv := n.view(n.q.Status(), traffic.Nodes[n.id])
		nv.RaftMetrics = raftMetrics(n.q, now)
		v.Nodes = append(v.Nodes, nv)
	}
	if e.zk != nil {
		v.ZooKeeper = e.zooKeeperView()
	}
	v.Links = e.linkViews(traffic)
	e.metadataViews(&v)
	return v
}

// view maps a node's quorum status onto the playground's view.Node.
func (n *engineNode) view(st quorum.Status, t wire.NodeTraffic) view.Node {
	nv := view.Node{
		ID:              n.id,
		Kind:            n.kind,
		Listener:        n.srv.Addr(),
		State:           nodeState(st.State),
		Error:           st.Err,
		SnapshotError:   st.SnapshotError,
		Truncations:     st.Truncations,
		SnapshotsLoaded: st.SnapshotsLoaded,
		Refusals:        refusals(st),
		Strangers:       strangers(t),
		RPC:             rpcStats(t.RequestsReceived, t.ResponsesSent),
		DiskDelayMs:     n.disk.Delay().Milliseconds(),
	}
	fillRaft(&nv, st.Status, n.voter(st))
	if r, ok := n.srv.Restarting(); ok {
		nv.Restart = &view.Restart{Attempts: r.Attempts, NextTimestamp: r.Next.UnixMilli(), LastError: r.LastError}
	}
	if nv.Live() {
		nv.Metadata = metadataView(n.srv.Loader())
	}
	return nv
}

// fillRaft fills what a node's raft status says of it: where it stands
// in the quorum, its log, and while it leads its replica table. nv's
// State is set already; a node that does not run gets no Role.
func fillRaft(nv *view.Node, st raft.Status, voter bool) {
	nv.Epoch, nv.LeaderID, nv.VotedID = st.Epoch, st.LeaderID, st.VotedID
	nv.LogEndOffset, nv.HighWatermark, nv.LogStartOffset = st.LogEndOffset, st.HighWatermark, st.LogStartOffset
	nv.FetchDeadlineTimestamp = unixMilli(st.FetchDeadline)
	nv.KRaftVersion = int16(st.KRaftVersion)
	if st.KRaftVersion >= raft.KRaftVersion1 {
		nv.Voters = slices.Clone(st.Voters)
	}
	if nv.Live() {
		nv.Role = roleName(st.Role, voter)
	}
	if st.HasSnapshot {
		id := st.LatestSnapshot
		nv.LatestSnapshot = &id
	}
	if nv.Role == view.RoleLeader {
		nv.Replicas = make([]view.Replica, 0, len(st.Replicas))
		for _, r := range st.Replicas {
			nv.Replicas = append(nv.Replicas, view.Replica{
				NodeID:                r.NodeID,
				DirectoryID:           directoryID(r.DirectoryID),
				LogEndOffset:          r.LogEndOffset,
				LastFetchTimestamp:    unixMilli(r.LastFetch),
				LastCaughtUpTimestamp: unixMilli(r.LastCaughtUp),
				ParkedFetch:           r.FetchParked,
				Push:                  r.Push,
				InFlight:              r.InFlight,
			})
		}
	}
}

// directoryID prints a directory id as Kafka does, "" for the zero one.
func directoryID(d raft.DirectoryID) string {
	if d.IsZero() {
		return ""
	}
	return record.Uuid(d).String()
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

// nodeState maps what happened to a node onto the playground's states.
func nodeState(s quorum.State) view.State {
	switch s {
	case quorum.StateRunning, quorum.StateStopping:
		return view.StateRunning
	case quorum.StateStopped, quorum.StateNew:
		return view.StateStopped
	case quorum.StateFailed:
		return view.StateFailed
	}
	return view.StateKilled
}

// voter reports whether the node is in the voter set it knows, by id
// and, in a dynamic quorum, directory id: a controller whose wiped folder
// the voter set does not name is no voter.
func (n *engineNode) voter(st quorum.Status) bool {
	return n.kind == view.KindController && st.Voter
}

// roleName names a raft role as the playground does; a node following
// the leader from outside the voter set (a broker, a controller not yet
// added to a dynamic quorum or removed from it, or one whose wiped folder
// the voter set does not name) is an Observer, as Kafka's current-state
// says.
func roleName(r raft.Role, voter bool) view.Role {
	switch r {
	case raft.Leader:
		return view.RoleLeader
	case raft.Follower:
		if !voter {
			return view.RoleObserver
		}
		return view.RoleFollower
	case raft.Candidate:
		return view.RoleCandidate
	case raft.Prospective:
		return view.RoleProspective
	case raft.Resigned:
		return view.RoleResigned
	}
	return view.RoleUnattached
}

// rpcStats counts requests by API name: reqs are the requests, resps the
// responses to them.
func rpcStats(reqs, resps wire.Flow) map[string]view.RPCStats {
	if len(reqs) == 0 {
		return nil
	}
	out := make(map[string]view.RPCStats, len(reqs))
	for key, c := range reqs {
		out[pushrpc.NameForKey(key)] = view.RPCStats{
			Requests:      int64(c.Messages),
			RequestBytes:  int64(c.Bytes),
			Responses:     int64(resps[key].Messages),
			ResponseBytes: int64(resps[key].Bytes),
		}
	}
	return out
}

// linkViews reports every directed link that has a fault or carried
// traffic.
func (e *engine) linkViews(t wire.Traffic) []view.Link {
	faults := e.links.Faults()
	seen := make(map[wire.LinkID]bool)
	var ids []wire.LinkID
	for id := range t.Links {
		ids = append(ids, id)
		seen[id] = true
	}
	for id := range faults {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b wire.LinkID) int {
		if a.From != b.From {
			return int(a.From - b.From)
		}
		return int(a.To - b.To)
	})
	out := make([]view.Link, 0, len(ids))
	for _, id := range ids {
		f := faults[id]
		lt := t.Links[id]
		back := t.Links[wire.LinkID{From: id.To, To: id.From}]
		dropped := lt.DroppedRequests.Total().Messages + lt.DroppedResponses.Total().Messages
		out = append(out, view.Link{
			From:     id.From,
			To:       id.To,
			Down:     f.Down,
			DelayMs:  f.Delay.Milliseconds(),
			JitterMs: f.Jitter.Milliseconds(),
			Loss:     f.Loss,
			Dropped:  int64(dropped),
			RPC:      rpcStats(lt.Requests, back.Responses),
		})
	}
	return out
}

// refusals maps a node's count of unsafe news onto the view's.
func refusals(st quorum.Status) *view.Refusals {
	if st.Unsafe == 0 || st.LastUnsafe == nil {
		return nil
	}
	return &view.Refusals{Count: st.Unsafe, Last: st.LastUnsafe.Refused, KafkaStops: st.LastUnsafe.KafkaStops}
}

// strangers maps a node's refusals of non-members onto the view's.
func strangers(t wire.NodeTraffic) *view.Strangers {
	if t.AuthFailures == 0 && len(t.Unauthorized) == 0 {
		return nil
	}
	s := &view.Strangers{AuthFailures: int64(t.AuthFailures)}
	for key, c := range t.Unauthorized {
		if s.Unauthorized == nil {
			s.Unauthorized = make(map[string]int64)
		}
		s.Unauthorized[pushrpc.NameForKey(key)] = int64(c.Messages)
	}
	return s
}

// metadataView is the loader's part of a running node's view.
func metadataView(l *loader.Loader) *view.Metadata {
	if l == nil {
		return nil
	}
	m := l.Metrics()
	md := &view.Metadata{
		LastAppliedRecordOffset:    m.LastAppliedRecordOffset,
		LastAppliedRecordTimestamp: m.LastAppliedRecordTimestamp,
		LastAppliedRecordLagMs:     m.LastAppliedRecordLagMs,
		MetadataLoadErrorCount:     m.MetadataLoadErrorCount,
		MetadataApplyErrorCount:    m.MetadataApplyErrorCount,
		HandleLoadSnapshotCount:    m.HandleLoadSnapshotCount,
		CurrentMetadataVersion:     m.CurrentMetadataVersion,
	}
	if err := l.Err(); err != nil {
		md.LoadError = err.Error()
	}
	return md
}
