package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// etcdTick is the logical clock of every etcd voter: with ElectionTick 10
// and HeartbeatTick 1 a leader heartbeats every 10 ms and followers time out
// after 100-200 ms.
const etcdTick = 10 * time.Millisecond

var (
	errEtcdStopped       = errors.New("etcd: voter stopped")
	errEtcdLeaderChanged = errors.New("etcd: leadership changed before the entry committed")
)

// etcdSystem runs go.etcd.io/raft/v3 with the loop its README prescribes:
// persist the Ready's entries and hard state, send its messages, act on its
// committed entries, Advance. Flush never keeps the log in MemoryStorage only;
// flush always also appends it to a per-voter WAL (see wal.go) synced before
// the messages go out, so a voter's acknowledgement means the entries are on
// disk.
type etcdSystem struct {
	nodes  []*etcdNode
	leader atomic.Uint64 // id of the voter that last became leader
	nextID atomic.Uint64
	once   sync.Once
	err    error
}

// etcdNode is one voter: its raft.Node, storage, transport and the
// proposals waiting on it.
type etcdNode struct {
	sys     *etcdSystem
	id      uint64
	node    raft.Node
	storage *raft.MemoryStorage
	wal     *wal
	trans   *transport
	stop    chan struct{}
	done    chan struct{}
	running bool  // the loop was started; set before it starts
	err     error // why the loop ended early; read after done

	mu       sync.Mutex
	waiters  map[uint64]chan error
	stopped  bool
	isLeader bool // read and written only by the loop goroutine
}

// Name implements System.
func (s *etcdSystem) Name() string { return "etcd" }

// Start implements System.
func (s *etcdSystem) Start(dir string, durable bool) error {
	const voters = 3
	var peers []raft.Peer
	for i := 1; i <= voters; i++ {
		peers = append(peers, raft.Peer{ID: uint64(i)})
	}
	logger := &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	for _, p := range peers {
		n := &etcdNode{
			sys:     s,
			id:      p.ID,
			storage: raft.NewMemoryStorage(),
			stop:    make(chan struct{}),
			done:    make(chan struct{}),
			waiters: map[uint64]chan error{},
		}
		// The node exists before its transport, so every message the
		// transport delivers has somewhere to go. It does nothing until its
		// loop ticks it.
		n.node = raft.StartNode(&raft.Config{
			ID:              n.id,
			ElectionTick:    10,
			HeartbeatTick:   1,
			Storage:         n.storage,
			MaxSizePerMsg:   1 << 20,
			MaxInflightMsgs: 256,
			CheckQuorum:     true,
			PreVote:         true,
			Logger:          logger,
		}, peers)
		s.nodes = append(s.nodes, n) // from here on Close releases it
		t, err := newTransport(n.id, n.step, n.unreachable)
		if err != nil {
			s.Close()
			return fmt.Errorf("etcd: voter %d: %w", n.id, err)
		}
		n.trans = t
		if durable {
			nodeDir := filepath.Join(dir, fmt.Sprintf("node%d", n.id))
			if err := os.MkdirAll(nodeDir, 0o755); err != nil {
				s.Close()
				return fmt.Errorf("etcd: %w", err)
			}
			w, err := openWAL(filepath.Join(nodeDir, "wal"))
			if err != nil {
				s.Close()
				return fmt.Errorf("etcd: voter %d: %w", n.id, err)
			}
			n.wal = w
		}
	}
	addrs := map[uint64]string{}
	for _, n := range s.nodes {
		addrs[n.id] = n.trans.addr()
	}
	for _, n := range s.nodes {
		n.trans.connect(addrs)
		n.running = true
		go n.run()
	}
	if err := s.waitStableLeader(30 * time.Second); err != nil {
		s.Close()
		return err
	}
	return nil
}

