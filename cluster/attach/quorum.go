package attach

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic is the metadata log's topic, the one DescribeQuorum
// describes.
const metadataTopic = "__cluster_metadata"

// readBrokers asks the brokers for the cluster's brokers, fenced ones
// included from DescribeCluster v2 (Kafka 4.0) on. DescribeCluster's
// ControllerId from a broker is any live controller, not the active one
// (KIP-919), so it is not used: the quorum's leader is.
func (p *poller) readBrokers(ctx context.Context, r *reading) {
	if p.brokers == nil {
		return
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := p.brokers.Request(ctx, req)
	if err != nil {
		r.fail("DescribeCluster: %v", err)
		return
	}
	dc := resp.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(dc.ErrorCode); err != nil {
		r.fail("DescribeCluster: %v", err)
		return
	}
	r.reached, r.unread[partBrokers] = true, false
	r.v.ClusterID, r.brokers, r.fencedListed = dc.ClusterID, dc.Brokers, dc.Version >= 2
	for _, b := range dc.Brokers {
		r.addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
}

// readControllers asks the controllers themselves, when
// --bootstrap-controller names them: DescribeCluster for their ids and
// addresses (KIP-919), then DescribeQuorum of each. The leader answers
// whole, a follower NOT_LEADER_OR_FOLLOWER alone.
func (p *poller) readControllers(ctx context.Context, r *reading) {
	if len(p.cfg.BootstrapController) == 0 {
		return
	}
	for _, a := range p.cfg.BootstrapController {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2 // controllers
		resp, err := p.ask(ctx, a, req)
		if err == nil {
			dc := resp.(*kmsg.DescribeClusterResponse)
			if err = kerr.ErrorForCode(dc.ErrorCode); err == nil {
				r.reached = true
				if r.v.ClusterID == "" {
					r.v.ClusterID = dc.ClusterID
				}
				for _, b := range dc.Brokers {
					r.ctrls = append(r.ctrls, b.NodeID)
					r.addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
				}
				break
			}
		}
		// Kafka answers a controller's DescribeCluster only with ALTER
		// on the cluster; DescribeQuorum below asks less.
		r.fail("DescribeCluster at controller %s: %v", a, err)
	}
	targets := map[string]int32{} // address → id, -1 when unknown
	for _, id := range r.ctrls {
		targets[r.addrs[id]] = id
	}
	if len(targets) == 0 {
		for _, a := range p.cfg.BootstrapController {
			targets[a] = -1
		}
	}
	type answer struct {
		addr string
		id   int32
		resp *kmsg.DescribeQuorumResponse
		part *kmsg.DescribeQuorumResponseTopicPartition
		at   time.Time
		err  error
	}
	answers := make(chan answer, len(targets))
	var wg sync.WaitGroup
	for addr, id := range targets {
		wg.Go(func() {
			a := answer{addr: addr, id: id}
			resp, err := p.ask(ctx, addr, describeQuorumRequest())
			if a.err = err; err == nil {
				a.resp, a.at = resp.(*kmsg.DescribeQuorumResponse), p.cfg.now()
				a.part, a.err = quorumPartition(a.resp)
			}
			answers <- a
		})
	}
	wg.Wait()
	close(answers)
	var all []answer
	for a := range answers {
		all = append(all, a)
		if a.resp == nil || a.err != nil {
			continue
		}
		// Two may answer as leader (an old one cut off, within its
		// check-quorum time): the higher epoch is the quorum's.
		if r.quorum == nil || a.part.LeaderEpoch > r.quorum.LeaderEpoch {
			r.quorum, r.quorumAt = a.part, a.at
		}
		for id, addr := range nodeAddrs(a.resp) {
			if _, ok := r.addrs[id]; !ok {
				r.addrs[id] = addr
			}
		}
	}
	for _, a := range all {
		id := a.id
		if id < 0 {
			id = idAt(r.addrs, a.addr)
		}
		if a.resp != nil {
			r.reached = true
		}
		if id >= 0 {
			r.direct[id] = a.resp != nil
		}
		if a.err != nil && !errors.Is(a.err, kerr.NotLeaderForPartition) {
			r.fail("DescribeQuorum at controller %s: %v", a.addr, a.err)
		}
	}
	if r.quorum != nil {
		r.unread[partQuorum] = false
	}
}

// idAt is the node whose address is addr, -1 if none is known.
func idAt(addrs map[int32]string, addr string) int32 {
	for id, a := range addrs {
		if a == addr {
			return id
		}
	}
	return -1
}

// readQuorumThroughBrokers asks a broker, which forwards DescribeQuorum
// to the active controller, as kafka-metadata-quorum --bootstrap-server
// does.
func (p *poller) readQuorumThroughBrokers(ctx context.Context, r *reading) {
	resp, err := p.brokers.Request(ctx, describeQuorumRequest())
	if err != nil {
		r.fail("DescribeQuorum: %v", err)
		return
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	part, err := quorumPartition(dq)
	if err != nil {
		r.fail("DescribeQuorum: %v", err)
		return
	}
	r.reached, r.unread[partQuorum] = true, false
	r.quorum, r.quorumAt = part, p.cfg.now()
	for id, addr := range nodeAddrs(dq) {
		if _, ok := r.addrs[id]; !ok {
			r.addrs[id] = addr
		}
	}
}

func describeQuorumRequest() *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = metadataTopic
	t.Partitions = append(t.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, t)
	return req
}

// quorumPartition is the metadata partition of a DescribeQuorum answer,
// or its error.
func quorumPartition(resp *kmsg.DescribeQuorumResponse) (*kmsg.DescribeQuorumResponseTopicPartition, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	// One topic of one partition was asked for: the first is it.
	if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
		return nil, errors.New("DescribeQuorum answered no partition")
	}
	pt := &resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(pt.ErrorCode); err != nil {
		return nil, err
	}
	return pt, nil
}

// nodeAddrs are the first listener of each node DescribeQuorum names
// (v2, Kafka 3.9+).
func nodeAddrs(resp *kmsg.DescribeQuorumResponse) map[int32]string {
	out := map[int32]string{}
	for _, n := range resp.Nodes {
		if len(n.Listeners) > 0 {
			out[n.NodeID] = net.JoinHostPort(n.Listeners[0].Host, strconv.Itoa(int(n.Listeners[0].Port)))
		}
	}
	return out
}
