package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/replication/quorum"
)

// Group is a set of servers that know each other: the members, by id in
// the order they were added, and the address book their raft clients and
// parts find each other with (Config.Raft.Peers). A member's address is
// recorded when it first starts; a restarted server listens on the same
// one. The playground's engine and the benchmarks build their nodes with
// it. Its members share one cluster clock (Clock). Its methods are safe
// for concurrent use.
type Group struct {
	clock *clock.Clock

	mu    sync.RWMutex
	addrs map[int32]string
	nodes []*Server
	byID  map[int32]*Server
}

// NewGroup returns an empty group.
func NewGroup() *Group {
	return &Group{clock: clock.New(), addrs: map[int32]string{}, byID: map[int32]*Server{}}
}

// Clock is the group's cluster clock, which its members read unless their
// Config names another.
func (g *Group) Clock() *clock.Clock { return g.clock }

// Add makes a member from cfg (New), with the group's address book as its
// peers; cfg.Raft.Peers must be nil.
func (g *Group) Add(cfg Config) (*Server, error) {
	id := cfg.Raft.Raft.NodeID
	if cfg.Raft.Peers != nil {
		return nil, fmt.Errorf("node %d: a group member finds its peers in the group's address book; Raft.Peers must be nil", id)
	}
	g.mu.Lock()
	_, dup := g.byID[id]
	g.mu.Unlock()
	if dup {
		return nil, fmt.Errorf("node %d is in the group already", id)
	}
	cfg.Raft.Peers = g.Peer
	if cfg.Clock == nil && cfg.Raft.Clock == nil {
		cfg.Clock = g.clock
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nodes = append(g.nodes, s)
	g.byID[id] = s
	return s, nil
}

// Peer is member id's listener address, once it has started.
func (g *Group) Peer(id int32) (string, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	a, ok := g.addrs[id]
	return a, ok
}

// Server is member id, or nil.
func (g *Group) Server(id int32) *Server {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.byID[id]
}

// Servers are the members in the order they were added.
func (g *Group) Servers() []*Server {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return append([]*Server(nil), g.nodes...)
}

// Start starts member s and records its address. Its error is the
// server's own, which names the node where it matters.
func (g *Group) Start(ctx context.Context, s *Server) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	g.mu.Lock()
	g.addrs[s.ID()] = s.Addr()
	g.mu.Unlock()
	return nil
}

// StartAll starts every member in order.
func (g *Group) StartAll(ctx context.Context) error {
	for _, s := range g.Servers() {
		if err := g.Start(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// KillAll kills every member at once, as a crash of the whole process:
// what each had acknowledged is flushed under its flush policy. A member
// that does not run (or only waits to start again after a disk fault) is
// killed too, which ends its restarts.
func (g *Group) KillAll() error {
	nodes := g.Servers()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Kill(); err != nil && !errors.Is(err, quorum.ErrNotRunning) {
				errs[i] = fmt.Errorf("kill node %d: %w", s.ID(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
