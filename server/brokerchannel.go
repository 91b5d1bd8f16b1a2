package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerChannel is a broker's member-authenticated connections to the
// other brokers, one wire.Client per broker, dialled on first use at the
// listener the metadata image registers for it; the replica fetchers send
// through it. Like the controller channel it goes through the
// playground's links.
type brokerChannel struct {
	cfg     wire.ClientConfig
	address func(id int32) (string, bool)

	mu      sync.Mutex
	clients map[int32]*brokerClient
	closed  bool
}

type brokerClient struct {
	addr string
	c    *wire.Client
}

func newBrokerChannel(cfg wire.ClientConfig, address func(id int32) (string, bool)) *brokerChannel {
	return &brokerChannel{cfg: cfg, address: address, clients: map[int32]*brokerClient{}}
}

// client returns the connection to broker id, dialling again when the
// broker registered another address (a restart on a new port).
func (ch *brokerChannel) client(id int32) (*wire.Client, error) {
	addr, ok := ch.address(id)
	if !ok {
		return nil, fmt.Errorf("node %d: no listener registered for broker %d", ch.cfg.From, id)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return nil, wire.ErrClosed
	}
	if bc := ch.clients[id]; bc != nil {
		if bc.addr == addr {
			return bc.c, nil
		}
		bc.c.Close()
		delete(ch.clients, id)
	}
	cfg := ch.cfg
	cfg.To, cfg.Addr = id, addr
	c, err := wire.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	ch.clients[id] = &brokerClient{addr: addr, c: c}
	return c, nil
}

// send sends req to broker id and waits for its answer until ctx ends
// (the fetchers' SendFunc).
func (ch *brokerChannel) send(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	c, err := ch.client(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s to broker %d: %w", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp, nil
}

func (ch *brokerChannel) close() {
	ch.mu.Lock()
	ch.closed = true
	clients := ch.clients
	ch.clients = nil
	ch.mu.Unlock()
	for _, bc := range clients {
		bc.c.Close()
	}
}
