package metasim

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
	"github.com/kraftlab/kraftlab/storage"
)

// Options shapes a simulated cluster.
type Options struct {
	// Seed decides the run.
	Seed uint64
	// Brokers is how many brokers run, 1 to 3; 0 means 3.
	Brokers int
	// Replication is the metadata quorum's replication mode.
	Replication raft.Replication
	// Raft is the quorum's configuration (its timeouts); the zero value
	// is raftsim's, Kafka's simulation test's.
	Raft raft.Config
	// SessionTimeout is broker.session.timeout.ms; 0 means 3s.
	SessionTimeout time.Duration
	// HeartbeatInterval is broker.heartbeat.interval.ms; 0 means 500ms.
	HeartbeatInterval time.Duration
	// EligibleLeaderReplicas bootstraps the cluster with KIP-966 on.
	EligibleLeaderReplicas bool
	// UncleanLeaderElection turns unclean.leader.election.enable on, tried
	// every 2s.
	UncleanLeaderElection bool
	// AutoLeaderRebalance turns auto.leader.rebalance.enable on, checked
	// every 5s.
	AutoLeaderRebalance bool
	// TraceLines keeps the last lines of the trace for error messages.
	TraceLines int
	// Logger receives the controllers' logs; nil discards them.
	Logger *slog.Logger
	// Transcript keeps every line the metadata layer traces and the
	// faults (not the quorum's messages), for Transcript; without it the
	// last TraceLines are kept.
	Transcript bool
	// Endpoints are more addresses on the network beside the clients'
	// (the whole-cluster simulation's producer).
	Endpoints []int32
	// Check is an invariant of a layer above, checked after every event
	// with metasim's own.
	Check func() error
	// NoModelledISR turns off the partition leaders' modelled ISR
	// changes, for a data plane to be attached (AttachDataPlane).
	NoModelledISR bool
	// OnRaftEvent, if set, hears every change each node's raft state
	// machine reports (raft.Node.TakeEvents), as the playground's event
	// log tells them.
	OnRaftEvent func(id int32, ev raft.Event, st raft.Status)
}

// Addresses on the simulated network: controllers 1-3 (the voters),
// brokers from 101 (observers), clients from 200.
const (
	controllers        = 3
	firstBroker  int32 = 101
	firstClient  int32 = 200
	clients            = 2
	clusterID          = "kraftlab-metasim"
	requestLimit       = 2 * time.Second
)

// Sim is a simulated cluster: the quorum of raftsim with the metadata
// layer on top.
type Sim struct {
	opts       Options
	rc         *raftsim.Cluster
	members    map[int32]*member
	brokers    map[int32]*broker
	clients    []*client
	client     *client // the first, for scenarios
	ref        *reference
	active     map[int32]int32 // epoch -> the controller active in it
	msgs       uint64
	transcript []string
	// cleanShutdown holds each broker's clean shutdown file: the epoch it
	// shut down in after a controlled shutdown.
	cleanShutdown map[int32]int64
	// workloadOff stops the clients' random requests.
	workloadOff bool
	// dp is the brokers' data plane, if one is attached.
	dp DataPlane
}

// New builds a cluster with every node running.
func New(opts Options) (*Sim, error) {
	if opts.Brokers == 0 {
		opts.Brokers = 3
	}
	if opts.Brokers < 1 || opts.Brokers > 3 {
		return nil, fmt.Errorf("metasim: %d brokers: want 1-3", opts.Brokers)
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 3 * time.Second
	}
	if opts.HeartbeatInterval == 0 {
		opts.HeartbeatInterval = 500 * time.Millisecond
	}
	s := &Sim{opts: opts, members: map[int32]*member{}, brokers: map[int32]*broker{}, active: map[int32]int32{}, cleanShutdown: map[int32]int64{}}
	s.ref = newReference()
	rc, err := raftsim.New(raftsim.Options{
		Seed:           opts.Seed,
		Voters:         controllers,
		Observers:      opts.Brokers,
		Replication:    opts.Replication,
		Config:         opts.Raft,
		AppendInterval: -1,
		WireCheck:      true,
		TraceLines:     opts.TraceLines,
		Endpoints:      append(clientIDs(), opts.Endpoints...),
		Listener:       s.newMember,
		AfterStep:      s.afterStep,
		Check:          s.check,
	})
	if err != nil {
		return nil, err
	}
	s.rc = rc
	for i := range clients {
		s.clients = append(s.clients, newClient(s, firstClient+int32(i)))
	}
	s.client = s.clients[0]
	// The members were made before rc existed: start their timers now.
	for _, id := range rc.IDs() {
		s.members[id].begin()
	}
	return s, rc.Err()
}

