package attach

import (
	"context"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// probe asks each node with a known address that was not asked
// DescribeQuorum itself for its API versions, the cheapest request: one
// that does not answer is unreachable. Brokers are asked at the address
// DescribeCluster gave, since Metadata leaves fenced ones out.
func (p *poller) probe(ctx context.Context, r *reading) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for id, addr := range r.addrs {
		if _, asked := r.direct[id]; asked {
			continue
		}
		wg.Go(func() {
			_, err := p.ask(ctx, addr, kmsg.NewPtrApiVersionsRequest())
			mu.Lock()
			defer mu.Unlock()
			r.answered[id] = err == nil
			if err != nil {
				r.fail("node %d (%s) did not answer: %v", id, addr, err)
			}
		})
	}
	wg.Wait()
}

// state is what kraftlab knows of node id's process: it answered, it did
// not, or nothing asked it.
func (r *reading) state(id int32) view.State {
	ok, asked := r.direct[id]
	if !asked {
		ok, asked = r.answered[id]
	}
	switch {
	case !asked:
		return view.StateUnknown
	case ok:
		return view.StateRunning
	}
	return view.StateUnreachable
}

// buildNodes turns what was read into the view's nodes, one per id: the
// voters (a combined node, broker and controller, is a voter with its
// broker's place), then the brokers, with the quorum leader's table of
// every replica.
func (r *reading) buildNodes() {
	q := r.quorum
	leader, epoch, hwm := int32(view.NoLeader), int32(view.NoLeader), int64(-1)
	rows := map[int32]kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	var voters, observers []int32
	if q != nil {
		leader, epoch, hwm = q.LeaderID, q.LeaderEpoch, q.HighWatermark
		for _, s := range q.CurrentVoters {
			rows[s.ReplicaID], voters = s, append(voters, s.ReplicaID)
		}
		for _, s := range q.Observers {
			rows[s.ReplicaID], observers = s, append(observers, s.ReplicaID)
		}
	} else {
		// The quorum unread: the controllers DescribeCluster named.
		voters = slices.Clone(r.ctrls)
	}
	brokers := map[int32]*view.Broker{}
	for _, b := range r.brokers {
		brokers[b.NodeID] = &view.Broker{BrokerEpoch: -1, Registered: true, Fenced: b.IsFenced, LastHeartbeatTimestamp: -1, MetadataLag: -1, Fetchers: []view.FetcherThread{}}
		if row, ok := rows[b.NodeID]; ok && hwm >= 0 && row.LogEndOffset >= 0 {
			// What the leader saw it fetch, not what it applied.
			brokers[b.NodeID].MetadataLag = max(hwm-row.LogEndOffset, 0)
		}
	}
	for _, id := range voters {
		n := newNode(id, view.KindController, r.addrs[id], r.state(id))
		n.Broker = brokers[id]
		switch {
		case id == leader:
			// It answered DescribeQuorum, itself or through a broker.
			n.State, n.Role, n.Epoch, n.LeaderID, n.HighWatermark = view.StateRunning, view.RoleLeader, epoch, leader, hwm
			if row, ok := rows[id]; ok {
				n.LogEndOffset = row.LogEndOffset
			}
			for _, rid := range append(slices.Clone(voters), observers...) {
				if row, ok := rows[rid]; ok {
					n.Replicas = append(n.Replicas, view.Replica{NodeID: rid, LogEndOffset: row.LogEndOffset,
						LastFetchTimestamp: row.LastFetchTimestamp, LastCaughtUpTimestamp: row.LastCaughtUpTimestamp})
				}
			}
		case n.State != view.StateUnreachable && q != nil:
			// A voter that does not lead: only its leader's table
			// speaks of it; its own epoch is not on the wire.
			n.Role = view.RoleFollower
		}
		r.v.Nodes = append(r.v.Nodes, n)
	}
	for _, b := range r.brokers {
		if slices.Contains(voters, b.NodeID) {
			continue
		}
		n := newNode(b.NodeID, view.KindBroker, r.addrs[b.NodeID], r.state(b.NodeID))
		n.Broker = brokers[b.NodeID]
		if _, ok := rows[b.NodeID]; ok && n.State != view.StateUnreachable {
			n.Role = view.RoleObserver
		}
		r.v.Nodes = append(r.v.Nodes, n)
	}
}

// newNode is a node of which nothing is known but what is given: every
// offset and epoch unknown.
func newNode(id int32, kind view.Kind, addr string, state view.State) view.Node {
	return view.Node{ID: id, Kind: kind, Listener: addr, State: state, Epoch: -1, LeaderID: view.NoLeader, VotedID: -1,
		LogEndOffset: -1, HighWatermark: -1, LogStartOffset: -1, FetchDeadlineTimestamp: -1}
}
