package quorum

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// updateRaftVoterAPI is UpdateRaftVoter (KIP-853), which a voter sends
// its leader when the voter set's entry for it is not what it is: raft
// sends and answers it (raft.Node.SetListeners). Kafka's controller serves
// it on its controller listener and authorizes CLUSTER_ACTION, so it is
// for members only, as Fetch is.
var updateRaftVoterAPI = wire.APIRange{Key: kmsg.UpdateRaftVoter.Int16(), MinVersion: 0, MaxVersion: raft.UpdateRaftVoterVersion, MembersOnly: true}

// SetListener tells the node the address its server listens at, once it
// is bound: a voter names it as its CONTROLLER listener in the voter set,
// sending UpdateRaftVoter when the entry differs (a dynamic quorum's
// initial voters are formatted without listeners, and a node may come
// back on another port). Later incarnations start knowing it.
func (n *Node) SetListener(addr string) {
	e, ok := EndpointOf(addr)
	if !ok {
		return
	}
	eps := []raft.Endpoint{e}
	n.mu.Lock()
	n.listeners = eps
	in := n.inst
	n.mu.Unlock()
	if in == nil {
		return
	}
	in.box.push(item{fn: func(in *instance, now time.Time, gone error) {
		if gone != nil {
			return
		}
		if err := in.check(in.raft.SetListeners(now, eps)); err != nil {
			in.broken = err
		}
	}})
}