func clientIDs() []int32 {
	ids := make([]int32, clients)
	for i := range ids {
		ids[i] = firstClient + int32(i)
	}
	return ids
}

// Cluster is the quorum underneath, for its faults and clock.
func (s *Sim) Cluster() *raftsim.Cluster { return s.rc }

// TraceHash identifies the run: the same seed gives the same hash.
func (s *Sim) TraceHash() uint64 { return s.rc.TraceHash() }

// Events is the number of events processed.
func (s *Sim) Events() int { return s.rc.Events() }

// Trace is the tail of the trace.
func (s *Sim) Trace() []string { return s.rc.Trace() }

// RunFor runs d of virtual time, stopping at the first violation.
func (s *Sim) RunFor(d time.Duration) error { return s.rc.RunFor(d) }

// RunUntil runs until cond holds or limit passes.
func (s *Sim) RunUntil(cond func() bool, limit time.Duration) error {
	return s.rc.RunUntil(cond, limit)
}

// ActiveController is the controller active in the highest epoch, if any.
func (s *Sim) ActiveController() (id, epoch int32, ok bool) {
	for i := int32(1); i <= controllers; i++ {
		m := s.members[i]
		if m == nil || !m.alive() {
			continue
		}
		if e, act := m.ctl.Active(); act && (!ok || e > epoch) {
			id, epoch, ok = i, e, true
		}
	}
	return id, epoch, ok
}

// Image is a running node's published image, nil while it is down.
func (s *Sim) Image(id int32) *image.MetadataImage {
	if m := s.members[id]; m != nil && m.alive() {
		return m.loader.Image()
	}
	return nil
}

// Committed is the image of the whole committed log so far.
func (s *Sim) Committed() *image.MetadataImage { return s.ref.img }

// record adds a line of the metadata layer to the trace (and its hash).
func (s *Sim) record(format string, args ...any) {
	s.rc.Record(format, args...)
	s.say(format, args...)
}

// say adds a line to the transcript only.
func (s *Sim) say(format string, args ...any) {
	if !s.opts.Transcript && s.opts.TraceLines == 0 {
		return
	}
	if !s.opts.Transcript && len(s.transcript) >= s.opts.TraceLines {
		s.transcript = s.transcript[1:]
	}
	s.transcript = append(s.transcript, fmt.Sprintf("%7.3f ", s.now().Sub(raftsim.Start).Seconds())+fmt.Sprintf(format, args...))
}

// Transcript is what the metadata layer did, line by line: all of it with
// Options.Transcript, else the last TraceLines lines.
func (s *Sim) Transcript() []string { return s.transcript }

func (s *Sim) nextMsg() uint64 { s.msgs++; return s.msgs }

// member is one incarnation of a node: its loader, and on a controller the
// QuorumController and the appends it waits on; on a broker, the broker.
type member struct {
	s      *Sim
	id     int32
	inc    int
	loader *loader.Loader
	ctl    *controller.QuorumController
	// leader is what raft last told the listener.
	leader raft.LeaderAndEpoch
	// commits are the controller's appends not yet committed, in offset
	// order, all of commitEpoch.
	commits     []*pendingAppend
	commitEpoch int32
	// queue holds the loader's calls not yet run.
	queue []func()
	// dirty: something was posted to the controller since its last Step.
	dirty bool
	// checked is the last image the invariants compared.
	checked *image.MetadataImage
}

func (s *Sim) newMember(id int32, inc int) raft.Listener {
	m := &member{s: s, id: id, inc: inc, leader: raft.LeaderAndEpoch{LeaderID: -1, Epoch: -1}}
	var pubs []loader.Publisher
	if id <= controllers {
		r := rand.New(rand.NewPCG(s.opts.Seed^uint64(id)<<40, uint64(inc)))
		elr := int16(0)
		if s.opts.EligibleLeaderReplicas {
			elr = 1
		}
		ctl, err := controller.NewManual(controller.Config{
			NodeID:                        id,
			ClusterID:                     clusterID,
			SessionTimeout:                s.opts.SessionTimeout,
			NoOpInterval:                  controller.DefaultNoOpInterval,
			EligibleLeaderReplicasVersion: elr,
			UncleanLeaderElection:         s.opts.UncleanLeaderElection,
			UncleanElectionInterval:       2 * time.Second,
			AutoLeaderRebalance:           s.opts.AutoLeaderRebalance,
			LeaderImbalanceCheckInterval:  5 * time.Second,
			Clock:                         s.now,
			Rand:                          r,
			OnEvent:                       func(ev controller.Event) { s.controllerEvent(id, ev) },
			Logger:                        s.opts.Logger,
		}, m.append)
		if err != nil {
			panic(fmt.Sprintf("metasim: controller %d: %v", id, err)) // the configuration is the package's own
		}
		m.ctl = ctl
		pubs = append(pubs, loader.PublisherFuncs{
			Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
				m.dirty = true
				ctl.HandleCommittedImage(img)
			},
			Leader: func(l raft.LeaderAndEpoch) {
				m.dirty = true
				ctl.HandleLeaderChange(l)
			},
		})
	}
	if id >= firstBroker {
		pubs = append(pubs, s.brokerPublisher(id))
	}
	m.loader = loader.New(loader.Config{NodeID: id, Publishers: pubs, Now: s.now})
	s.members[id] = m
	if s.rc != nil {
		m.begin()
	}
	return m
}

