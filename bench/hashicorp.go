package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// hashicorpSystem runs github.com/hashicorp/raft with its own TCP transport
// and default timeouts, as its users run it. Flush never keeps the log in
// raft.InmemStore; flush always uses raft-boltdb, whose every log write
// commits a bbolt transaction (an fdatasync). The FSM does nothing, so
// Apply's future resolves as soon as the leader sees the entry committed.
type hashicorpSystem struct {
	nodes  []*raft.Raft
	bolts  []*raftboltdb.BoltStore
	trans  []*raft.NetworkTransport
	leader atomic.Pointer[raft.Raft]
	once   sync.Once
	err    error
}

// Name implements System.
func (s *hashicorpSystem) Name() string { return "hashicorp" }

// Start implements System.
func (s *hashicorpSystem) Start(dir string, durable bool) error {
	const voters = 3
	logger := hclog.NewNullLogger()
	for i := 0; i < voters; i++ {
		t, err := raft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 3, 10*time.Second, logger)
		if err != nil {
			s.Close()
			return fmt.Errorf("hashicorp: listen for voter %d: %w", i+1, err)
		}
		s.trans = append(s.trans, t)
	}
	var servers []raft.Server
	for i, t := range s.trans {
		servers = append(servers, raft.Server{
			Suffrage: raft.Voter,
			ID:       raft.ServerID(fmt.Sprint(i + 1)),
			Address:  t.LocalAddr(),
		})
	}
	for i, t := range s.trans {
		conf := raft.DefaultConfig()
		conf.LocalID = servers[i].ID
		conf.Logger = logger
		var logs raft.LogStore
		var stable raft.StableStore
		if durable {
			nodeDir := filepath.Join(dir, fmt.Sprintf("node%d", i+1))
			if err := os.MkdirAll(nodeDir, 0o755); err != nil {
				s.Close()
				return fmt.Errorf("hashicorp: %w", err)
			}
			b, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(nodeDir, "raft.db")})
			if err != nil {
				s.Close()
				return fmt.Errorf("hashicorp: open bolt store for voter %d: %w", i+1, err)
			}
			s.bolts = append(s.bolts, b)
			logs, stable = b, b
		} else {
			m := raft.NewInmemStore()
			logs, stable = m, m
		}
		snaps := raft.NewDiscardSnapshotStore()
		if err := raft.BootstrapCluster(conf, logs, stable, snaps, t, raft.Configuration{Servers: servers}); err != nil {
			s.Close()
			return fmt.Errorf("hashicorp: bootstrap voter %d: %w", i+1, err)
		}
		r, err := raft.NewRaft(conf, nopFSM{}, logs, stable, snaps, t)
		if err != nil {
			s.Close()
			return fmt.Errorf("hashicorp: start voter %d: %w", i+1, err)
		}
		s.nodes = append(s.nodes, r)
	}
	if err := s.waitStableLeader(30 * time.Second); err != nil {
		s.Close()
		return err
	}
	return nil
}

// waitStableLeader polls until every voter names the same leader and that
// leader has committed a barrier in its term.
func (s *hashicorpSystem) waitStableLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if l := s.agreedLeader(); l != nil {
			if err := l.Barrier(time.Until(deadline)).Error(); err == nil && s.agreedLeader() == l {
				s.leader.Store(l)
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("hashicorp: no stable leader within %v", timeout)
}

// agreedLeader returns the leader if all voters agree on it, else nil.
func (s *hashicorpSystem) agreedLeader() *raft.Raft {
	var id raft.ServerID
	for i, n := range s.nodes {
		_, lid := n.LeaderWithID()
		if lid == "" || (i > 0 && lid != id) {
			return nil
		}
		id = lid
	}
	for _, n := range s.nodes {
		if n.State() == raft.Leader {
			return n
		}
	}
	return nil
}

// Propose implements System. hashicorp's ApplyFuture cannot be cancelled, so
// ctx is checked only before the entry is handed to the leader; Close
// resolves a future that would otherwise wait forever.
func (s *hashicorpSystem) Propose(ctx context.Context, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l := s.leader.Load()
	if l == nil {
		return errors.New("hashicorp: not started")
	}
	err := l.Apply(payload, 0).Error()
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
		// Send later proposals to whoever leads now; this one failed.
		for _, n := range s.nodes {
			if n.State() == raft.Leader {
				s.leader.Store(n)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("hashicorp: apply: %w", err)
	}
	return nil
}

// Close implements System.
func (s *hashicorpSystem) Close() error {
	s.once.Do(func() {
		var errs []error
		for _, n := range s.nodes {
			errs = append(errs, n.Shutdown().Error())
		}
		// NewRaft closes its transport on Shutdown; close the ones that
		// never got a Raft.
		for _, t := range s.trans[len(s.nodes):] {
			errs = append(errs, t.Close())
		}
		// Close stops the listeners only: a node's pooled connections to
		// its peers stay open, and so does each peer's goroutine reading
		// one, until CloseStreams closes them.
		for _, t := range s.trans {
			t.CloseStreams()
		}
		for _, b := range s.bolts {
			errs = append(errs, b.Close())
		}
		s.err = errors.Join(errs...)
	})
	return s.err
}

// nopFSM applies nothing: the benchmark measures the log, not a state
// machine.
type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nopSnapshot{}, nil }
func (nopFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type nopSnapshot struct{}

func (nopSnapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (nopSnapshot) Release()                             {}
