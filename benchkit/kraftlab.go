package benchkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage"
)

// benchClusterID is the cluster ID of every benchmark quorum.
const benchClusterID = "kraftlab-bench"

// startTimeout bounds Start's wait for a stable leader.
const startTimeout = 30 * time.Second

var errKraftlabNotStarted = errors.New("kraftlab: not started")

// KraftlabFactories are kraftlab's systems: "kraftlab" with Kafka's quorum
// timing except controller.quorum.append.linger.ms = 0, and the optional
// "kraftlab-linger" with all of Kafka's defaults, linger 25 ms included.
//
// Linger 0 is the setting comparable with the peers: hashicorp/raft and etcd
// raft write whatever proposals queued while the leader was busy, with no
// timer, and so does kraftlab's leader at linger 0 (every append that
// reached its mailbox while it worked, or while no follower's Fetch
// waited, goes into one batch and one fetch).
// Kafka's controller keeps the 25 ms linger on every append: its
// BatchAccumulator drains early only for control records (forceDrain), so
// one writer waits up to 25 ms per record and a closed loop of writers
// commits one batch per linger.
func KraftlabFactories() []Factory {
	kafka, _ := cluster.ProfileSettings(cluster.ProfileKafka)
	noLinger := kafka
	noLinger.AppendLinger = 0
	return []Factory{
		{
			Name:  "kraftlab",
			New:   func() System { return NewKraftlab("kraftlab", noLinger) },
			About: "replication/quorum, Kafka's quorum timing, controller.quorum.append.linger.ms=0 (batches what queues while the leader works or no Fetch waits)",
		},
		{
			Name:     "kraftlab-push",
			New:      func() System { return NewKraftlab("kraftlab-push", pushOf(noLinger)) },
			About:    "replication/quorum as kraftlab, replicating by push (classic Raft: the leader sends AppendEntries; kraftlab.quorum.replication=push)",
			Optional: true,
		},
		{
			Name:     "kraftlab-linger",
			New:      func() System { return NewKraftlab("kraftlab-linger", kafka) },
			About:    "replication/quorum with all of Kafka's defaults, controller.quorum.append.linger.ms=25",
			Optional: true,
		},
	}
}

// pushOf is t replicating by push.
func pushOf(t server.Settings) server.Settings {
	t.Replication = raft.Push
	return t
}

// Kraftlab is kraftlab's own quorum as a System: three quorum.Nodes, voters
// 1, 2 and 3, each listening on 127.0.0.1 and keeping its log in its own
// folder. Flush never writes the log without fsync (storage.FlushNever);
// flush always fsyncs before a voter's log end offset counts
// (storage.FlushAlways). Propose appends to the current leader and waits
// until its high watermark covers the record; if the leadership moves
// first, it retries on the new leader.
type Kraftlab struct {
	name     string
	settings server.Settings
	// voters is the quorum's size; 0 means DefaultVoters.
	voters int
	// observers is how many brokers, 101 up, observe the quorum, as a
	// playground's brokers do.
	observers int
	// counters count every node's traffic; see Wire.
	counters *wire.Counters
	// onEvent, if set before Start, receives every node's events.
	onEvent func(quorum.Event)

	group *server.Group

	// records caches the metadata record Propose writes for a payload
	// size.
	records sync.Map // int → []byte
	leader  atomic.Pointer[server.Server]
	findMu  sync.Mutex // one goroutine at a time looks for a new leader
	closed  chan struct{}
	closing sync.Once
	err     error
}

// NewKraftlab returns an unstarted Kraftlab whose voters run with t; Start
// sets its flush policy.
func NewKraftlab(name string, t server.Settings) *Kraftlab {
	return &Kraftlab{name: name, settings: t, group: server.NewGroup(), counters: wire.NewCounters(), closed: make(chan struct{})}
}