func (s *Sim) now() time.Time {
	if s.rc == nil {
		return raftsim.Start
	}
	return s.rc.Now()
}

// begin starts an incarnation's timers: a controller's loop ticks, a
// broker's heartbeats.
func (m *member) begin() {
	if m.ctl != nil {
		m.s.record("controller %d starts (incarnation %d)", m.id, m.inc)
		m.tick()
		return
	}
	b := newBroker(m)
	m.s.brokers[m.id] = b
	b.start()
}

// alive reports whether this incarnation still runs.
func (m *member) alive() bool {
	return m.s.members[m.id] == m && m.s.rc.Node(m.id) != nil && m.s.rc.Incarnation(m.id) == m.inc
}

// tick runs the controller's timers every TickInterval, as its ticker does.
func (m *member) tick() {
	m.s.rc.After(m.ctl.TickInterval(), func() {
		if !m.alive() {
			return
		}
		m.dirty = true
		m.s.rc.Poke(m.id)
		m.tick()
	})
}

// afterStep runs after every call into a node: the controller runs what
// was posted to it, and appends whose leadership ended fail, as
// quorum.Node fails them.
func (s *Sim) afterStep(id int32, n *raft.Node) {
	if s.opts.OnRaftEvent != nil {
		if evs := n.TakeEvents(); len(evs) > 0 {
			st := n.Status()
			for _, ev := range evs {
				s.opts.OnRaftEvent(id, ev, st)
			}
		}
	}
	if s.rc == nil {
		return // still building: the first ticks step the controllers
	}
	m := s.members[id]
	if m == nil || m.ctl == nil || !m.alive() {
		return
	}
	if len(m.commits) > 0 {
		if st := n.Summary(); st.Role != raft.Leader || st.Epoch != m.commitEpoch {
			m.failCommits()
		}
	}
	for i := 0; m.dirty; i++ {
		if i == 100 {
			s.rc.Fail(fmt.Errorf("controller %d: still busy after 100 steps", id))
			return
		}
		m.dirty = false
		m.ctl.Step()
	}
}

var errNotLeader = errors.New("not the leader")

// pendingAppend is a controller's append in flight.
type pendingAppend struct {
	done        chan struct{}
	err         error
	first, last int64
}

func (p *pendingAppend) Done() <-chan struct{}        { return p.done }
func (p *pendingAppend) Err() error                   { return p.err }
func (p *pendingAppend) Offsets() (first, last int64) { return p.first, p.last }

func (p *pendingAppend) finish(err error) {
	p.err = err
	close(p.done)
}

// append is the controller's AppendFunc: records go to the raft node at
// once, and commit when the listener applies past them.
func (m *member) append(epoch int32, recs [][]byte) controller.PendingAppend {
	p := &pendingAppend{done: make(chan struct{}), first: -1, last: -1}
	fail := func(err error) controller.PendingAppend {
		p.finish(err)
		m.ctl.CommitsDone()
		m.dirty = true
		return p
	}
	n := m.s.rc.Node(m.id)
	if n == nil || m.leader.LeaderID != m.id || m.leader.Epoch != epoch {
		return fail(fmt.Errorf("append to node %d in epoch %d: %w", m.id, epoch, errNotLeader))
	}
	last, err := n.Append(m.s.now(), epoch, recs)
	if err != nil {
		return fail(err)
	}
	if len(m.commits) > 0 && m.commitEpoch != epoch {
		m.failCommits()
	}
	m.commitEpoch = epoch
	p.first, p.last = last-int64(len(recs))+1, last
	m.commits = append(m.commits, p)
	return p
}

