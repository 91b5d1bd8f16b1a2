package quorum

import (
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerListener is the name of the listener the voters serve the
// quorum on, as Kafka's controller.listener.names usually calls it.
const controllerListener = "CONTROLLER"

// addEndpoints fills a leader's DescribeQuorum answer (v2+) with every
// voter's endpoint: the state machine knows ids, the network layer knows
// addresses. Kafka's tools print them as "CONTROLLER://host:port".
func (in *instance) addEndpoints(resp *kmsg.DescribeQuorumResponse) {
	if resp.Version < 2 || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return
	}
	p := &resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return
	}
	for _, v := range p.CurrentVoters {
		addr, ok := in.cfg.Peers(v.ReplicaID)
		if !ok {
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			continue
		}
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = v.ReplicaID
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = controllerListener, host, uint16(n)
		node.Listeners = []kmsg.DescribeQuorumResponseNodeListener{l}
		resp.Nodes = append(resp.Nodes, node)
	}
}
