package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// forwarder is a broker's part that sends DescribeQuorum on to the quorum's
// leader and relays the answer, as Kafka's brokers forward it to the active
// controller (KafkaApis.handleDescribeQuorumRequest). It goes through the
// playground's links like any message between nodes, so a broker cut off
// from the leader cannot answer, and authenticates as a member first.
type forwarder struct {
	s *Server

	mu      sync.Mutex
	clients map[int32]*wire.Client
	closed  bool
}

func newForwarder(s *Server) *forwarder {
	return &forwarder{s: s, clients: make(map[int32]*wire.Client)}
}

func (f *forwarder) register(mux *wire.Mux) error {
	api := wire.APIRange{Key: kmsg.DescribeQuorum.Int16(), MaxVersion: raft.DescribeQuorumVersion}
	if err := mux.Handle(api, wire.HandlerFunc(f.serve)); err != nil {
		return fmt.Errorf("node %d: %w", f.s.id, err)
	}
	return nil
}

// serve forwards one request; the answer on failure is Kafka's for a
// forwarded request that found no controller in time, REQUEST_TIMED_OUT.
func (f *forwarder) serve(req *wire.Request) {
	fail := func() {
		resp := kmsg.NewPtrDescribeQuorumResponse()
		resp.ErrorCode = kerr.RequestTimedOut.Code
		req.Respond(resp)
	}
	leader := f.s.raft.Status().LeaderID
	c, err := f.client(leader)
	if err != nil {
		fail()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.s.cfg.Raft.Raft.RequestTimeout)
	err = c.Send(ctx, req.Body, func(resp kmsg.Response, err error) {
		cancel()
		if err != nil {
			fail()
			return
		}
		req.Respond(resp)
	})
	if err != nil {
		cancel()
		fail()
	}
}

func (f *forwarder) client(leader int32) (*wire.Client, error) {
	if leader < 0 {
		return nil, fmt.Errorf("node %d knows no leader", f.s.id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, wire.ErrClosed
	}
	if c := f.clients[leader]; c != nil {
		return c, nil
	}
	addr, ok := f.s.cfg.Raft.Peers(leader)
	if !ok {
		return nil, fmt.Errorf("node %d: no address known for node %d", f.s.id, leader)
	}
	c, err := wire.NewClient(wire.ClientConfig{
		From:        f.s.id,
		To:          leader,
		Addr:        addr,
		Links:       f.s.cfg.Raft.Links,
		Counters:    f.s.cfg.Raft.Counters,
		DialTimeout: f.s.cfg.Raft.Raft.RequestTimeout,
		SASL:        wire.MemberMechanism(f.s.cfg.Raft.Secret),
		Logger:      f.s.log,
	})
	if err != nil {
		return nil, err
	}
	f.clients[leader] = c
	return c, nil
}

func (f *forwarder) close() {
	f.mu.Lock()
	f.closed = true
	clients := f.clients
	f.clients = nil
	f.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
}