// NewKraftlabObserved is NewKraftlab with observers brokers, IDs 101 up,
// observing the quorum as a playground's brokers do: each a whole broker
// (it registers and heartbeats), whose metadata log the leader replicates
// without counting it toward commit.
func NewKraftlabObserved(name string, t server.Settings, observers int) *Kraftlab {
	k := NewKraftlab(name, t)
	k.observers = observers
	return k
}

// voterIDs are the quorum's voters, 1..voters.
func (k *Kraftlab) voterIDs() []int32 {
	n := k.voters
	if n == 0 {
		n = DefaultVoters
	}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i + 1)
	}
	return ids
}

// Name implements System.
func (k *Kraftlab) Name() string { return k.name }

// firstObserverID is the first observer's node ID, as a playground's
// first broker's.
const firstObserverID int32 = 101

// DefaultVoters is the size of a benchmark quorum.
const DefaultVoters = 3

// Start implements System.
func (k *Kraftlab) Start(dir string, durable bool) error {
	flush := storage.FlushNever
	if durable {
		flush = storage.FlushAlways
	}
	voters := k.voterIDs()
	ids := slices.Clone(voters)
	for i := range k.observers {
		ids = append(ids, firstObserverID+int32(i))
	}
	for _, id := range ids {
		st := k.settings
		st.Flush = flush
		cfg, err := st.NodeConfig(id, voters, benchClusterID, dir)
		if err == nil {
			cfg.Raft.OnEvent = k.onEvent
			cfg.Raft.Counters = k.counters
			_, err = k.group.Add(cfg)
		}
		if err != nil {
			k.Close()
			return fmt.Errorf("%s: node %d: %w", k.name, id, err)
		}
	}
	// Each node starts under its own pprof label, so that a CPU profile
	// can tell the leader's share (nodecpu.go).
	for _, s := range k.group.Servers() {
		if err := startLabelled(context.Background(), s.ID(), func(ctx context.Context) error { return k.group.Start(ctx, s) }); err != nil {
			k.Close()
			return fmt.Errorf("%s: %w", k.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := k.waitStable(ctx); err != nil {
		k.Close()
		return fmt.Errorf("%s: no stable leader within %v: %w", k.name, startTimeout, err)
	}
	return nil
}

// stableLeader returns the leader if every voter runs and names it in the
// same epoch, and it accepts appends and has committed in its epoch; else
// nil.
func (k *Kraftlab) stableLeader() (*server.Server, quorum.Status) {
	var leader *server.Server
	var lst quorum.Status
	sts := make([]quorum.Status, len(k.group.Servers()))
	for i, n := range k.group.Servers() {
		sts[i] = n.Raft().Status()
		if sts[i].Writable {
			leader, lst = n, sts[i]
		}
	}
	if leader == nil || lst.HighWatermark < 0 {
		return nil, lst
	}
	for _, st := range sts {
		if !st.Running() || st.LeaderID != lst.NodeID || st.Epoch != lst.Epoch || st.HighWatermark < 0 {
			return nil, lst
		}
	}
	return leader, lst
}

// waitStable waits until every voter runs and agrees on a leader that has
// committed in its epoch, and every follower's log reaches the high
// watermark the leader had when they began agreeing.
func (k *Kraftlab) waitStable(ctx context.Context) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var target int64 = -1
	var epoch int32 = -1
	for {
		l, lst := k.stableLeader()
		switch {
		case l == nil:
			target = -1
		case target < 0 || lst.Epoch != epoch:
			target, epoch = lst.HighWatermark, lst.Epoch
		default:
			caught := true
			for _, n := range k.group.Servers() {
				if n.Raft().Status().LogEndOffset < target {
					caught = false
				}
			}
			if caught {
				k.leader.Store(l)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-k.closed:
			return errors.New("closed")
		case <-tick.C:
		}
	}
}

// Propose implements System. The metadata log holds metadata records
// only, which every node's loader decodes and applies: the payload is
// written as a load record (cluster.LoadRecords) of its size, so the
// bytes on the log are what the workload asks for, as they are for the
// other systems; a payload below cluster.MinLoadRecordBytes becomes a
// record of that size.
func (k *Kraftlab) Propose(ctx context.Context, payload []byte) error {
	rec, err := k.record(len(payload))
	if err != nil {
		return fmt.Errorf("%s: %w", k.name, err)
	}
	for {
		l := k.leader.Load()
		if l == nil {
			return errKraftlabNotStarted
		}
		q := l.Raft()
		_, err := q.Append(q.Status().Epoch, [][]byte{rec}).Wait(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || k.isClosed() ||
			!(errors.Is(err, quorum.ErrNotLeader) || errors.Is(err, quorum.ErrNotRunning)) {
			return fmt.Errorf("%s: %w", k.name, err)
		}
		// The leadership moved before the record committed: its fate is
		// unknown, as with Kafka's NOT_LEADER_OR_FOLLOWER, and a client
		// resends it to the new leader.
		if err := k.findLeader(ctx, l); err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
	}
}

// record returns the metadata record Propose writes for a payload of size
// bytes; the node keeps it until written, so it is never changed.
func (k *Kraftlab) record(size int) ([]byte, error) {
	size = max(size, cluster.MinLoadRecordBytes)
	if r, ok := k.records.Load(size); ok {
		return r.([]byte), nil
	}
	recs, err := cluster.LoadRecords(0, 1, size)
	if err != nil {
		return nil, err
	}
	k.records.Store(size, recs[0])
	return recs[0], nil
}

// findLeader waits for a writable leader other than the one that failed,
// unless another caller found one already.
func (k *Kraftlab) findLeader(ctx context.Context, failed *server.Server) error {
	k.findMu.Lock()
	defer k.findMu.Unlock()
	if k.leader.Load() != failed {
		return nil
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		for _, n := range k.group.Servers() {
			if n != failed && n.Raft().Status().Writable {
				k.leader.Store(n)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-k.closed:
			return errors.New("closed")
		case <-tick.C:
		}
		// The same node may lead again, in a later epoch; checked only
		// after a tick, since its status may not yet show the loss.
		if failed.Raft().Status().Writable {
			return nil
		}
	}
}

// Replication is how the quorum replicates.
func (k *Kraftlab) Replication() raft.Replication { return k.settings.Replication }

// SetStamper times every message of every node (wire.Stamper), or stops
// (nil); see legs.go.
func (k *Kraftlab) SetStamper(f wire.Stamper) { k.counters.SetStamper(f) }

// LeaderID is the node that leads now, or -1 before Start.
func (k *Kraftlab) LeaderID() int32 {
	if l := k.leader.Load(); l != nil {
		return l.ID()
	}
	return -1
}

func (k *Kraftlab) isClosed() bool {
	select {
	case <-k.closed:
		return true
	default:
		return false
	}
}

// Close implements System: it kills every voter, which closes its sockets
// and files and fails the appends still waiting.
func (k *Kraftlab) Close() error {
	k.closing.Do(func() {
		close(k.closed)
		k.err = k.group.KillAll()
	})
	return k.err
}

// quorumKeys are the API keys of the metadata quorum's messages: KRaft's
// (Fetch, Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot) and push
// replication's private ones (AppendEntries, InstallSnapshot,
// ObserveQuorum). A bench quorum has no topics, so every Fetch is the
// quorum's; the brokers' registrations and heartbeats are left out.
var quorumKeys = []int16{1, 52, 53, 54, 59, 32000, 32001, 32002}

// Wire implements wireCounter: the requests and responses the quorum's
// nodes have sent so far, each message counted once, by its sender.
func (k *Kraftlab) Wire() wire.Count {
	var c wire.Count
	for _, n := range k.counters.Snapshot().Nodes {
		for _, f := range []wire.Flow{n.RequestsSent, n.ResponsesSent} {
			for _, key := range quorumKeys {
				c.Messages += f[key].Messages
				c.Bytes += f[key].Bytes
			}
		}
	}
	return c
}
