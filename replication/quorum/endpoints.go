package quorum

import (
	"net"
	"strconv"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerListener is the name of the listener the voters serve the
// quorum on, as Kafka's controller.listener.names usually calls it.
const controllerListener = "CONTROLLER"

// addEndpoints fills a leader's DescribeQuorum answer (v2+) with every
// voter's listeners: those its VotersRecord names, as Kafka answers, or,
// for a voter with none (a static quorum's, or one bootstrapped without
// them), the address the network layer knows. Kafka's tools print them as
// "CONTROLLER://host:port".
func (in *instance) addEndpoints(resp *kmsg.DescribeQuorumResponse) {
	if resp.Version < 2 || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return
	}
	p := &resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return
	}
	voters := in.raft.Voters()
	for _, v := range p.CurrentVoters {
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = v.ReplicaID
		if set, ok := voters.Voter(v.ReplicaID); ok && len(set.Endpoints) > 0 {
			for _, e := range set.Endpoints {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = e.Name, e.Host, e.Port
				node.Listeners = append(node.Listeners, l)
			}
			resp.Nodes = append(resp.Nodes, node)
			continue
		}
		addr, ok := in.cfg.Peers(v.ReplicaID)
		if !ok {
			continue
		}
		e, ok := EndpointOf(addr)
		if !ok {
			continue
		}
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = e.Name, e.Host, e.Port
		node.Listeners = []kmsg.DescribeQuorumResponseNodeListener{l}
		resp.Nodes = append(resp.Nodes, node)
	}
}

// EndpointOf is the controller listener at addr (host:port), as a node
// names it when it asks to become a voter (AddRaftVoter's Listeners).
func EndpointOf(addr string) (raft.Endpoint, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return raft.Endpoint{}, false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return raft.Endpoint{}, false
	}
	return raft.Endpoint{Name: controllerListener, Host: host, Port: uint16(n)}, true
}

// voterAddr is the address of voter id's default listener in the node's
// voter set.
func (in *instance) voterAddr(id int32) (string, bool) {
	v, ok := in.raft.Voters().Voter(id)
	if !ok || len(v.Endpoints) == 0 {
		return "", false
	}
	e := v.Endpoints[0]
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), true
}