func (m *member) failCommits() {
	for _, p := range m.commits {
		p.finish(fmt.Errorf("node %d lost the leadership of epoch %d: %w", m.id, m.commitEpoch, errNotLeader))
	}
	m.commits = nil
	m.ctl.CommitsDone()
	m.dirty = true
}

// HandleCommit implements raft.Listener: the batches join the reference
// log and the appends below them commit at once, as quorum.Node completes
// them on its loop; the loader applies them a little later, as
// quorum.NewListenerQueue hands them to it on a goroutine of its own, so
// the controller may hear that its records committed before the image
// that holds them.
func (m *member) HandleCommit(batches []storage.Batch) {
	if len(batches) == 0 {
		return
	}
	if err := m.s.ref.observe(m.id, batches); err != nil {
		m.s.rc.Fail(err)
		return
	}
	copied := storage.CopyBatches(batches)
	m.enqueue(func() { m.loader.HandleCommit(copied) })
	next := batches[len(batches)-1].NextOffset()
	i := 0
	for i < len(m.commits) && m.commits[i].last < next {
		m.commits[i].finish(nil)
		i++
	}
	if i > 0 {
		m.commits = m.commits[i:]
		m.ctl.CommitsDone()
		m.dirty = true
	}
}

// HandleLoadSnapshot implements raft.Listener: as quorum's listener queue
// does, it waits for what was queued, then the loader replaces its image
// with the snapshot's, which the invariants compare with the replay of
// the log up to the snapshot.
func (m *member) HandleLoadSnapshot(snap raft.Snapshot) {
	m.s.record("node %d loads snapshot %v", m.id, snap.ID)
	m.flushQueue()
	m.loader.HandleLoadSnapshot(snap)
	m.dirty = true
}

// HandleLeaderChange implements raft.Listener: appends check the leader
// at once; the loader hears in order with the commits.
func (m *member) HandleLeaderChange(l raft.LeaderAndEpoch) {
	m.leader = l
	m.enqueue(func() { m.loader.HandleLeaderChange(l) })
}

// enqueue queues a call for the loader, which runs 0-2ms later with
// everything queued before it.
func (m *member) enqueue(call func()) {
	m.queue = append(m.queue, call)
	if len(m.queue) > 1 {
		return
	}
	d := time.Duration(m.s.rc.Rand().Int64N(int64(2 * time.Millisecond)))
	m.s.rc.After(d, func() {
		if !m.alive() || len(m.queue) == 0 {
			return
		}
		m.flushQueue()
		m.s.rc.Poke(m.id)
	})
}

// flushQueue runs the loader's queued calls.
func (m *member) flushQueue() {
	for len(m.queue) > 0 {
		call := m.queue[0]
		m.queue = m.queue[1:]
		call()
	}
	m.dirty = true
}

// Snapshot makes a running node snapshot its loader's image, as Kafka's
// SnapshotGenerator does, if that moves past its log start; its log may
// then be deleted below it, so that a node further behind catches up from
// the snapshot.
func (s *Sim) Snapshot(id int32) bool {
	m, n := s.members[id], s.rc.Node(id)
	if m == nil || n == nil || !m.alive() {
		return false
	}
	m.flushQueue() // as the listener queue's SnapshotRecords waits
	end, recs, err := m.loader.SnapshotRecords()
	if err != nil {
		s.rc.Fail(fmt.Errorf("node %d: %w", id, err))
		return false
	}
	st := n.Summary()
	if end <= st.LogStartOffset || end > st.HighWatermark || end != st.AppliedOffset {
		return false
	}
	s.record("snapshot node %d at %d", id, end)
	if err := n.CreateSnapshot(s.now(), end, recs); err != nil {
		s.rc.Fail(fmt.Errorf("node %d: %w", id, err))
		return false
	}
	s.rc.Poke(id)
	return true
}

// controllerEvent traces what a controller reports.
func (s *Sim) controllerEvent(id int32, ev controller.Event) {
	switch ev.Kind {
	case controller.EventPartitionChanged:
		s.record("controller %d: %v %s-%d leader %d isr %v (%s)", id, ev.Kind, ev.Topic, ev.Partition, ev.Leader, ev.Isr, ev.Reason)
	case controller.EventTopicCreated, controller.EventTopicDeleted:
		s.record("controller %d: %v %s (%d partitions)", id, ev.Kind, ev.Topic, ev.Partitions)
	case controller.EventActivated, controller.EventDeactivated:
		s.record("controller %d: %v in epoch %d %s", id, ev.Kind, ev.Epoch, ev.Reason)
	default:
		s.record("controller %d: %v broker %d epoch %d %s", id, ev.Kind, ev.Broker, ev.BrokerEpoch, ev.Reason)
	}
}