// waitStableLeader polls until all voters name the same leader and an empty
// proposal commits through it.
func (s *etcdSystem) waitStableLeader(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		var lead uint64
		agreed := true
		for _, n := range s.nodes {
			st := n.node.Status()
			if st.Lead == 0 || (lead != 0 && st.Lead != lead) {
				agreed = false
				break
			}
			lead = st.Lead
		}
		if agreed && s.leader.Load() == lead {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			err := s.Propose(pctx, nil)
			pcancel()
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("etcd: no stable leader within %v", timeout)
}

// Propose implements System. The entry's data is an 8-byte proposal id
// followed by payload; the leader's loop finds the id among its committed
// entries and wakes the caller.
func (s *etcdSystem) Propose(ctx context.Context, payload []byte) error {
	lead := s.leader.Load()
	if lead == 0 || int(lead) > len(s.nodes) {
		return errors.New("etcd: no leader")
	}
	n := s.nodes[lead-1]
	id := s.nextID.Add(1)
	data := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint64(data, id)
	copy(data[8:], payload)
	ch := make(chan error, 1)
	if !n.addWaiter(id, ch) {
		return errEtcdStopped
	}
	if err := n.node.Propose(ctx, data); err != nil {
		n.removeWaiter(id)
		return fmt.Errorf("etcd: propose: %w", err)
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		n.removeWaiter(id)
		return ctx.Err()
	}
}

// Close implements System.
func (s *etcdSystem) Close() error {
	s.once.Do(func() {
		var errs []error
		for _, n := range s.nodes {
			if n.running {
				close(n.stop)
				<-n.done
				errs = append(errs, n.err)
			} else {
				n.node.Stop()
			}
		}
		for _, n := range s.nodes {
			if n.trans != nil {
				errs = append(errs, n.trans.close())
			}
			if n.wal != nil {
				errs = append(errs, n.wal.close())
			}
		}
		s.err = errors.Join(errs...)
	})
	return s.err
}

// run is the voter's Ready loop.
func (n *etcdNode) run() {
	defer close(n.done)
	defer n.failWaiters(errEtcdStopped, true)
	defer n.node.Stop()
	ticker := time.NewTicker(etcdTick)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			n.node.Tick()
		case rd := <-n.node.Ready():
			if err := n.handle(rd); err != nil {
				n.err = fmt.Errorf("etcd: voter %d: %w", n.id, err)
				return
			}
			n.node.Advance()
		case <-n.stop:
			return
		}
	}
}

// handle does what one Ready asks, in the order raft requires: persist,
// then send, then apply.
func (n *etcdNode) handle(rd raft.Ready) error {
	if rd.SoftState != nil {
		leader := rd.RaftState == raft.StateLeader
		if leader {
			n.sys.leader.Store(n.id)
		} else if n.isLeader {
			n.failWaiters(errEtcdLeaderChanged, false)
		}
		n.isLeader = leader
	}
	if n.wal != nil {
		if err := n.wal.save(rd.HardState, rd.Entries, rd.MustSync); err != nil {
			return err
		}
	}
	if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
		if err := n.storage.SetHardState(rd.HardState); err != nil {
			return fmt.Errorf("set hard state: %w", err)
		}
	}
	if err := n.storage.Append(rd.Entries); err != nil {
		return fmt.Errorf("append to memory storage: %w", err)
	}
	for _, m := range rd.Messages {
		n.trans.send(m)
	}
	for _, e := range rd.CommittedEntries {
		switch e.GetType() {
		case pb.EntryConfChange:
			var cc pb.ConfChange
			if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
				return fmt.Errorf("decode conf change at index %d: %w", e.GetIndex(), err)
			}
			n.node.ApplyConfChange(&cc)
		case pb.EntryNormal:
			if d := e.GetData(); len(d) >= 8 {
				n.resolve(binary.BigEndian.Uint64(d))
			}
		}
	}
	return nil
}

// step hands a message from the transport to raft.
func (n *etcdNode) step(ctx context.Context, m *pb.Message) {
	// An error here means the node stopped; the transport is closing too.
	_ = n.node.Step(ctx, m)
}

// unreachable tells raft a peer could not be reached, so the leader probes
// it instead of streaming appends into the void.
func (n *etcdNode) unreachable(id uint64) { n.node.ReportUnreachable(id) }

func (n *etcdNode) addWaiter(id uint64, ch chan error) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return false
	}
	n.waiters[id] = ch
	return true
}

func (n *etcdNode) removeWaiter(id uint64) {
	n.mu.Lock()
	delete(n.waiters, id)
	n.mu.Unlock()
}

func (n *etcdNode) resolve(id uint64) {
	n.mu.Lock()
	ch, ok := n.waiters[id]
	delete(n.waiters, id)
	n.mu.Unlock()
	if ok {
		ch <- nil
	}
}

// failWaiters wakes every waiting proposal with err; with final set no new
// proposals are accepted afterwards.
func (n *etcdNode) failWaiters(err error, final bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, ch := range n.waiters {
		ch <- err
		delete(n.waiters, id)
	}
	if final {
		n.stopped = true
	}
}
